package store

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"runtime/debug"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// FlushMode says when an append is acknowledged (RocketMQ flushDiskType).
type FlushMode int

const (
	// AsyncFlush acknowledges once the write is in the operating system's page
	// cache; the WAL is fsynced in the background every FlushInterval. A
	// process crash loses nothing acknowledged; an OS crash or power loss may
	// lose the last interval. RocketMQ's ASYNC_FLUSH, and its default.
	AsyncFlush FlushMode = iota
	// SyncFlush acknowledges only after fsync. Concurrent writers share one
	// fsync (Pebble's commit pipeline groups them). RocketMQ's SYNC_FLUSH.
	SyncFlush
)

// String returns RocketMQ's name for the mode.
func (m FlushMode) String() string {
	switch m {
	case AsyncFlush:
		return "ASYNC_FLUSH"
	case SyncFlush:
		return "SYNC_FLUSH"
	}
	return fmt.Sprintf("FlushMode(%d)", int(m))
}

// ParseFlushMode accepts RocketMQ's flushDiskType values.
func ParseFlushMode(s string) (FlushMode, error) {
	switch s {
	case "ASYNC_FLUSH", "":
		return AsyncFlush, nil
	case "SYNC_FLUSH":
		return SyncFlush, nil
	}
	return 0, fmt.Errorf("store: unknown flushDiskType %q", s)
}

// ArrivalHook is told that a queue's readable max offset grew. It runs on
// the writer's goroutine after the data is readable, so it must not block.
type ArrivalHook func(topic string, queueID int32, maxOffset int64)

// Options configure a Store. The zero value of a field means its default
// (see DefaultOptions), except where noted.
type Options struct {
	// Dir is the Pebble directory. Required.
	Dir string
	// FS is the filesystem. Default (and vfs.Default): the operating
	// system's, with the store's directories 0700 and files 0600
	// (private.go); tests use vfs.NewMem().
	FS vfs.FS
	// FlushMode (flushDiskType). Default AsyncFlush.
	FlushMode FlushMode
	// NoWAL makes a store that writes no write-ahead log: for a store that
	// is a copy of something durable elsewhere and is rebuilt from it on
	// every start, as a replica's is from its raft log. A write is
	// acknowledged once it is in Pebble's memtable, so a crash leaves the
	// directory unusable (a clean Close flushes it whole): Open refuses a
	// directory that already holds a store, but for Restore's. FlushMode
	// and FlushInterval then do nothing. Default false.
	NoWAL bool
	// FlushInterval bounds how long an AsyncFlush write stays unsynced.
	// Default 500ms (RocketMQ flushIntervalCommitLog). Negative disables the
	// background fsync (only Flush and Close fsync), for tests.
	FlushInterval time.Duration
	// StoreHost is written into records whose StoreHost is unset; it must
	// be the broker's reachable address. Default 127.0.0.1:10911.
	StoreHost netip.AddrPort
	// FileReservedTime is how long messages are kept (RocketMQ
	// fileReservedTime, in hours there). Default 72h; negative keeps
	// messages forever.
	FileReservedTime time.Duration
	// DiskBudget caps the commit log's logical size in bytes (the sum of
	// its records, not Pebble's directory size: queue and index entries and
	// the file of the table holding the log's start come on top; see the
	// package doc); older messages are deleted beyond it. Default 0: no cap.
	DiskBudget int64
	// RetentionInterval is how often retention runs in the background.
	// Default 10s (cleanResourceInterval); negative disables the background
	// task (Retain can still be called).
	RetentionInterval time.Duration
	// ProposedRetention says truncations come only through Apply, as a
	// replicated store's leader proposes them (RetentionOp): the disk
	// check then chooses a forced clean's slice for RetentionOp but
	// deletes nothing itself, so every replica cuts the same log.
	ProposedRetention bool
	// MaxTransferCount and MaxTransferBytes cap one Get, as RocketMQ's
	// maxTransferCountOnMessageInMemory (32) and
	// maxTransferBytesOnMessageInMemory (256 KiB). A Get returns at least one
	// message whatever its size.
	MaxTransferCount int
	MaxTransferBytes int
	// MaxMessageSize is the largest stored record accepted. Default 4 MiB
	// (maxMessageSize) plus room for the header and properties.
	MaxMessageSize int
	// Now supplies store timestamps and retention's "now". Default time.Now.
	Now func() time.Time
	// OnArrival, if set, is called after appended messages become readable.
	OnArrival ArrivalHook
	// MemTableSize is Pebble's memtable size (of the log's database; the
	// one beside it takes at most 2 MiB). Larger means fewer flushes but
	// more memory and more WAL to replay on open. Default 4 MiB, or a
	// 32nd of GOMEMLIMIT when one is set (4 MiB..64 MiB): without cgo
	// Pebble's memtables and cache live on the Go heap, where the garbage
	// collector's headroom doubles what they cost, so the defaults are
	// sized for a dev cluster (see defaultMemory). While open, each
	// database keeps two memtables' memory (the one being written and one
	// Pebble recycles); ReleaseMemory reopens the databases to free them.
	MemTableSize uint64
	// CacheSize is the room for blocks in Pebble's block cache, shared by
	// both databases, beyond what their memtables are charged to it (see
	// cacheCapacity). Default 16 MiB, or a 16th of GOMEMLIMIT when one is
	// set (8 MiB..256 MiB). Pulls of several queues read the same blocks
	// of the log one after another, so even a small cache saves most
	// block reads.
	CacheSize int64
	// CheckpointBytes is how much log may be appended between checkpoints
	// of the derived data: the consume-queue entries and index entries of
	// the log appended since the last checkpoint live in memory in between
	// (about 50 to 100 bytes per message), and after a crash Open rebuilds
	// them by reading that log. Default 8 MiB. Smaller means a shorter
	// replay, less memory and more rewrites of unfilled chunks.
	CheckpointBytes int64
	// DiskMaxUsedSpaceRatio, DiskSpaceCleanForciblyRatio and
	// DiskSpaceWarningLevelRatio are percentages of the filesystem holding
	// Dir (RocketMQ's keys and defaults: 75, 85, 90): above the first,
	// retention runs at every disk check; above the second it deletes the
	// oldest log whatever its age; above the third appends are refused with
	// ErrDiskFull until usage falls back (see disk.go).
	DiskMaxUsedSpaceRatio       int
	DiskSpaceCleanForciblyRatio int
	DiskSpaceWarningLevelRatio  int
	// DiskCheckInterval is how often the disk usage is read (one statfs).
	// Default 1s; negative disables the periodic check (Open and large
	// Puts still read it).
	DiskCheckInterval time.Duration
	// MinOpenFreeBytes is the free space Open requires, so that a store on
	// a full disk fails at once with a clear error instead of failing in
	// Pebble's recovery. Default 8 MiB plus MemTableSize (what replaying the
	// WAL may flush); negative disables the check.
	MinOpenFreeBytes int64
	// OnDiskFull, if set, is told when appends start (true) or stop (false)
	// being refused for the disk, and once (true) when a write failure
	// latched the store. It runs on the store's goroutines; it must not
	// block or call the store.
	OnDiskFull func(full bool)
	// OnForcedClean, if set, is told what each forced clean (above
	// DiskSpaceCleanForciblyRatio) deleted, once it is done. It runs on the
	// disk check's goroutine; it must not block or write to the store.
	OnForcedClean func(ForcedClean)
	// Logger receives Pebble's messages. Default: errors to stderr, info
	// dropped.
	Logger pebble.Logger
}

// DefaultOptions returns options with every default filled in, for dir.
func DefaultOptions(dir string) Options {
	o := Options{Dir: dir}
	o.EnsureDefaults()
	return o
}

// EnsureDefaults fills zero fields with their defaults.
func (o *Options) EnsureDefaults() {
	if o.FS == nil || o.FS == vfs.Default {
		o.FS = osFS()
	}
	if o.FlushInterval == 0 {
		o.FlushInterval = 500 * time.Millisecond
	}
	if !o.StoreHost.IsValid() {
		o.StoreHost = netip.MustParseAddrPort("127.0.0.1:10911")
	}
	if o.FileReservedTime == 0 {
		o.FileReservedTime = 72 * time.Hour
	}
	if o.RetentionInterval == 0 {
		o.RetentionInterval = 10 * time.Second
	}
	if o.MaxTransferCount == 0 {
		o.MaxTransferCount = 32
	}
	if o.MaxTransferBytes == 0 {
		o.MaxTransferBytes = 256 << 10
	}
	if o.MaxMessageSize == 0 {
		o.MaxMessageSize = 4<<20 + 64<<10
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	memtable, cache := defaultMemory(debug.SetMemoryLimit(-1))
	if o.MemTableSize == 0 {
		o.MemTableSize = memtable
	}
	if o.CacheSize == 0 {
		o.CacheSize = cache
	}
	if o.CheckpointBytes == 0 {
		o.CheckpointBytes = 8 << 20
	}
	if o.DiskMaxUsedSpaceRatio == 0 {
		o.DiskMaxUsedSpaceRatio = DefaultDiskMaxUsedSpaceRatio
	}
	if o.DiskSpaceCleanForciblyRatio == 0 {
		o.DiskSpaceCleanForciblyRatio = DefaultDiskSpaceCleanForciblyRatio
	}
	if o.DiskSpaceWarningLevelRatio == 0 {
		o.DiskSpaceWarningLevelRatio = DefaultDiskSpaceWarningLevelRatio
	}
	if o.DiskCheckInterval == 0 {
		o.DiskCheckInterval = time.Second
	}
	if o.MinOpenFreeBytes == 0 {
		o.MinOpenFreeBytes = 8<<20 + int64(o.MemTableSize)
	}
	if o.Logger == nil {
		o.Logger = quietLogger{}
	}
}

// The disk ratios' defaults, RocketMQ's (percent).
const (
	DefaultDiskMaxUsedSpaceRatio       = 75
	DefaultDiskSpaceCleanForciblyRatio = 85
	DefaultDiskSpaceWarningLevelRatio  = 90
)

// defaultMemory returns the default MemTableSize and CacheSize for a Go
// memory limit (math.MaxInt64: none set).
func defaultMemory(limit int64) (memtable uint64, cache int64) {
	if limit <= 0 || limit == math.MaxInt64 {
		return 4 << 20, 16 << 20
	}
	return uint64(min(max(limit/32, 4<<20), 64<<20)), min(max(limit/16, 8<<20), 256<<20)
}

// ErrBadOptions is returned (wrapped) by Validate.
var ErrBadOptions = errors.New("store: bad options")

// Validate names the first invalid field.
func (o *Options) Validate() error {
	switch {
	case o.Dir == "":
		return fmt.Errorf("%w: Dir is empty", ErrBadOptions)
	case o.FlushMode != AsyncFlush && o.FlushMode != SyncFlush:
		return fmt.Errorf("%w: FlushMode %d", ErrBadOptions, o.FlushMode)
	case o.DiskBudget < 0:
		return fmt.Errorf("%w: DiskBudget %d", ErrBadOptions, o.DiskBudget)
	case o.MaxTransferCount < 0 || o.MaxTransferBytes < 0:
		return fmt.Errorf("%w: MaxTransferCount/Bytes %d/%d", ErrBadOptions, o.MaxTransferCount, o.MaxTransferBytes)
	case o.MaxMessageSize < 0:
		return fmt.Errorf("%w: MaxMessageSize %d", ErrBadOptions, o.MaxMessageSize)
	case o.CheckpointBytes < 0:
		return fmt.Errorf("%w: CheckpointBytes %d", ErrBadOptions, o.CheckpointBytes)
	case !ratioOK(o.DiskMaxUsedSpaceRatio) || !ratioOK(o.DiskSpaceCleanForciblyRatio) || !ratioOK(o.DiskSpaceWarningLevelRatio):
		return fmt.Errorf("%w: disk ratios %d/%d/%d not within 1..99", ErrBadOptions,
			o.DiskMaxUsedSpaceRatio, o.DiskSpaceCleanForciblyRatio, o.DiskSpaceWarningLevelRatio)
	case o.MemTableSize > 0 && o.MemTableSize < 1<<20:
		return fmt.Errorf("%w: MemTableSize %d below 1 MiB", ErrBadOptions, o.MemTableSize)
	}
	return nil
}

// ratioOK accepts a disk ratio; 0 is its default (before EnsureDefaults).
func ratioOK(r int) bool { return r >= 0 && r < 100 }

type quietLogger struct{}

func (quietLogger) Infof(string, ...any) {}
func (quietLogger) Errorf(format string, args ...any) {
	pebble.DefaultLogger.Errorf(format, args...)
}
func (quietLogger) Fatalf(format string, args ...any) {
	pebble.DefaultLogger.Fatalf(format, args...)
}
