package replica

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/hashicorp/raft"
)

// logStore is the raft log as builds before session 24 kept it, a Pebble
// database of its own, read now only to move such a log to raft-wal
// (migratePebbleLog; raftLog is the node's log). It still writes one, every
// commit fsynced, for the tests of that move. Keys:
//
//	'l' index u64 big-endian -> term uvarint | type u8 | data | extensions | appendedAt
//	's' key                  -> value (StableStore)
//
// Big-endian indexes sort in log order, so FirstIndex and LastIndex are one
// seek each and DeleteRange is one range tombstone.
type logStore struct {
	db *pebble.DB
}

const (
	prefixLog    = 'l'
	prefixStable = 's'
)

var errBadLogEntry = errors.New("replica: bad raft log entry")

// openLogStore opens the Pebble raft log in dir.
func openLogStore(dir string, fs vfs.FS) (*logStore, error) {
	opts := &pebble.Options{FS: fs, Logger: quietPebble{}}
	db, err := pebble.Open(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("replica: open raft log %s: %w", dir, err)
	}
	return &logStore{db: db}, nil
}

// Close closes the database.
func (ls *logStore) Close() error { return ls.db.Close() }

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

// StoreLogs implements raft.LogStore: one batch, one fsync.
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
	return b.Commit(pebble.Sync)
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
	return b.Commit(pebble.Sync)
}

func stableKey(k []byte) []byte { return append([]byte{prefixStable}, k...) }

// Set implements raft.StableStore.
func (ls *logStore) Set(k, v []byte) error {
	return ls.db.Set(stableKey(k), v, pebble.Sync)
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
