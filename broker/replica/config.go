package replica

import (
	"cmp"
	"crypto/tls"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/runnelmq/runnel/internal/confdefault"
	"github.com/runnelmq/runnel/store"
)

// Peer is one member of a broker group: its raft server id and the address
// its raft transport listens on.
type Peer struct {
	ID   string
	Addr string
}

// Config configures a Node. The zero value of a field means its default
// (see DefaultConfig), except where noted.
type Config struct {
	// ID is this node's raft server id (DLedger's dLegerSelfId). Required.
	ID string
	// Dir holds the node's raft log ("raftwal"), raft snapshots ("snapshots")
	// and the store ("store-N"). Required.
	Dir string
	// Peers is the whole group, this node included (dLegerPeers): 1, 3 or
	// 5 members. A node with no raft state yet bootstraps the group from it;
	// every member must be given the same list.
	Peers []Peer
	// BindAddr is the TCP address the raft transport listens on, and
	// AdvertiseAddr the one peers dial (default BindAddr). Ignored when
	// Transport is set.
	BindAddr      string
	AdvertiseAddr string
	// Transport, if set, is used instead of a TCP transport (tests use
	// raft.InmemTransport). The Node closes it on Shutdown.
	Transport raft.Transport
	// TLS, if set, runs the TCP transport over mutual TLS (TLSConfig,
	// MemberTLS): a connection from anyone without a certificate the group
	// trusts is closed at its handshake, before raft decodes anything.
	// Default nil: plain TCP, which decodes and answers anyone who reaches
	// BindAddr.
	TLS *tls.Config
	// Store is the template of every store the node opens. Dir is replaced
	// by one under Config.Dir; FS, if set, holds the store (and nothing
	// else); RetentionInterval is forced negative and FlushInterval
	// negative, FlushMode AsyncFlush: retention must be proposed by the
	// leader as an OpTruncate, and durability is the raft log's (see the
	// package doc).
	Store store.Options

	// HeartbeatTimeout is how long a follower goes without hearing from the
	// leader before it stands for election (raft randomises it up to
	// twice). Default 300ms.
	HeartbeatTimeout time.Duration
	// ElectionTimeout is how long a candidate waits for votes before it
	// tries again (randomised likewise). Default 300ms.
	ElectionTimeout time.Duration
	// LeaderLeaseTimeout is how long a leader stays leader without hearing
	// from a majority; it must not exceed HeartbeatTimeout, so a cut-off
	// leader steps down (and fails its pending proposals) before the
	// majority can elect another. Default 250ms.
	LeaderLeaseTimeout time.Duration
	// CommitTimeout bounds how late followers learn the commit index when
	// no writes come (and so how stale a follower's store may be). Default
	// 20ms.
	CommitTimeout time.Duration
	// MaxAppendEntries is how many entries go in one disk write and one
	// AppendEntries RPC. Default 256.
	MaxAppendEntries int
	// SnapshotInterval is how often raft checks whether to snapshot, and
	// SnapshotThreshold how many entries past the last snapshot make it do
	// so. TrailingLogs entries are kept after a snapshot, so a follower that
	// far behind catches up from the log rather than a snapshot. Defaults
	// 2m, 65536, 65536. SnapshotRetain is how many snapshots stay on disk,
	// default 2.
	SnapshotInterval  time.Duration
	SnapshotThreshold uint64
	TrailingLogs      uint64
	SnapshotRetain    int
	// LogCacheEntries is how many of the latest raft log entries are kept
	// in memory for raft's reads (replication to followers, applying on a
	// follower). Default 64; negative turns the cache off. An entry holds
	// up to 4 MiB of combined sends, so the cache holds at most
	// LogCacheEntries times that.
	LogCacheEntries int
	// LogNoSync writes the raft log without fsync. It loses acknowledged
	// writes on an OS crash or power loss: tests and benchmarks only.
	LogNoSync bool
	// LogSyncInterval, if positive, defers the raft log's fsyncs: a node
	// stores (and a follower acknowledges) an entry once it is in the
	// operating system's page cache, which a process crash cannot take, and
	// fsyncs the log every LogSyncInterval; term and vote are fsynced at
	// once all the same. A Propose success then means the entry is in a
	// majority's logs, on their disks within LogSyncInterval: what the
	// broker's ASYNC_FLUSH promises of a single broker's store (an OS
	// crash of a majority may lose the last interval). Default 0: every
	// log write is fsynced before raft counts it (SYNC_FLUSH).
	LogSyncInterval time.Duration
	// Logger receives raft's messages. Default: warnings and errors to
	// stderr.
	Logger hclog.Logger
}

// DefaultConfig returns the defaults: timeouts fit for a LAN, so that a
// dead leader is replaced in about a second (detection 300-600ms, then an
// election of one or two round trips).
func DefaultConfig() Config {
	return Config{
		HeartbeatTimeout:   300 * time.Millisecond,
		ElectionTimeout:    300 * time.Millisecond,
		LeaderLeaseTimeout: 250 * time.Millisecond,
		CommitTimeout:      20 * time.Millisecond,
		MaxAppendEntries:   256,
		LogCacheEntries:    64,
		SnapshotInterval:   2 * time.Minute,
		SnapshotThreshold:  65536,
		TrailingLogs:       65536,
		SnapshotRetain:     2,
	}
}

// ErrBadConfig is returned (wrapped) by New for an unusable Config.
var ErrBadConfig = errors.New("replica: bad config")

// ensureDefaults fills zero fields with their defaults and refuses
// negative durations and counts.
func (c *Config) ensureDefaults() error {
	d := DefaultConfig()
	if err := confdefault.Fill(ErrBadConfig,
		confdefault.Of("HeartbeatTimeout", &c.HeartbeatTimeout, d.HeartbeatTimeout),
		confdefault.Of("ElectionTimeout", &c.ElectionTimeout, d.ElectionTimeout),
		confdefault.Of("LeaderLeaseTimeout", &c.LeaderLeaseTimeout, d.LeaderLeaseTimeout),
		confdefault.Of("CommitTimeout", &c.CommitTimeout, d.CommitTimeout),
		confdefault.Of("SnapshotInterval", &c.SnapshotInterval, d.SnapshotInterval)); err != nil {
		return err
	}
	if err := confdefault.Fill(ErrBadConfig, confdefault.Of("MaxAppendEntries", &c.MaxAppendEntries, d.MaxAppendEntries),
		confdefault.Of("LogCacheEntries", &c.LogCacheEntries, d.LogCacheEntries),
		confdefault.Of("SnapshotRetain", &c.SnapshotRetain, d.SnapshotRetain)); err != nil {
		return err
	}
	c.SnapshotThreshold = cmp.Or(c.SnapshotThreshold, d.SnapshotThreshold)
	c.TrailingLogs = cmp.Or(c.TrailingLogs, d.TrailingLogs)
	c.AdvertiseAddr = cmp.Or(c.AdvertiseAddr, c.BindAddr)
	if c.Logger == nil {
		c.Logger = hclog.New(&hclog.LoggerOptions{Name: "raft", Level: hclog.Warn})
	}
	return nil
}

func (c *Config) validate() error {
	if c.ID == "" || c.Dir == "" {
		return fmt.Errorf("%w: ID and Dir are required", ErrBadConfig)
	}
	switch len(c.Peers) {
	case 1, 3, 5:
	default:
		return fmt.Errorf("%w: a group has 1, 3 or 5 members, not %d", ErrBadConfig, len(c.Peers))
	}
	self := false
	seen := map[string]bool{}
	for _, p := range c.Peers {
		if p.ID == "" || p.Addr == "" || seen[p.ID] {
			return fmt.Errorf("%w: peer %+v: ids must be unique and addresses set", ErrBadConfig, p)
		}
		seen[p.ID] = true
		self = self || p.ID == c.ID
	}
	if !self {
		return fmt.Errorf("%w: %s is not among the peers", ErrBadConfig, c.ID)
	}
	if c.Transport == nil && c.BindAddr == "" {
		return fmt.Errorf("%w: BindAddr or Transport is required", ErrBadConfig)
	}
	if c.LogSyncInterval < 0 {
		return fmt.Errorf("%w: LogSyncInterval %v is negative", ErrBadConfig, c.LogSyncInterval)
	}
	if c.LeaderLeaseTimeout > c.HeartbeatTimeout {
		return fmt.Errorf("%w: LeaderLeaseTimeout %v exceeds HeartbeatTimeout %v", ErrBadConfig, c.LeaderLeaseTimeout, c.HeartbeatTimeout)
	}
	return nil
}

// raftConfig is hashicorp/raft's config for c.
func (c *Config) raftConfig() *raft.Config {
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(c.ID)
	rc.HeartbeatTimeout = c.HeartbeatTimeout
	rc.ElectionTimeout = c.ElectionTimeout
	rc.LeaderLeaseTimeout = c.LeaderLeaseTimeout
	rc.CommitTimeout = c.CommitTimeout
	rc.MaxAppendEntries = c.MaxAppendEntries
	// Concurrent Applies are batched without BatchApplyCh: the leader loop
	// takes every Apply waiting on its channel (up to MaxAppendEntries) into
	// one disk write. A buffered channel would add nothing but futures that
	// a shutdown leaves unanswered forever (raft answers only those it took).
	rc.BatchApplyCh = false
	rc.SnapshotInterval = c.SnapshotInterval
	rc.SnapshotThreshold = c.SnapshotThreshold
	rc.TrailingLogs = c.TrailingLogs
	rc.Logger = c.Logger
	// The store is rebuilt from the latest snapshot and the log on start.
	rc.NoSnapshotRestoreOnStart = false
	return rc
}
