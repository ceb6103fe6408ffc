package config

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/runnelmq/runnel/remoting/protocol"
	"github.com/runnelmq/runnel/store"
)

// ApplyProperties reads a RocketMQ broker.conf (Java properties:
// key=value or key: value lines, # and ! comments, as
// protocol.ScanProperties reads them) and sets the fields whose keys mean
// the same here, line by line, a later line of a key winning:
//
//	namesrvAddr            NamesrvAddrs (";"-separated)
//	listenPort             ListenAddr's port (":<port>", host kept if set)
//	brokerIP1              AdvertiseAddr's host (with the listen port)
//	listenAddr             ListenAddr (Runnel's key, host:port; listenPort
//	                       replaces its port)
//	advertiseAddr          AdvertiseAddr (Runnel's key, host:port; brokerIP1
//	                       replaces it)
//	brokerName             BrokerName
//	brokerClusterName      ClusterName
//	brokerId               BrokerID
//	storePathRootDir       StoreDir
//	flushDiskType          FlushMode (ASYNC_FLUSH or SYNC_FLUSH)
//	autoCreateTopicEnable  AutoCreateTopicEnable
//	fileReservedTime       FileReservedTime (hours)
//	defaultTopicQueueNums  DefaultTopicQueueNums
//	maxMessageSize         MaxMessageSize (bytes)
//	brokerPermission       BrokerPermission (RocketMQ perm bits: 6, 4, 2)
//	messageDelayLevel      MessageDelayLevel ("1s 5s ... 2h")
//	timerMaxDelaySec       TimerMaxDelay (seconds)
//	rocketmq.broker.rebalance.lockMaxLiveTime  LockMaxLiveTime (ms)
//	transactionTimeOut        TransactionTimeout (ms)
//	transactionCheckMax       TransactionCheckMax
//	transactionCheckInterval  TransactionCheckInterval (ms)
//	diskMaxUsedSpaceRatio, diskSpaceCleanForciblyRatio, diskSpaceWarningLevelRatio
//	                          the Disk*Ratio fields (percent)
//	enablePropertyFilter      EnablePropertyFilter
//	filterSupportRetry        FilterSupportRetry
//	metricsExporterType, metricsPromExporterHost, metricsPromExporterPort,
//	metricsTopicLimit, metricsGroupLimit  Metrics (metrics.Config.ApplyKey)
//	aclEnable                 ACLEnable
//	rocketmq.acl.plain.file   ACLFile (Java's system property)
//	accessKey, secretKey      Credentials
//	authenticationEnabled, authorizationEnabled, initAuthenticationUser,
//	innerClientAuthenticationCredentials, ...  Auth (auth.Config.ApplyKey)
//	enableDLegerCommitLog, dLegerGroup, dLegerPeers, dLegerSelfId
//	                          Replication (DLedger's keys)
//	raftHeartbeatTimeoutMs, raftElectionTimeoutMs
//	                          Replication's timeouts (Runnel's keys, ms)
//	raftTlsCertPath, raftTlsKeyPath, raftTlsCaPath
//	                          Replication's TLS files (Runnel's keys)
//	slaveReadEnable           SlaveReadEnable
//	grpcServerPort            GRPC.ListenAddr's port (RocketMQ's proxy key)
//	grpcListenAddr, grpcAdvertiseAddr, grpcPeers
//	                          GRPC (Runnel's keys; see GRPCConfig)
//	grpcClientConsumerMaxLongPollingTimeoutMillis, defaultInvisibleTimeMills,
//	renewAheadTimeMillis, renewSliceTimeMillis, renewSchedulePeriodMillis,
//	renewMaxTimeMillis        GRPC (the proxy's keys, ms)
//	tls.server.mode, tls.server.certPath, tls.server.keyPath, tlsEnable, ...
//	                          TLS (remoting.TLSConfig.Set lists them)
//
// It returns the keys it does not know, which callers report and ignore
// (RocketMQ has hundreds). A malformed value is an error naming its line.
func (c *Config) ApplyProperties(r io.Reader) (ignored []string, err error) {
	var st confState
	err = protocol.ScanProperties(r, func(n int, key, val string) error {
		if err := c.setKey(&st, key, val); err != nil {
			return fmt.Errorf("%w: line %d: %s=%s: %v", ErrBadConfig, n, key, shown(key, val), err)
		}
		return nil
	})
	switch {
	case errors.Is(err, protocol.ErrPropertiesSyntax):
		return st.ignored, fmt.Errorf("%w: %w", ErrBadConfig, err)
	case err != nil && !errors.Is(err, ErrBadConfig):
		return st.ignored, fmt.Errorf("broker: read properties: %w", err)
	case err != nil:
		return st.ignored, err
	}
	c.finish(&st)
	return st.ignored, nil
}

// Set applies one broker.conf key as a broker.conf holding only that line
// would (see ApplyProperties), and reports whether the key is one
// ApplyProperties knows. A malformed value is an ErrBadConfig naming the
// key. Command lines set the broker's configuration through it, so a flag
// means what its key means.
func (c *Config) Set(key, value string) (known bool, err error) {
	var st confState
	if err := c.setKey(&st, key, value); err != nil {
		return true, fmt.Errorf("%w: %s=%s: %v", ErrBadConfig, key, shown(key, value), err)
	}
	c.finish(&st)
	return len(st.ignored) == 0, nil
}

// secretKeys hold a password: an error about one never repeats its value,
// since errors end in logs.
var secretKeys = map[string]bool{"secretKey": true, "initAuthenticationUser": true, "innerClientAuthenticationCredentials": true}

// shown is val as an error about key quotes it.
func shown(key, val string) string {
	if secretKeys[key] {
		return fmt.Sprintf("(%d bytes, not shown)", len(val))
	}
	return strconv.Quote(val)
}

// confState is what reading broker.conf carries from line to line:
// listenPort and brokerIP1 combine once every line is read, and the keys
// not known.
type confState struct {
	ip1, port string
	ignored   []string
}

// setKey applies one key; its error is the bare reason.
func (c *Config) setKey(st *confState, key, val string) error {
	if ok, err := setField(c.stringKeys(), key, val, func(v string) (string, error) { return v, nil }); ok {
		return err
	}
	if ok, err := setField(c.boolKeys(), key, val, strconv.ParseBool); ok {
		return err
	}
	if ok, err := setField(c.intKeys(), key, val, strconv.Atoi); ok {
		return err
	}
	if ok, err := setField(c.millisKeys(), key, val, positiveMillis); ok {
		return err
	}
	if ok, err := setField(c.diskRatioKeys(), key, val, diskRatio); ok {
		return err
	}
	switch key {
	case "namesrvAddr":
		c.NamesrvAddrs = splitAddrs(val)
	case "listenPort":
		if _, err := strconv.ParseUint(val, 10, 16); err != nil {
			return err
		}
		st.port = val
	case "brokerIP1":
		st.ip1 = val
	case "brokerId":
		v, err := strconv.ParseInt(val, 10, 64)
		if err != nil {
			return err
		}
		c.BrokerID = v
	case "flushDiskType":
		m, err := store.ParseFlushMode(val)
		if err != nil {
			return err
		}
		c.FlushMode = m
	case "dLegerPeers":
		peers, err := ParsePeers(val)
		if err != nil {
			return err
		}
		c.Replication.Peers = peers
	case "fileReservedTime":
		v, err := strconv.Atoi(val)
		if err != nil {
			return err
		}
		c.FileReservedTime = time.Duration(v) * time.Hour
	case "brokerPermission":
		v, err := strconv.Atoi(val)
		if err != nil || v <= 0 || v > 7 {
			return fmt.Errorf("not RocketMQ perm bits (6 read and write, 4 read, 2 write)")
		}
		c.BrokerPermission = v
	case "messageDelayLevel":
		if err := validDelayLevels(val); err != nil {
			return err
		}
		c.MessageDelayLevel = val
	case "timerMaxDelaySec":
		v, err := strconv.ParseInt(val, 10, 32)
		if err != nil || v <= 0 {
			return fmt.Errorf("not a positive number of seconds")
		}
		c.TimerMaxDelay = time.Duration(v) * time.Second
	case "transactionCheckMax":
		v, err := strconv.Atoi(val)
		if err != nil || v <= 0 {
			return fmt.Errorf("not a positive number")
		}
		c.TransactionCheckMax = v
	default:
		if ok, err := c.setGRPCKey(key, val); ok {
			return err
		}
		if ok, err := c.Metrics.ApplyKey(key, val); ok {
			return err
		}
		if ok, err := c.Auth.ApplyKey(key, val); ok {
			return err
		}
		if known, err := c.TLS.Set(key, val); err != nil {
			return err
		} else if !known {
			st.ignored = append(st.ignored, key)
		}
	}
	return nil
}

// stringKeys are the keys whose value is a field's as it is written.
func (c *Config) stringKeys() map[string]*string {
	return map[string]*string{
		"listenAddr": &c.ListenAddr, "advertiseAddr": &c.AdvertiseAddr, "brokerName": &c.BrokerName,
		"brokerClusterName": &c.ClusterName, "storePathRootDir": &c.StoreDir, "rocketmq.acl.plain.file": &c.ACLFile,
		"accessKey": &c.Credentials.AccessKey, "secretKey": &c.Credentials.SecretKey,
		"dLegerGroup": &c.Replication.Group, "dLegerSelfId": &c.Replication.SelfID,
		"raftTlsCertPath": &c.Replication.TLSCertPath, "raftTlsKeyPath": &c.Replication.TLSKeyPath,
		"raftTlsCaPath": &c.Replication.TLSCAPath,
	}
}

// setField sets the field fields holds for key, when it holds one, to
// val as parse reads it; it reports whether it did, and parse's error.
func setField[T any](fields map[string]*T, key, val string, parse func(string) (T, error)) (bool, error) {
	f, ok := fields[key]
	if !ok {
		return false, nil
	}
	v, err := parse(val)
	if err == nil {
		*f = v
	}
	return true, err
}

// boolKeys are the keys whose value is a bool field's.
func (c *Config) boolKeys() map[string]*bool {
	return map[string]*bool{
		"enableDLegerCommitLog": &c.Replication.Enable, "slaveReadEnable": &c.SlaveReadEnable,
		"autoCreateTopicEnable": &c.AutoCreateTopicEnable, "enablePropertyFilter": &c.EnablePropertyFilter,
		"filterSupportRetry": &c.FilterSupportRetry, "aclEnable": &c.ACLEnable,
	}
}

// intKeys are the keys whose value is an int field's, any number.
func (c *Config) intKeys() map[string]*int {
	return map[string]*int{"defaultTopicQueueNums": &c.DefaultTopicQueueNums, "maxMessageSize": &c.MaxMessageSize}
}

// millisKeys are the keys whose value is a duration in milliseconds.
func (c *Config) millisKeys() map[string]*time.Duration {
	return map[string]*time.Duration{
		"raftHeartbeatTimeoutMs": &c.Replication.HeartbeatTimeout, "raftElectionTimeoutMs": &c.Replication.ElectionTimeout,
		"rocketmq.broker.rebalance.lockMaxLiveTime": &c.LockMaxLiveTime,
		"transactionTimeOut":                        &c.TransactionTimeout, "transactionCheckInterval": &c.TransactionCheckInterval,
		// the gRPC door's, the proxy's keys (GRPCConfig)
		"grpcClientConsumerMaxLongPollingTimeoutMillis": &c.GRPC.MaxLongPolling,
		"defaultInvisibleTimeMills":                     &c.GRPC.Renewal.Invisible, "renewAheadTimeMillis": &c.GRPC.Renewal.Ahead,
		"renewSliceTimeMillis": &c.GRPC.Renewal.Slice, "renewSchedulePeriodMillis": &c.GRPC.Renewal.Period,
		"renewMaxTimeMillis": &c.GRPC.Renewal.Max,
	}
}

func positiveMillis(val string) (time.Duration, error) {
	v, err := strconv.ParseInt(val, 10, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("not a positive number of milliseconds")
	}
	return time.Duration(v) * time.Millisecond, nil
}

// diskRatioKeys are the disk space thresholds, percentages.
func (c *Config) diskRatioKeys() map[string]*int {
	return map[string]*int{
		"diskMaxUsedSpaceRatio": &c.DiskMaxUsedSpaceRatio, "diskSpaceCleanForciblyRatio": &c.DiskSpaceCleanForciblyRatio,
		"diskSpaceWarningLevelRatio": &c.DiskSpaceWarningLevelRatio,
	}
}

func diskRatio(val string) (int, error) {
	v, err := strconv.Atoi(val)
	if err != nil || v < 10 || v > 95 {
		return 0, fmt.Errorf("not a percentage from 10 to 95")
	}
	return v, nil
}

// finish combines listenPort and brokerIP1 into the listen and advertised
// addresses.
func (c *Config) finish(st *confState) {
	if st.port != "" {
		host, _, err := net.SplitHostPort(c.ListenAddr)
		if err != nil {
			host = ""
		}
		c.ListenAddr = net.JoinHostPort(host, st.port)
	}
	if st.ip1 != "" {
		p := st.port
		if p == "" {
			if _, lp, err := net.SplitHostPort(c.ListenAddr); err == nil {
				p = lp
			}
		}
		c.AdvertiseAddr = net.JoinHostPort(st.ip1, p)
	}
}

// splitAddrs splits RocketMQ's ";"-separated name server list (commas
// are accepted too), dropping blanks.
func splitAddrs(s string) []string {
	var out []string
	for _, a := range strings.FieldsFunc(s, func(r rune) bool { return r == ';' || r == ',' }) {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// SplitNamesrvAddrs parses a name server list as NAMESRV_ADDR and
// namesrvAddr give it ("a:9876;b:9876").
func SplitNamesrvAddrs(s string) []string { return splitAddrs(s) }
