package config

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/raft"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/acl/auth"
	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/broker/due"
	"github.com/runnelmq/runnel/broker/metrics"
	"github.com/runnelmq/runnel/broker/replica"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/store"
	"github.com/runnelmq/runnel/topicconf"
)

// ErrBadConfig is wrapped by configuration errors; the message names the
// bad field.
var ErrBadConfig = errors.New("broker: bad config")

// Config configures a broker process. Start from Default; the RocketMQ key a
// field corresponds to is given where one exists.
type Config struct {
	// ListenAddr is the address to serve clients on (listenPort). Default
	// ":10911".
	ListenAddr string
	// AdvertiseAddr is the ip:port the broker tells name servers and writes
	// into stored messages as their store host (brokerIP1 + listenPort).
	// Clients connect to it, so it must be reachable. Default "": the
	// address the server actually listens on, with an unspecified host
	// (":10911", "0.0.0.0:10911") replaced by the first non-loopback IPv4
	// address of this machine, or 127.0.0.1 when it has none. A host name is
	// resolved once, at New.
	AdvertiseAddr string
	// NamesrvAddrs are the name servers to register with (namesrvAddr).
	// Default none: the broker serves but no client can find it.
	NamesrvAddrs []string
	// BrokerName (brokerName). Default "broker-a".
	BrokerName string
	// ClusterName (brokerClusterName). Default "DefaultCluster".
	ClusterName string
	// BrokerID (brokerId): 0 is the master. Default 0.
	BrokerID int64
	// StoreDir is the message store's directory (storePathRootDir).
	// Required.
	StoreDir string
	// FlushMode (flushDiskType). Default store.AsyncFlush.
	FlushMode store.FlushMode
	// AutoCreateTopicEnable (autoCreateTopicEnable) lets producers create
	// topics by sending to them, through the TBW102 template topic the
	// broker then owns. Default true.
	AutoCreateTopicEnable bool
	// DefaultTopicQueueNums (defaultTopicQueueNums) is the queue count of
	// TBW102 and so the most an auto-created topic gets. Default 4.
	DefaultTopicQueueNums int
	// FileReservedTime (fileReservedTime, hours there) is how long messages
	// are kept. Default 72 h.
	FileReservedTime time.Duration
	// MaxMessageSize (maxMessageSize) caps a message body. Default 4 MiB.
	// It changes at run time (updateBrokerConfig) up to max(its value at
	// start, 4 MiB).
	MaxMessageSize int
	// BrokerPermission (brokerPermission) is the broker's own perm, of
	// RocketMQ's perm bits: 6 read and write, 4 read only (sends refused by
	// the routes: every topic registers without write), 2 write only (pulls
	// refused NO_PERMISSION). It changes at run time. Default 6.
	BrokerPermission int
	// RegisterInterval (registerNameServerPeriod) is how often the broker
	// registers with every name server. Default 30 s.
	RegisterInterval time.Duration
	// OffsetPersistInterval (flushConsumerOffsetInterval) is how often
	// changed consumer offsets are written to the store. Default 5 s.
	OffsetPersistInterval time.Duration
	// ChannelExpiry (channelExpiredTimeout) drops a client with no heartbeat
	// for this long. Default 120 s. Expiry is scanned every 10 s.
	ChannelExpiry time.Duration
	// IdleMemoryRelease is how long the broker must have stored nothing,
	// collected no garbage and seen Pebble neither flush nor compact
	// before it gives the memory its load left behind back to the
	// operating system (the store's memtables freed, see
	// store.ReleaseMemory, and the Go heap returned); it does
	// so once per idle spell, within a quarter of this after. Default 20 s; negative
	// never (Runnel's; see broker/idlemem.go).
	IdleMemoryRelease time.Duration
	// MaxSuspend caps how long a pull is held (long polling) whatever the
	// client asks; the official clients wait 30 s for the answer and ask for
	// 20 s. A pull asking for 0 or less is not held (Java holds it until
	// its next 5 s hold check). Default 25 s.
	MaxSuspend time.Duration
	// Transport is the remoting transport, "netpoll" (default) or "std".
	Transport string
	// TLS is RocketMQ's TLS configuration under its keys (tls.server.mode,
	// tls.server.certPath, tls.server.keyPath, ..., tlsEnable for the
	// broker's own calls to name servers); see remoting.TLSConfig. Default
	// zero: plain connections only.
	TLS remoting.TLSConfig
	// Now is the clock of everything that expires (client channels, locks,
	// held pulls, store timestamps). Default time.Now.
	Now func() time.Time
	// Logger receives the broker's logs. Default slog.Default().
	Logger *slog.Logger
	// StoreOptions, if set, adjusts the store options the broker derives
	// from this config (tests use it for a smaller cache).
	StoreOptions func(*store.Options)
	// Interceptors join the remoting server's chain after the broker's own
	// (metrics, ACL), so they see only what ACL let through and metrics
	// count what they refuse: RocketMQ's registerServerRPCHook. The
	// client's tests put a fault-injecting tap here. Default none.
	Interceptors []remoting.Interceptor
	// MessageDelayLevel (messageDelayLevel) lists the delays of levels 1..N,
	// space-separated with unit s, m, h or d (Go durations like "500ms" are
	// accepted too). Default "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m
	// 20m 30m 1h 2h".
	MessageDelayLevel string
	// TimerMaxDelay (timerMaxDelaySec, seconds there) is the longest a
	// timer message (TIMER_DELIVER_MS, TIMER_DELAY_SEC, TIMER_DELAY_MS) may
	// wait; a send due later is refused MESSAGE_ILLEGAL. Keep it below
	// FileReservedTime, or a waiting timer can be removed by retention.
	// Default 3 days.
	TimerMaxDelay time.Duration
	// LockMaxLiveTime (rocketmq.broker.rebalance.lockMaxLiveTime, ms there)
	// is how long an orderly consumer's queue lock lives without renewal.
	// The official clients renew every 20 s, so keep it well above that.
	// Default 60 s.
	LockMaxLiveTime time.Duration
	// ConsumerCallTimeout bounds how long the broker waits for a consumer
	// when an admin request is forwarded to it (GET_CONSUMER_RUNNING_INFO,
	// CONSUME_MESSAGE_DIRECTLY, INVOKE_BROKER_TO_GET_CONSUMER_STATUS); the
	// admin is then answered CONSUME_MSG_TIMEOUT. Keep it below the admin
	// tools' own timeout (5 s for mqadmin and runnelctl) for that answer to
	// reach them. Default 5 s, Java's Broker2Client.getConsumeStatus.
	ConsumerCallTimeout time.Duration
	// TransactionTimeout (transactionTimeOut, ms there) is how long after
	// its birth a transaction's half message is left to its producer's
	// END_TRANSACTION before the broker asks (CHECK_TRANSACTION_STATE); a
	// message's CHECK_IMMUNITY_TIME_IN_SECONDS overrides it. Default 6 s.
	TransactionTimeout time.Duration
	// TransactionCheckMax (transactionCheckMax) is how many times a half
	// message is checked before it is discarded (into
	// TRANS_CHECK_MAX_TIME_TOPIC). Default 15.
	TransactionCheckMax int
	// TransactionCheckInterval (transactionCheckInterval, ms there) is how
	// often half messages are checked. Default 60 s.
	TransactionCheckInterval time.Duration
	// DiskMaxUsedSpaceRatio (diskMaxUsedSpaceRatio), DiskSpaceCleanForciblyRatio
	// (diskSpaceCleanForciblyRatio) and DiskSpaceWarningLevelRatio
	// (diskSpaceWarningLevelRatio) are percentages of the store's filesystem
	// in use: above the first retention runs at every disk check, above the
	// second it deletes the oldest messages whatever their age, and above the
	// third sends are refused (SERVICE_NOT_AVAILABLE, as Java) until space
	// returns. 0 takes the store's defaults, Java's: 75, 85 and 90.
	DiskMaxUsedSpaceRatio, DiskSpaceCleanForciblyRatio, DiskSpaceWarningLevelRatio int
	// EnablePropertyFilter (enablePropertyFilter) lets consumers subscribe
	// with SQL92 expressions over message properties, filtered here.
	// Default true (Java's default is false; a dev broker should accept
	// what production brokers are configured to). Taken as given, like
	// AutoCreateTopicEnable: start from DefaultConfig.
	EnablePropertyFilter bool
	// FilterSupportRetry (filterSupportRetry) filters a group's %RETRY%
	// queue with the group's SQL92 subscriptions of the topics the retried
	// messages came from. Default false, as Java.
	FilterSupportRetry bool
	// Metrics configures the Prometheus exporter (metricsExporterType,
	// metricsPromExporterHost, metricsPromExporterPort, metricsTopicLimit,
	// metricsGroupLimit); see metrics.Config for the defaults. Off unless
	// ExporterType is PROM.
	Metrics metrics.Config

	// GRPC configures the RocketMQ 5 gRPC door (grpcServerPort, ...); see
	// GRPCConfig. Default off.
	GRPC GRPCConfig

	// Replication makes this broker one node of a replicated group
	// (RocketMQ's DLedger keys); see ReplicationConfig. Default off: a
	// single broker, with no raft on any path.
	Replication ReplicationConfig
	// SlaveReadEnable (slaveReadEnable) lets a replicated group's slaves
	// serve pulls, and its master suggest a slave to a consumer far behind
	// (suggestWhichBrokerId). Default false, as Java.
	SlaveReadEnable bool

	// ACLEnable checks every request against ACLFile, a RocketMQ 4.x
	// plain_acl.yml reloaded when it changes (RocketMQ aclEnable; see
	// package acl). Default false.
	ACLEnable bool
	// ACLFile is the plain_acl.yml; required with ACLEnable. The broker
	// command defaults it to plain_acl.yml beside broker.conf.
	ACLFile string
	// Credentials sign the broker's own requests to the name servers
	// (broker.conf accessKey and secretKey). Default none: then
	// Auth.InnerCredentials, if any.
	Credentials acl.Credentials
	// Auth is RocketMQ 5.3's ACL 2.0 (authenticationEnabled,
	// authorizationEnabled, ...; package acl/auth), beside ACLEnable's
	// plain ACL. Its users and ACLs live in the store. Cluster is set from
	// ClusterName. Default off.
	Auth auth.Config
}

// ReplicationConfig configures a replicated broker group: every store
// mutation goes through a raft log (broker/replica) and is acknowledged
// once a majority holds it. The leader registers as the master (brokerId
// 0) of BrokerName, the others as its slaves.
type ReplicationConfig struct {
	// Enable (enableDLegerCommitLog). Default false.
	Enable bool
	// Group (dLegerGroup) names the raft group; it is only checked to be a
	// valid name. Default BrokerName.
	Group string
	// Peers (dLegerPeers, "n0-host:port;n1-host:port;n2-host:port") is the
	// whole group: 1, 3 or 5 raft ids with the address of each one's raft
	// transport (not the client port). Every node is given the same list;
	// a slave registers brokerId 1 + its index in it.
	Peers []replica.Peer
	// SelfID (dLegerSelfId) is this node's id among Peers. Required.
	SelfID string
	// HeartbeatTimeout (raftHeartbeatTimeoutMs, Runnel's key) is how long a
	// follower waits for its leader before it stands for election;
	// ElectionTimeout (raftElectionTimeoutMs) how long a candidate waits
	// for votes. Defaults 300 ms each, for a LAN: a dead leader is replaced
	// in about a second. The leader's lease is 5/6 of HeartbeatTimeout, so
	// a leader cut off from its majority steps down before another is
	// elected.
	HeartbeatTimeout, ElectionTimeout time.Duration
	// Transport, if set, carries raft instead of TCP on Peers' addresses
	// (tests: raft's in-memory transport, which can cut links).
	Transport raft.Transport
	// TLSCertPath and TLSKeyPath (raftTlsCertPath, raftTlsKeyPath,
	// Runnel's keys), if set, run raft over mutual TLS: this member's
	// certificate and unencrypted key, PEM. TLSCAPath (raftTlsCaPath) holds
	// the certificates a member's must chain to, PEM; empty trusts
	// TLSCertPath's own, for members that share one certificate. A
	// connection from anyone without such a certificate is closed at its
	// handshake, before raft decodes anything (replica.TLSConfig). Default
	// none: raft over plain TCP, which answers anyone who reaches the raft
	// port, so keep that port on a private network (a start warns when it
	// listens on an address reachable from other hosts).
	TLSCertPath, TLSKeyPath, TLSCAPath string
	// LogNoSync writes the raft log without fsync: acknowledged writes are
	// lost if a majority's machines crash. Tests and benchmarks only.
	LogNoSync bool
	// ProposeTimeout bounds how long a write waits for its commit. Default
	// 5 s.
	ProposeTimeout time.Duration
	// SnapshotInterval, SnapshotThreshold and TrailingLogs are the raft
	// node's (replica.Config): how often it checks, and how many entries
	// past the last snapshot make it snapshot the store and drop its log
	// but the last TrailingLogs entries (a follower further behind then
	// catches up from the snapshot). Zero: replica.DefaultConfig's (2 min,
	// 65536, 65536). Runnel's own knobs, with no broker.conf key.
	SnapshotInterval                time.Duration
	SnapshotThreshold, TrailingLogs uint64
}

// Default returns the defaults for every field (StoreDir is left
// empty and must be set).
func Default() Config {
	return Config{
		ListenAddr:            ":10911",
		BrokerName:            "broker-a",
		ClusterName:           "DefaultCluster",
		FlushMode:             store.AsyncFlush,
		AutoCreateTopicEnable: true,
		DefaultTopicQueueNums: 4,
		FileReservedTime:      72 * time.Hour,
		MaxMessageSize:        4 << 20,
		BrokerPermission:      topicconf.PermRead | topicconf.PermWrite,
		RegisterInterval:      30 * time.Second,
		OffsetPersistInterval: 5 * time.Second,
		ChannelExpiry:         120 * time.Second,
		IdleMemoryRelease:     20 * time.Second,
		MaxSuspend:            25 * time.Second,
		Transport:             remoting.TransportNetpoll,
		Now:                   time.Now,
		Logger:                slog.Default(),
		MessageDelayLevel:     defaultMessageDelayLevel,
		TimerMaxDelay:         due.DefaultTimerMaxDelay,
		LockMaxLiveTime:       60 * time.Second,
		ConsumerCallTimeout:   5 * time.Second,

		TransactionTimeout:       6 * time.Second,
		TransactionCheckMax:      15,
		TransactionCheckInterval: 60 * time.Second,
		EnablePropertyFilter:     true,
		Metrics:                  metrics.DefaultConfig(),
	}
}

// EnsureDefaults fills zero fields that have no meaningful zero value.
// AutoCreateTopicEnable, BrokerID and FlushMode (AsyncFlush is its zero)
// are taken as given.
func (c *Config) EnsureDefaults() {
	d := Default()
	c.ListenAddr = cmp.Or(c.ListenAddr, d.ListenAddr)
	c.BrokerName = cmp.Or(c.BrokerName, d.BrokerName)
	c.ClusterName = cmp.Or(c.ClusterName, d.ClusterName)
	c.DefaultTopicQueueNums = cmp.Or(c.DefaultTopicQueueNums, d.DefaultTopicQueueNums)
	c.FileReservedTime = cmp.Or(c.FileReservedTime, d.FileReservedTime)
	c.MaxMessageSize = cmp.Or(c.MaxMessageSize, d.MaxMessageSize)
	c.BrokerPermission = cmp.Or(c.BrokerPermission, d.BrokerPermission)
	c.RegisterInterval = cmp.Or(c.RegisterInterval, d.RegisterInterval)
	c.OffsetPersistInterval = cmp.Or(c.OffsetPersistInterval, d.OffsetPersistInterval)
	c.ChannelExpiry = cmp.Or(c.ChannelExpiry, d.ChannelExpiry)
	c.IdleMemoryRelease = cmp.Or(c.IdleMemoryRelease, d.IdleMemoryRelease)
	c.MaxSuspend = cmp.Or(c.MaxSuspend, d.MaxSuspend)
	c.Transport = cmp.Or(c.Transport, d.Transport)
	c.Logger = cmp.Or(c.Logger, d.Logger)
	c.MessageDelayLevel = cmp.Or(c.MessageDelayLevel, d.MessageDelayLevel)
	c.TimerMaxDelay = cmp.Or(c.TimerMaxDelay, d.TimerMaxDelay)
	c.LockMaxLiveTime = cmp.Or(c.LockMaxLiveTime, d.LockMaxLiveTime)
	c.ConsumerCallTimeout = cmp.Or(c.ConsumerCallTimeout, d.ConsumerCallTimeout)
	c.TransactionTimeout = cmp.Or(c.TransactionTimeout, d.TransactionTimeout)
	c.TransactionCheckMax = cmp.Or(c.TransactionCheckMax, d.TransactionCheckMax)
	c.TransactionCheckInterval = cmp.Or(c.TransactionCheckInterval, d.TransactionCheckInterval)
	c.Metrics.EnsureDefaults()
	if c.Replication.Enable {
		r := &c.Replication
		r.Group = cmp.Or(r.Group, c.BrokerName)
		r.HeartbeatTimeout = cmp.Or(r.HeartbeatTimeout, 300*time.Millisecond)
		r.ElectionTimeout = cmp.Or(r.ElectionTimeout, 300*time.Millisecond)
		r.ProposeTimeout = cmp.Or(r.ProposeTimeout, 5*time.Second)
	}
	if c.Now == nil { // a func is not comparable, so not cmp.Or
		c.Now = d.Now
	}
}

// Validate reports the first bad field.
func (c *Config) Validate() error {
	switch {
	case c.StoreDir == "":
		return fmt.Errorf("%w: StoreDir is empty", ErrBadConfig)
	case c.ListenAddr == "":
		return fmt.Errorf("%w: ListenAddr is empty", ErrBadConfig)
	case c.BrokerName == "" || !validName(c.BrokerName):
		return fmt.Errorf("%w: BrokerName %q", ErrBadConfig, c.BrokerName)
	case c.ClusterName == "" || !validName(c.ClusterName):
		return fmt.Errorf("%w: ClusterName %q", ErrBadConfig, c.ClusterName)
	case c.BrokerID < 0:
		return fmt.Errorf("%w: BrokerID %d is negative", ErrBadConfig, c.BrokerID)
	case c.DefaultTopicQueueNums <= 0 || c.DefaultTopicQueueNums > core.MaxQueueNums:
		return fmt.Errorf("%w: DefaultTopicQueueNums %d not in 1..%d", ErrBadConfig, c.DefaultTopicQueueNums, core.MaxQueueNums)
	case c.MaxMessageSize <= 0:
		return fmt.Errorf("%w: MaxMessageSize %d", ErrBadConfig, c.MaxMessageSize)
	case c.BrokerPermission&^(topicconf.PermRead|topicconf.PermWrite|topicconf.PermInherit) != 0:
		return fmt.Errorf("%w: BrokerPermission %d has unknown bits", ErrBadConfig, c.BrokerPermission)
	case c.RegisterInterval <= 0:
		return fmt.Errorf("%w: RegisterInterval %v", ErrBadConfig, c.RegisterInterval)
	case c.OffsetPersistInterval <= 0:
		return fmt.Errorf("%w: OffsetPersistInterval %v", ErrBadConfig, c.OffsetPersistInterval)
	case c.ChannelExpiry <= 0:
		return fmt.Errorf("%w: ChannelExpiry %v", ErrBadConfig, c.ChannelExpiry)
	case c.MaxSuspend <= 0:
		return fmt.Errorf("%w: MaxSuspend %v", ErrBadConfig, c.MaxSuspend)
	case c.ConsumerCallTimeout < 0:
		return fmt.Errorf("%w: ConsumerCallTimeout %v", ErrBadConfig, c.ConsumerCallTimeout)
	case c.FlushMode != store.AsyncFlush && c.FlushMode != store.SyncFlush:
		return fmt.Errorf("%w: FlushMode %v", ErrBadConfig, c.FlushMode)
	}
	if err := validDelayLevels(c.MessageDelayLevel); err != nil {
		return err
	}
	if c.ACLEnable && c.ACLFile == "" {
		return fmt.Errorf("%w: ACLFile is empty with ACLEnable", ErrBadConfig)
	}
	if c.LockMaxLiveTime <= 0 {
		return fmt.Errorf("%w: LockMaxLiveTime %v", ErrBadConfig, c.LockMaxLiveTime)
	}
	switch {
	case c.TransactionTimeout < 0:
		return fmt.Errorf("%w: TransactionTimeout %v", ErrBadConfig, c.TransactionTimeout)
	case c.TransactionCheckMax < 0:
		return fmt.Errorf("%w: TransactionCheckMax %d", ErrBadConfig, c.TransactionCheckMax)
	case c.TransactionCheckInterval <= 0:
		return fmt.Errorf("%w: TransactionCheckInterval %v", ErrBadConfig, c.TransactionCheckInterval)
	}
	if err := c.Replication.validate(); err != nil {
		return err
	}
	if err := c.Metrics.Validate(); err != nil {
		return fmt.Errorf("%w: %v", ErrBadConfig, err)
	}
	for _, a := range c.NamesrvAddrs {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return fmt.Errorf("%w: NamesrvAddrs entry %q: %v", ErrBadConfig, a, err)
		}
	}
	if c.AdvertiseAddr != "" {
		if _, _, err := net.SplitHostPort(c.AdvertiseAddr); err != nil {
			return fmt.Errorf("%w: AdvertiseAddr %q: %v", ErrBadConfig, c.AdvertiseAddr, err)
		}
	}
	return nil
}

func (r *ReplicationConfig) validate() error {
	if !r.Enable {
		return nil
	}
	switch {
	case !validName(r.Group):
		return fmt.Errorf("%w: dLegerGroup %q", ErrBadConfig, r.Group)
	case r.SelfID == "":
		return fmt.Errorf("%w: dLegerSelfId is empty", ErrBadConfig)
	case r.HeartbeatTimeout < 0 || r.ElectionTimeout < 0:
		return fmt.Errorf("%w: raft timeouts %v, %v", ErrBadConfig, r.HeartbeatTimeout, r.ElectionTimeout)
	}
	if r.SlaveID() < 0 {
		return fmt.Errorf("%w: dLegerSelfId %q is not among dLegerPeers", ErrBadConfig, r.SelfID)
	}
	if (r.TLSCertPath == "") != (r.TLSKeyPath == "") || r.TLSCAPath != "" && r.TLSCertPath == "" {
		return fmt.Errorf("%w: raftTlsCertPath and raftTlsKeyPath go together (raftTlsCaPath with them)", ErrBadConfig)
	}
	switch len(r.Peers) {
	case 1, 3, 5:
	default:
		return fmt.Errorf("%w: dLegerPeers: a group has 1, 3 or 5 members, not %d", ErrBadConfig, len(r.Peers))
	}
	return nil
}

// SlaveID is the brokerId this node registers as a slave: 1 + its index
// in Peers (-1 if it is not there).
func (r *ReplicationConfig) SlaveID() int64 {
	for i, p := range r.Peers {
		if p.ID == r.SelfID {
			return int64(i) + 1
		}
	}
	return -1
}

// ParsePeers reads dLegerPeers: "n0-host:port;n1-host:port" (each id, a
// dash, the raft address).
func ParsePeers(s string) ([]replica.Peer, error) {
	var out []replica.Peer
	for _, p := range splitAddrs(s) {
		id, addr, ok := strings.Cut(p, "-")
		if !ok || id == "" {
			return nil, fmt.Errorf("%w: dLegerPeers entry %q: want id-host:port", ErrBadConfig, p)
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return nil, fmt.Errorf("%w: dLegerPeers entry %q: %v", ErrBadConfig, p, err)
		}
		out = append(out, replica.Peer{ID: id, Addr: addr})
	}
	return out, nil
}

// validName accepts RocketMQ's broker and cluster name characters.
func validName(s string) bool {
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '-' || ch == '_' || ch == '.' || ch == '%' || ch == '|') {
			return false
		}
	}
	return true
}

// Advertise returns the address to advertise, given the configured
// one (possibly empty) and the address the server listens on.
func Advertise(configured, listening string) (netip.AddrPort, error) {
	addr := configured
	if addr == "" {
		addr = listening
	}
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("broker: advertise address %q: %w", addr, err)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("broker: advertise address %q: bad port", addr)
	}
	if port == 0 {
		// ":0" in the advertise address means "the port we listen on".
		_, lp, err := net.SplitHostPort(listening)
		if err == nil {
			port, _ = strconv.ParseUint(lp, 10, 16)
		}
	}
	var ip netip.Addr
	switch {
	case host == "" || host == "0.0.0.0" || host == "::":
		ip = firstNonLoopbackIPv4()
	default:
		if a, err := netip.ParseAddr(host); err == nil {
			ip = a.Unmap()
			if ip.IsUnspecified() {
				ip = firstNonLoopbackIPv4()
			}
		} else {
			ips, err := net.LookupIP(host)
			if err != nil || len(ips) == 0 {
				return netip.AddrPort{}, fmt.Errorf("broker: advertise host %q does not resolve: %v", host, err)
			}
			a, _ := netip.AddrFromSlice(ips[0])
			ip = a.Unmap()
		}
	}
	return netip.AddrPortFrom(ip, uint16(port)), nil
}

// firstNonLoopbackIPv4 returns this machine's first up, non-loopback IPv4
// address, or 127.0.0.1.
func firstNonLoopbackIPv4() netip.Addr {
	ifaces, err := net.Interfaces()
	if err == nil {
		for _, ifc := range ifaces {
			if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
				continue
			}
			addrs, err := ifc.Addrs()
			if err != nil {
				continue
			}
			for _, a := range addrs {
				if pn, ok := a.(*net.IPNet); ok {
					if ip, ok := netip.AddrFromSlice(pn.IP); ok {
						ip = ip.Unmap()
						if ip.Is4() && !ip.IsLoopback() && !ip.IsLinkLocalUnicast() {
							return ip
						}
					}
				}
			}
		}
	}
	return netip.AddrFrom4([4]byte{127, 0, 0, 1})
}

// defaultMessageDelayLevel is Config.MessageDelayLevel's default.
const defaultMessageDelayLevel = due.DefaultLevels

// validDelayLevels checks Config.MessageDelayLevel.
func validDelayLevels(s string) error {
	if _, err := due.ParseLevels(s); err != nil {
		return fmt.Errorf("%w: MessageDelayLevel: %w", ErrBadConfig, err)
	}
	return nil
}
