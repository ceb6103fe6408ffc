package replica

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/runnelmq/runnel/internal/periodic"
	"github.com/runnelmq/runnel/store/walfs"
)

// logStore is the raft log as builds before session 24 kept it, read now
// only to move such a log to raft-wal (migratePebbleLog; raftLog is the
// node's log); it can still write one, for the tests of that move. It is
// raft's LogStore and StableStore over one Pebble database of
// its own (never the message store's: raft's log must be stored before an
// AppendEntries answer, fsynced or in the page cache as the flush mode
// says, while the store is rebuilt from the log). Keys:
//
//	'l' index u64 big-endian -> term uvarint | type u8 | data | extensions | appendedAt
//	's' key                  -> value (StableStore)
//
// Big-endian indexes sort in log order, so FirstIndex and LastIndex are one
// seek each and DeleteRange (log compaction after a snapshot) is one range
// tombstone.
type logStore struct {
	db   *pebble.DB
	sync *pebble.WriteOptions
	// wal, when the log's fsyncs are deferred (openLogStore's syncEvery),
	// is the filesystem whose WAL files answer a commit's sync once the
	// bytes are in the page cache; a flusher fsyncs them every syncEvery,
	// and the stable store's writes fsync them at once.
	wal      *walfs.FS
	stop     chan struct{}
	flushing sync.WaitGroup
	logger   hclog.Logger
	// writes and entries count StoreLogs calls and the entries they
	// stored: how well raft groups concurrent proposals; reads counts
	// GetLog calls that reached Pebble (what the log cache spares).
	writes, entries, reads atomic.Int64
}

const (
	prefixLog    = 'l'
	prefixStable = 's'
)

var errBadLogEntry = errors.New("replica: bad raft log entry")

// openLogStore opens the raft log in dir. noSync commits without a sync
// (tests: a kill may lose what raft was told is stored). syncEvery > 0
// defers the log's fsyncs (the broker's ASYNC_FLUSH, see Config.LogSyncInterval):
// a write is acknowledged once it is in the page cache, which a process
// crash cannot take, and fsynced within syncEvery; term and vote (the
// stable store) are fsynced before they are acknowledged, as raft's
// safety needs across any crash.
func openLogStore(dir string, fs vfs.FS, noSync bool, syncEvery time.Duration, logger hclog.Logger) (*logStore, error) {
	ls := &logStore{sync: pebble.Sync, logger: logger}
	if noSync {
		ls.sync = pebble.NoSync
	} else if syncEvery > 0 {
		ls.wal = walfs.New(fs, true)
		fs = ls.wal
	}
	opts := &pebble.Options{FS: fs, Logger: quietPebble{}}
	// Entries are written once, read back from the memtable or the log
	// cache while they are recent, and deleted after a snapshot: most are
	// never read from an sstable, so compressing them on every flush and
	// compaction is CPU spent for nothing.
	for i := range opts.Levels {
		opts.Levels[i].Compression = func() *sstable.CompressionProfile { return sstable.NoCompression }
	}
	db, err := pebble.Open(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("replica: open raft log %s: %w", dir, err)
	}
	ls.db = db
	if ls.wal != nil {
		ls.stop = make(chan struct{})
		ls.flushing.Add(1)
		go func() {
			defer ls.flushing.Done()
			periodic.Run(ls.stop, syncEvery, ls.syncWAL)
		}()
	}
	return ls, nil
}

// syncWAL fsyncs the deferred WAL. A failed fsync is logged and tried
// again at the next tick: the writes stay in the page cache, so what is at
// risk is what an OS crash would take, as with the store's ASYNC_FLUSH.
func (ls *logStore) syncWAL() {
	if err := ls.wal.SyncAll(); err != nil {
		ls.logger.Error("replica: raft log fsync", "error", err)
	}
}

// Close stops the flusher and closes the database (which fsyncs its WAL).
func (ls *logStore) Close() error {
	if ls.stop != nil {
		close(ls.stop)
		ls.flushing.Wait()
	}
	return ls.db.Close()
}

func logKey(i uint64) []byte {
	k := make([]byte, 9)
	k[0] = prefixLog
	binary.BigEndian.PutUint64(k[1:], i)
	return k
}

// FirstIndex implements raft.LogStore; 0 means no entries.
func (ls *logStore) FirstIndex() (uint64, error) { return ls.endIndex((*pebble.Iterator).First) }

// LastIndex implements raft.LogStore; 0 means no entries.
func (ls *logStore) LastIndex() (uint64, error) { return ls.endIndex((*pebble.Iterator).Last) }

// endIndex is the index of the log entry seek moves to (First or Last),
// 0 when there is none.
func (ls *logStore) endIndex(seek func(*pebble.Iterator) bool) (uint64, error) {
	it, err := ls.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixLog}, UpperBound: []byte{prefixLog + 1}})
	if err != nil {
		return 0, err
	}
	defer it.Close()
	if !seek(it) {
		return 0, it.Error()
	}
	return binary.BigEndian.Uint64(it.Key()[1:]), nil
}

// GetLog implements raft.LogStore.
func (ls *logStore) GetLog(index uint64, log *raft.Log) error {
	ls.reads.Add(1)
	v, closer, err := ls.db.Get(logKey(index))
	if errors.Is(err, pebble.ErrNotFound) {
		return raft.ErrLogNotFound
	}
	if err != nil {
		return err
	}
	defer closer.Close()
	return decodeLog(index, v, log)
}

// StoreLog implements raft.LogStore.
func (ls *logStore) StoreLog(log *raft.Log) error { return ls.StoreLogs([]*raft.Log{log}) }

// StoreLogs implements raft.LogStore: one batch, one fsync, however many
// entries raft hands over (it groups concurrent Applies).
func (ls *logStore) StoreLogs(logs []*raft.Log) error {
	b := ls.db.NewBatch()
	defer b.Close()
	var buf []byte
	for _, l := range logs {
		buf = encodeLog(buf[:0], l)
		if err := b.Set(logKey(l.Index), buf, nil); err != nil {
			return err
		}
	}
	ls.writes.Add(1)
	ls.entries.Add(int64(len(logs)))
	return ls.commit(b)
}

// commit writes b, waiting for its fsync unless the log runs unsynced.
// A synced commit goes through ApplyNoSyncWait and SyncWait because
// Pebble's plain synced Commit answers a failed WAL write (ENOSPC) with its
// logger's Fatalf, an os.Exit after one line; this way raft gets the error
// (a leader steps down, a follower refuses the append) and a healthy node
// carries the group.
func (ls *logStore) commit(b *pebble.Batch) error {
	if ls.sync != pebble.Sync {
		return b.Commit(ls.sync)
	}
	if err := ls.db.ApplyNoSyncWait(b, pebble.Sync); err != nil {
		return err
	}
	return b.SyncWait()
}

// DeleteRange implements raft.LogStore (min and max inclusive).
func (ls *logStore) DeleteRange(min, max uint64) error {
	if max < min {
		return nil
	}
	end := logKey(max)
	if max == ^uint64(0) {
		end = []byte{prefixLog + 1}
	} else {
		binary.BigEndian.PutUint64(end[1:], max+1)
	}
	b := ls.db.NewBatch()
	defer b.Close()
	if err := b.DeleteRange(logKey(min), end, nil); err != nil {
		return err
	}
	return ls.commit(b)
}

func stableKey(k []byte) []byte { return append([]byte{prefixStable}, k...) }

// Set implements raft.StableStore. With the log's fsyncs deferred it
// still fsyncs before it returns: a node that forgot its vote or term in
// an OS crash could vote twice in one term.
func (ls *logStore) Set(k, v []byte) error {
	b := ls.db.NewBatch()
	defer b.Close()
	if err := b.Set(stableKey(k), v, nil); err != nil {
		return err
	}
	if err := ls.commit(b); err != nil {
		return err
	}
	if ls.wal != nil {
		return ls.wal.SyncAll()
	}
	return nil
}

// Get implements raft.StableStore; a missing key is an empty value, as
// raft expects of a fresh node.
func (ls *logStore) Get(k []byte) ([]byte, error) {
	v, closer, err := ls.db.Get(stableKey(k))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	return append([]byte(nil), v...), nil
}

// SetUint64 implements raft.StableStore.
func (ls *logStore) SetUint64(k []byte, v uint64) error {
	return ls.Set(k, binary.BigEndian.AppendUint64(nil, v))
}

// GetUint64 implements raft.StableStore; a missing key is 0.
func (ls *logStore) GetUint64(k []byte) (uint64, error) {
	v, err := ls.Get(k)
	if err != nil || len(v) == 0 {
		return 0, err
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("replica: stable key %q holds %d bytes, want 8", k, len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

func encodeLog(dst []byte, l *raft.Log) []byte {
	dst = binary.AppendUvarint(dst, l.Term)
	dst = append(dst, byte(l.Type))
	dst = binary.AppendUvarint(dst, uint64(len(l.Data)))
	dst = append(dst, l.Data...)
	dst = binary.AppendUvarint(dst, uint64(len(l.Extensions)))
	dst = append(dst, l.Extensions...)
	var at int64
	if !l.AppendedAt.IsZero() {
		at = l.AppendedAt.UnixNano()
	}
	return binary.AppendVarint(dst, at)
}

func decodeLog(index uint64, b []byte, l *raft.Log) error {
	*l = raft.Log{Index: index}
	var n int
	if l.Term, n = binary.Uvarint(b); n <= 0 || len(b) < n+1 {
		return errBadLogEntry
	}
	l.Type, b = raft.LogType(b[n]), b[n+1:]
	var ok bool
	if l.Data, b, ok = bytesField(b); !ok {
		return errBadLogEntry
	}
	if l.Extensions, b, ok = bytesField(b); !ok {
		return errBadLogEntry
	}
	at, n := binary.Varint(b)
	if n <= 0 || n != len(b) {
		return errBadLogEntry
	}
	if at != 0 {
		l.AppendedAt = time.Unix(0, at)
	}
	return nil
}

// bytesField reads a uvarint length and that many bytes, copied (Pebble's
// value is only valid until its closer runs).
func bytesField(b []byte) (field, rest []byte, ok bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < n {
		return nil, nil, false
	}
	b = b[k:]
	if n > 0 {
		field = append([]byte(nil), b[:n]...)
	}
	return field, b[n:], true
}

// quietPebble drops Pebble's informational logging and keeps its errors.
type quietPebble struct{}

func (quietPebble) Infof(string, ...any) {}
func (quietPebble) Errorf(format string, args ...any) {
	pebble.DefaultLogger.Errorf("replica: raft log: "+format, args...)
}
func (quietPebble) Fatalf(format string, args ...any) {
	pebble.DefaultLogger.Fatalf("replica: raft log: "+format, args...)
}
