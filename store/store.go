package store

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"

	"github.com/runnelmq/runnel/internal/latch"
	"github.com/runnelmq/runnel/internal/periodic"
	"github.com/runnelmq/runnel/store/commitlog"
	"github.com/runnelmq/runnel/store/consumequeue"
	"github.com/runnelmq/runnel/store/index"
	"github.com/runnelmq/runnel/store/meta"
	"github.com/runnelmq/runnel/store/walfs"
)

// ErrClosed is returned by every method of a closed Store.
var ErrClosed = errors.New("store: closed")

// ErrOlderFormat is returned (wrapped) by Open for a directory holding a
// store in a layout this version does not read. There is no migration.
var ErrOlderFormat = errors.New("store: older Runnel store format")

// ErrFailed is returned (wrapped with the cause) once a write could not be
// made durable; the store then refuses writes until it is reopened.
var ErrFailed = errors.New("store: failed")

// QueueID names a consume queue.
type QueueID = consumequeue.QueueID

// minPhysKey persists the commit log's first live offset across restarts,
// so the write position never moves back even when retention emptied the log.
var minPhysKey = meta.StateKey("minPhys")

// queue is the in-memory state of one consume queue.
type queue struct {
	// next is the next offset to assign. Guarded by Store.applyMu.
	next int64
	// min and readable bound what readers may see: [min, readable). They
	// only grow, and readable only covers acknowledged (durable) writes.
	min      atomic.Int64
	readable atomic.Int64
	// hint remembers where the last Get of this queue ended.
	hint atomic.Pointer[readHint]
	// chunk is the last queue chunk a Get read from Pebble, decoded (see
	// entryCursor.at).
	chunk atomic.Pointer[readChunk]

	// mu guards tail: the entries [tailStart, tailStart+len(tail)) not yet
	// known to be in Pebble (see derived.go). The apply path appends,
	// publish trims filled chunks, readers look here first.
	mu        sync.RWMutex
	tailStart int64
	tail      []consumequeue.Entry
	dirty     bool // applyMu: in Store.dirty
}

// readHint: queue offset `offset` is probably the record at phys.
type readHint struct{ offset, phys int64 }

// readChunk is a decoded queue chunk: entries from queue offset first, of
// the chunk starting at start. Never changed once published.
type readChunk struct {
	start, first int64
	entries      []consumequeue.Entry
}

// Store is the message store. All methods are safe for concurrent use.
type Store struct {
	opts Options
	// log holds the commit log; db everything else (see Open).
	log   *pebble.DB
	db    *pebble.DB
	wal   *walfs.FS
	cache *pebble.Cache

	// applyMu serialises the apply path: offsets are assigned and batches
	// enter Pebble's commit pipeline in one order.
	applyMu     sync.Mutex
	nextPhys    int64 // applyMu
	lastStoreTs int64 // applyMu
	closing     bool  // applyMu
	inflight    sync.WaitGroup
	derivedPhys int64        // applyMu: Pebble holds all derived data below it
	chunkBuf    []byte       // applyMu: a chunk being encoded
	dirty       []dirtyQueue // applyMu: queues changed since the last checkpoint

	// segMu guards openSeg (written by the apply path, which also holds
	// applyMu) and sealed: index segments sealed but not yet published.
	segMu   sync.RWMutex
	openSeg *index.Segment
	sealed  []*index.Segment

	failed atomic.Pointer[error]
	// logOnly says the failure was the log database's alone: ops that
	// write only the other database go on (see apply).
	logOnly atomic.Bool
	// disk and forceCut are the disk-space state (see disk.go): forceCut
	// is the cutoff of the current forced clean, 0 if none.
	disk     diskState
	forceCut atomic.Int64
	// retainMu serialises Retain and the freeing of what truncations
	// deleted (see freeDeletedLocked): the log below deletedTo was deleted
	// by durable truncations, below freedTo it was also freed; freeKick
	// (one slot) wakes the freer.
	retainMu  sync.Mutex
	freedTo   int64 // retainMu
	deletedTo atomic.Int64
	freeKick  chan struct{}
	syncs     atomic.Int64 // see Stats
	recycled  atomic.Int64 // see Stats
	// chunkReads counts queue chunks read from Pebble by Gets (tests).
	chunkReads atomic.Int64
	restored   bool // opened by Restore

	queuesMu sync.RWMutex
	queues   map[QueueID]*queue

	// [minPhys, readablePhys) is the readable part of the log.
	minPhys      atomic.Int64
	readablePhys atomic.Int64

	// authVersion counts the access-control ops applied (AuthVersion).
	authVersion atomic.Uint64
	// groupsVersion counts the group-config ops applied (GroupsVersion).
	groupsVersion atomic.Uint64

	// closeMu is held shared by every reader of the databases and by every
	// write from its first batch to its publish, and exclusively by Close
	// and by a reopen (ReleaseMemory), so Pebble is never used after it
	// was closed, nor a batch committed to a database that did not make it.
	closeMu sync.RWMutex
	closed  bool
	// dbsGone (closeMu) says a reopen closed the databases and could not
	// open them again; failed says why (see reopen).
	dbsGone bool
	// workBase is the flushes and compactions of the databases a reopen
	// closed (BackgroundWork); reopens counts reopens.
	workBase atomic.Uint64
	reopens  atomic.Int64

	stop chan struct{}
	wg   sync.WaitGroup
}

// Open opens or creates the store in opts.Dir, recovering its state from
// Pebble: the write position from the last log record, each queue's range
// from its first and last entries. Pebble's own WAL replay makes the log,
// queues, index and metadata consistent, because every mutation was one
// batch.
func Open(opts Options) (*Store, error) { return open(opts, false) }

// open is Open; restored says the directory is a restored snapshot (see
// recoverDerived).
func open(opts Options, restored bool) (*Store, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if private(opts.FS) {
		if err := PrivateDir(nil, opts.Dir); err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
	}
	s := &Store{opts: opts, queues: make(map[QueueID]*queue), stop: make(chan struct{}), restored: restored,
		freeKick: make(chan struct{}, 1)}
	epoch := authEpochs.Add(1) << 32
	s.authVersion.Store(epoch)
	s.groupsVersion.Store(epoch)
	if names, err := opts.FS.List(opts.Dir); err == nil {
		for _, n := range names {
			if strings.HasPrefix(n, "MANIFEST") || strings.HasPrefix(n, "MARKER") {
				return nil, fmt.Errorf("%w (one Pebble database) in %s; move it away or use a new directory", ErrOlderFormat, opts.Dir)
			}
		}
		if opts.NoWAL && !restored && len(names) > 0 {
			// Without a WAL a crash loses the memtables, and with them
			// the agreement between the two databases that recovery
			// counts on.
			return nil, fmt.Errorf("%w: NoWAL opens only a new store, and %s holds one", ErrBadOptions, opts.Dir)
		}
	}
	if err := s.checkOpenSpace(); err != nil {
		return nil, err
	}
	s.wal = walfs.New(opts.FS, opts.FlushMode == AsyncFlush)
	cache := pebble.NewCache(cacheCapacity(opts))
	s.cache = cache
	logDB, db, releaseGates, err := s.openDBs()
	if err != nil {
		cache.Unref()
		return nil, err
	}
	s.log, s.db = logDB, db
	if err := s.recover(); err != nil {
		_ = db.Close()
		_ = logDB.Close()
		cache.Unref()
		return nil, err
	}
	// What a crash or a close left deleted but not freed goes before any
	// compaction could take it in (see freeDeletedLocked).
	s.deletedTo.Store(s.minPhys.Load())
	s.retainMu.Lock()
	s.freeDeletedLocked()
	s.retainMu.Unlock()
	releaseGates()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.freer()
	}()
	if opts.FlushMode == AsyncFlush && opts.FlushInterval > 0 && !opts.NoWAL {
		s.goEvery(opts.FlushInterval, s.syncWAL)
	}
	if opts.RetentionInterval > 0 {
		s.goEvery(opts.RetentionInterval, s.retainNow)
	}
	s.checkDisk()
	if opts.DiskCheckInterval > 0 {
		s.goEvery(opts.DiskCheckInterval, s.watchDisk)
	}
	return s, nil
}

// openDBs opens the store's two Pebble databases, their compactions held
// until the caller calls release (see compactionGate). Two databases: the
// log's keys only ever grow, so Pebble's flushes of it never overlap and
// are not rewritten by compactions; every other key (queue chunks, index
// segments, metadata) lives beside it, where its overlaps are cheap. One
// database held both, and compacted the log 3.5x as much as raw Pebble
// does.
func (s *Store) openDBs() (logDB, db *pebble.DB, release func(), err error) {
	logDB, logGate, err := s.openDB("log", s.opts.MemTableSize, true)
	if err != nil {
		return nil, nil, nil, err
	}
	db, gate, err := s.openDB("meta", metaMemTable(s.opts), false)
	if err != nil {
		_ = logDB.Close()
		return nil, nil, nil, err
	}
	return logDB, db, func() { logGate.release(); gate.release() }, nil
}

// openDB opens one of the store's databases, in the directory name under
// Dir, on the store's WAL filesystem and block cache.
func (s *Store) openDB(name string, memtable uint64, logBlocks bool) (*pebble.DB, *compactionGate, error) {
	popts := &pebble.Options{
		FS:                 s.wal,
		Cache:              s.cache,
		MemTableSize:       memtable,
		Logger:             s.opts.Logger,
		FormatMajorVersion: pebble.FormatNewest,
		// cacheCapacity counts on at most this many memtables.
		MemTableStopWritesThreshold: memTablesQueued,
		DisableWAL:                  s.opts.NoWAL,
	}
	for i := range popts.Levels {
		popts.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
		if logBlocks {
			// Pulls read the log in runs of records: a 4 KiB block held
			// three 1 KiB messages, so a pull of 32 paid eleven block
			// reads (a pread, a decompression and a cache insert each),
			// a quarter of the broker's CPU while consumers drained a
			// topic. Uncompressed blocks of the same size measured no
			// better than Snappy's (the default, kept: it halves the
			// disk for compressible bodies).
			popts.Levels[i].BlockSize = logBlockSize
		}
	}
	// Compactions wait until the store is open (see compactionGate).
	gate := newCompactionGate()
	popts.Experimental.CompactionScheduler = gate
	dir := s.opts.FS.PathJoin(s.opts.Dir, name)
	db, err := pebble.Open(dir, popts)
	if err != nil {
		return nil, nil, fmt.Errorf("store: open %s: %w", dir, err)
	}
	return db, gate, nil
}

// logBlockSize is the block size of the log's tables. Pebble's readahead
// reads ahead of a sequential iterator anyway; larger blocks mean fewer
// block-cache lookups and reads per message. A point read (one message by
// offset) reads a whole block, as RocketMQ reads a page of its log.
const logBlockSize = 32 << 10

// metaMemTableSize caps the memtable of the database beside the log: its
// keys are few and small (a checkpoint writes about 100 bytes a message
// appended since the last; a larger batch goes to Pebble as a flushable
// batch of its own, not through the memtable).
const metaMemTableSize = 2 << 20

// metaMemTable is the memtable size of the database beside the log.
func metaMemTable(o Options) uint64 { return min(o.MemTableSize, metaMemTableSize) }

// memTablesQueued is both databases' MemTableStopWritesThreshold (Pebble's
// default): how many memtables a database holds at most, the one being
// written and those waiting for their flush.
const memTablesQueued = 2

// cacheCapacity is the capacity of Pebble's cache that leaves CacheSize of
// it to blocks. Pebble charges every memtable of a database to the cache
// it was given (Cache.Reserve, its budget of cache and memtables in one),
// and the two databases' memtables can take memTablesQueued times their
// size: given CacheSize alone, 16 MiB against memtables of 8 MiB each, the
// memtables took it all, no block was ever cached (0 hits in 33,835 reads
// of 100,000 messages pulled from 8 queues), and every pull read and
// decompressed again each 32 KiB block it touched, for each queue.
func cacheCapacity(o Options) int64 {
	memtables := int64(o.MemTableSize + metaMemTable(o))
	return o.CacheSize + memTablesQueued*memtables
}

// formatKey holds the store's layout version. Version 2 keeps queue
// entries in chunks and the index in segments; version 1 (no key) had a
// Pebble key per entry, and is refused rather than misread.
var formatKey = meta.StateKey("format")

const formatVersion = 2

func (s *Store) checkFormat() error {
	v, ok, err := meta.GetInt64(s.db, formatKey)
	switch {
	case err != nil:
		return err
	case ok && v == formatVersion:
		return nil
	case ok:
		return fmt.Errorf("store: %s has store format %d, this build reads %d", s.opts.Dir, v, formatVersion)
	}
	it, err := s.db.NewIter(nil)
	if err != nil {
		return err
	}
	empty := !it.First()
	if err := it.Close(); err != nil {
		return err
	}
	if !empty {
		return fmt.Errorf("%w (one key per queue entry) in %s; move it away or use a new directory", ErrOlderFormat, s.opts.Dir)
	}
	b := s.db.NewBatch()
	defer b.Close()
	_ = b.Set(formatKey, meta.EncodeInt64(formatVersion), nil)
	return s.commitSync(s.db, b) // not db.Set: see commitSync
}

func (s *Store) recover() error {
	if err := s.checkFormat(); err != nil {
		return err
	}
	minPhys, _, err := meta.GetInt64(s.db, minPhysKey)
	if err != nil {
		return fmt.Errorf("store: recover: %w", err)
	}
	if first, ok, err := commitlog.First(s.log); err != nil {
		return fmt.Errorf("store: recover: %w", err)
	} else if ok && first.Phys > minPhys {
		minPhys = first.Phys
	} else if ok && first.Phys < minPhys {
		// A truncation made its side durable, then the crash came before
		// its log deletion did: finish it.
		b := s.log.NewBatch()
		defer b.Close()
		_ = b.DeleteRange(commitlog.Key(first.Phys), commitlog.Key(minPhys), nil)
		if err := s.commitSync(s.log, b); err != nil { // not log.DeleteRange: see commitSync
			return fmt.Errorf("store: recover: %w", err)
		}
	}
	next := minPhys
	last, ok, err := commitlog.Last(s.log)
	if err != nil {
		return fmt.Errorf("store: recover: %w", err)
	}
	if ok && last.Phys+last.Size > next {
		next = last.Phys + last.Size
		s.lastStoreTs = last.StoreTimestamp
	}
	s.nextPhys = next
	if err := s.clampDerived(next); err != nil {
		return fmt.Errorf("store: recover: %w", err)
	}
	s.minPhys.Store(minPhys)
	s.readablePhys.Store(next)
	ranges, err := consumequeue.Scan(s.db)
	if err != nil {
		return fmt.Errorf("store: recover queues: %w", err)
	}
	for id, r := range ranges {
		q := &queue{next: r.Max}
		q.min.Store(r.Min)
		q.readable.Store(r.Max)
		s.queues[id] = q
	}
	if err := s.recoverDerived(); err != nil {
		return fmt.Errorf("store: recover queues and index: %w", err)
	}
	return nil
}

// goEvery runs fn every interval on a background goroutine until Close.
func (s *Store) goEvery(interval time.Duration, fn func()) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		periodic.Run(s.stop, interval, fn)
	}()
}

// syncWAL fsyncs the WAL (AsyncFlush's flusher, every FlushInterval).
func (s *Store) syncWAL() {
	if err := s.wal.SyncAll(); err != nil {
		s.fail(fmt.Errorf("wal fsync: %w", err))
	}
}

func (s *Store) retainNow() {
	if s.failed.Load() != nil {
		return // said once, by fail
	}
	if _, err := s.Retain(s.opts.Now()); err != nil && !errors.Is(err, ErrClosed) {
		s.opts.Logger.Errorf("store: retention: %v", err)
	}
}

// fail latches the store failed with err (the first error wins) and
// returns the latched error.
func (s *Store) fail(err error) error { return s.failDB(err, false) }

// failDB is fail; logOnly says only the log's database failed.
func (s *Store) failDB(err error, logOnly bool) error {
	e := fmt.Errorf("%w: %w", ErrFailed, failReason(err))
	if !logOnly {
		s.logOnly.Store(false)
	}
	if s.failed.CompareAndSwap(nil, &e) {
		s.logOnly.Store(logOnly)
		s.opts.Logger.Errorf("%v", e)
		if s.opts.OnDiskFull != nil {
			s.opts.OnDiskFull(true)
		}
	}
	return *s.failed.Load()
}

// Flush makes every acknowledged write durable now: an fsync of the WAL,
// or without one (NoWAL) a flush of the memtables to tables.
func (s *Store) Flush() error {
	if err := s.readLock(); err != nil {
		return err
	}
	defer s.closeMu.RUnlock()
	if s.opts.NoWAL {
		return s.flushDBs()
	}
	return s.wal.SyncAll()
}

// Close stops the background tasks, waits for writes in flight, fsyncs and
// closes Pebble. Later calls return ErrClosed. Order matters: background
// tasks use the apply path, and in-flight writes must finish their sync
// wait before Pebble closes.
func (s *Store) Close() error {
	if !latch.Set(&s.applyMu, &s.closing) {
		return ErrClosed
	}

	close(s.stop)
	s.wg.Wait()
	s.inflight.Wait()
	cerr := s.checkpointOnClose()

	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	s.closed = true
	var err error
	errp := s.failed.Load()
	logFailed := errp != nil
	switch {
	case errp != nil && s.logOnly.Load():
		// Pebble panics in a flush after a failed WAL write (it rotates
		// the WAL, whose close fails), and in any flush whose new WAL
		// cannot be created (a disk still full), so neither database
		// flushes: what they acknowledged is in their WALs, fsynced
		// here, which the next Open replays (consumer offsets included).
		err = s.wal.SyncAll()
	case errp != nil:
		err = *errp
	default:
		// Flushing the memtable leaves no WAL to replay, so a clean
		// restart opens in milliseconds; after a crash Open replays at
		// most MemTableSize of WAL.
		err = s.log.Flush()
		if ferr := s.db.Flush(); err == nil {
			err = ferr
		}
		if err == nil {
			err = cerr
		}
		if serr := s.wal.SyncAll(); err == nil {
			err = serr
		}
	}
	if !s.dbsGone {
		if cerr := s.db.Close(); err == nil {
			err = cerr
		}
		// A failed log's Close repeats its failure, which fail reported.
		if cerr := s.log.Close(); err == nil && !logFailed {
			err = cerr
		}
	}
	s.cache.Unref()
	if err != nil {
		return fmt.Errorf("store: close: %w", err)
	}
	return nil
}

// checkpointOnClose writes what derived data is only in memory, so that
// the next Open has nothing to replay. (Like the checkpoint Open writes
// after a crash, it is local to this store: replicas checkpoint where they
// stop.)
func (s *Store) checkpointOnClose() error {
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	if s.failed.Load() != nil || s.derivedPhys >= s.nextPhys && len(s.dirty) == 0 {
		return nil
	}
	b := s.db.NewBatch()
	defer b.Close()
	p := &pending{}
	s.checkpointLocked(b, p, s.nextPhys)
	if err := s.commitSync(s.db, b); err != nil {
		return fmt.Errorf("store: checkpoint: %w", err)
	}
	s.releaseDerived(p)
	return nil
}

// readLock takes the shared close lock; the caller must RUnlock on success.
func (s *Store) readLock() error {
	s.closeMu.RLock()
	if s.closed {
		s.closeMu.RUnlock()
		return ErrClosed
	}
	if s.dbsGone {
		s.closeMu.RUnlock()
		return *s.failed.Load()
	}
	return nil
}

func (s *Store) queue(topic string, queueID int32) *queue {
	s.queuesMu.RLock()
	q := s.queues[QueueID{Topic: topic, ID: queueID}]
	s.queuesMu.RUnlock()
	return q
}

// MinOffset is the first readable offset of a queue (0 if it is unknown).
func (s *Store) MinOffset(topic string, queueID int32) int64 {
	if q := s.queue(topic, queueID); q != nil {
		return q.min.Load()
	}
	return 0
}

// MaxOffset is one past the last readable offset of a queue (0 if unknown).
func (s *Store) MaxOffset(topic string, queueID int32) int64 {
	if q := s.queue(topic, queueID); q != nil {
		return q.readable.Load()
	}
	return 0
}

// Stats are counters of what the store did since Open.
type Stats struct {
	// Syncs counts the store's commits that waited for their WAL write to
	// be durable (per the flush mode): one per database an op wrote, and
	// those of Open and Close; none without a WAL (NoWAL). Pebble may
	// serve concurrent ones with one fsync; each is still a wait a caller
	// pays for.
	Syncs int64
	// Recycled counts Get results whose records were handed back
	// (GetResult.Recycle) for later Gets to reuse.
	Recycled int64
}

// Stats returns the store's counters.
func (s *Store) Stats() Stats { return Stats{Syncs: s.syncs.Load(), Recycled: s.recycled.Load()} }

// MinPhysOffset is the first live commit-log offset.
func (s *Store) MinPhysOffset() int64 { return s.minPhys.Load() }

// MaxPhysOffset is the end of the readable commit log.
func (s *Store) MaxPhysOffset() int64 { return s.readablePhys.Load() }

// Queues lists every known queue with its readable range.
func (s *Store) Queues() map[QueueID]consumequeue.Range {
	s.queuesMu.RLock()
	defer s.queuesMu.RUnlock()
	out := make(map[QueueID]consumequeue.Range, len(s.queues))
	for id, q := range s.queues {
		out[id] = consumequeue.Range{Min: q.min.Load(), Max: q.readable.Load()}
	}
	return out
}
