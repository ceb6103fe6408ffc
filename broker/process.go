package broker

import (
	"cmp"
	"crypto/tls"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/store"
	"github.com/runnelmq/runnel/topicconf"
)

// process is the broker as its doors see it (remotingdoor.Process).
type process struct{ b *Broker }

func (p process) BrokerConfig() map[string]string { return p.b.brokerConfig() }

func (p process) UpdateBrokerConfig(props map[string]string, by string) error {
	return p.b.updateRuntime(props, by)
}

func (p process) RuntimeInfo() map[string]string { return p.b.runtimeInfo() }

// brokerConfig is the configuration in force under RocketMQ's key names
// (GET_BROKER_CONFIG, runnelctl broker config).
func (b *Broker) brokerConfig() map[string]string {
	c := b.Config()
	return map[string]string{
		"brokerPermission":      strconv.Itoa(c.BrokerPermission),
		"timerMaxDelaySec":      formatSeconds(c.TimerMaxDelay),
		"brokerName":            c.BrokerName,
		"brokerClusterName":     c.ClusterName,
		"brokerId":              strconv.FormatInt(c.BrokerID, 10),
		"namesrvAddr":           strings.Join(c.NamesrvAddrs, ";"),
		"listenPort":            portOf(b.Addr()),
		"brokerIP1":             hostOf(b.AdvertisedAddr()),
		"storePathRootDir":      c.StoreDir,
		"flushDiskType":         c.FlushMode.String(),
		"autoCreateTopicEnable": fmt.Sprint(c.AutoCreateTopicEnable),
		"defaultTopicQueueNums": fmt.Sprint(c.DefaultTopicQueueNums),
		"fileReservedTime":      fmt.Sprint(int(c.FileReservedTime.Hours())),
		"maxMessageSize":        fmt.Sprint(c.MaxMessageSize),
		// The store's ratios as it applies them (config.Config's 0 takes
		// them).
		"diskMaxUsedSpaceRatio":       fmt.Sprint(cmp.Or(c.DiskMaxUsedSpaceRatio, store.DefaultDiskMaxUsedSpaceRatio)),
		"diskSpaceCleanForciblyRatio": fmt.Sprint(cmp.Or(c.DiskSpaceCleanForciblyRatio, store.DefaultDiskSpaceCleanForciblyRatio)),
		"diskSpaceWarningLevelRatio":  fmt.Sprint(cmp.Or(c.DiskSpaceWarningLevelRatio, store.DefaultDiskSpaceWarningLevelRatio)),
	}
}

func portOf(addr string) string {
	if i := strings.LastIndexByte(addr, ':'); i >= 0 {
		return addr[i+1:]
	}
	return ""
}

func hostOf(addr string) string {
	if i := strings.LastIndexByte(addr, ':'); i >= 0 {
		return strings.Trim(addr[:i], "[]")
	}
	return addr
}

// registered is the broker as its registration reads it.
type registered struct{ b *Broker }

func (r registered) Topics() (map[string]topicconf.Config, topicconf.DataVersion) {
	return r.b.core.Topics()
}

func (r registered) TakeTopicChanges() (map[string]topicconf.Config, bool, topicconf.DataVersion) {
	return r.b.core.TakeTopicChanges()
}

func (r registered) Writable() bool  { return r.b.core.Store().Writable() == nil }
func (r registered) Permission() int { return r.b.core.Runtime().BrokerPermission }
func (r registered) ID() int64       { return r.b.registrationID() }

// registrationID is the brokerId this broker registers with: its own on a
// single broker; in a replicated group 0 while it is the announced master,
// else its slave id (1 + its index in dLegerPeers).
func (b *Broker) registrationID() int64 {
	if b.node == nil {
		return b.cfg.BrokerID
	}
	if b.master.Load() {
		return core.MasterBrokerID
	}
	return b.cfg.Replication.SlaveID()
}

// remotingServerConfig is the remoting door's listener for cfg.
func remotingServerConfig(cfg config.Config, mode string, serverTLS *tls.Config, creds acl.Credentials, log *slog.Logger) remoting.ServerConfig {
	return remoting.ServerConfig{
		Addr:         cfg.ListenAddr,
		Transport:    cfg.Transport,
		TLSMode:      mode,
		TLS:          serverTLS,
		Logger:       log,
		Interceptors: cfg.Interceptors,
		// The broker's calls to clients sign as its calls to name servers do.
		OutInterceptors: creds.Interceptor(),
	}
}

// authStore is the store as ACL 2.0 keeps its users and rules: read from
// the store the core holds now, written through the core's backend, so a
// replicated group's nodes share them (and a slave refuses the write).
type authStore struct{ c *core.Core }

func (s authStore) PutAuth(name string, value []byte) error {
	return s.c.Apply(&store.Op{Kind: store.OpPutAuth, Name: name, Value: value})
}

func (s authStore) DeleteAuth(name string) error {
	return s.c.Apply(&store.Op{Kind: store.OpDeleteAuth, Name: name})
}

func (s authStore) RangeAuth(prefix string, fn func(name string, value []byte) bool) error {
	return s.c.Store().RangeAuth(prefix, fn)
}

func (s authStore) AuthVersion() uint64 { return s.c.Store().AuthVersion() }
