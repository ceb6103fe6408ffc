package store

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"

	"github.com/cockroachdb/pebble/v2"

	"github.com/runnelmq/runnel/store/meta"
)

// A snapshot is every live key of both databases as of one point in the op
// sequence, as a stream (what a raft FSM's snapshot sink takes):
//
//	"RNLSNAP" version u8 (1)
//	{ db u8 (1 log, 2 meta, 3 state) | uvarint len | key | uvarint len | value }
//	0 u8 | entries u64 | crc32c u32 of every byte before it
//
// Both databases are read from Pebble snapshots taken together under the
// apply lock, so they agree. What is only in memory (queue tails, the open
// index segment) is not in it: it is a function of the log past the last
// checkpoint, which Restore's Open replays (see recoverDerived).
const snapshotVersion = 1

var snapshotMagic = []byte("RNLSNAP")

// stateLastStoreTs names the store time of the last append, which the log
// may no longer hold (retention can empty it) and the next append's store
// time is raised to.
var stateLastStoreTs = []byte("lastStoreTs")

const (
	snapLog   = 1
	snapMeta  = 2
	snapState = 3 // the store's in-memory state: stateLastStoreTs
	snapEnd   = 0
	// maxSnapKey and maxSnapValue bound one entry; a stream claiming more is
	// refused (and memory grows only with the bytes actually read).
	maxSnapKey   = 1 << 16
	maxSnapValue = 1 << 30
)

// ErrBadSnapshot is returned (wrapped) by Restore for a stream that is not
// a whole snapshot.
var ErrBadSnapshot = errors.New("store: bad snapshot")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Snapshot writes the store's state to w. Writes go on meanwhile: they wait
// only while the two Pebble snapshots are taken. Close waits for a
// Snapshot in progress.
func (s *Store) Snapshot(w io.Writer) error {
	if err := s.readLock(); err != nil {
		return err
	}
	defer s.closeMu.RUnlock()
	s.applyMu.Lock()
	if s.closing {
		s.applyMu.Unlock()
		return ErrClosed
	}
	if errp := s.failed.Load(); errp != nil {
		s.applyMu.Unlock()
		return *errp
	}
	// Every op is in both databases' memtables once it leaves the lock
	// (Pebble publishes a batch before ApplyNoSyncWait returns).
	logSnap, metaSnap := s.log.NewSnapshot(), s.db.NewSnapshot()
	// The log's iterator is opened here, before any truncation can come:
	// what a truncation deleted is excised once it is durable (freeLog),
	// and an excise removes it from open snapshots too, from iterators
	// opened before it only.
	logIt, err := logSnap.NewIter(nil)
	lastStoreTs := s.lastStoreTs
	s.applyMu.Unlock()
	defer logSnap.Close()
	defer metaSnap.Close()
	if err != nil {
		return err
	}

	crc := crc32.New(castagnoli)
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 256<<10)
	bw.Write(snapshotMagic)
	bw.WriteByte(snapshotVersion)
	var n uint64
	var hdr [2 * binary.MaxVarintLen64]byte
	for _, db := range []struct {
		tag  byte
		snap *pebble.Snapshot
	}{{snapLog, logSnap}, {snapMeta, metaSnap}} {
		it := logIt
		if db.snap != logSnap {
			if it, err = db.snap.NewIter(nil); err != nil {
				return err
			}
		}
		for ok := it.First(); ok; ok = it.Next() {
			v, err := it.ValueAndErr()
			if err != nil {
				_ = it.Close()
				return err
			}
			bw.WriteByte(db.tag)
			bw.Write(binary.AppendUvarint(hdr[:0], uint64(len(it.Key()))))
			bw.Write(it.Key())
			bw.Write(binary.AppendUvarint(hdr[:0], uint64(len(v))))
			if _, err := bw.Write(v); err != nil {
				_ = it.Close()
				return fmt.Errorf("store: snapshot: %w", err)
			}
			n++
		}
		if err := it.Close(); err != nil {
			return fmt.Errorf("store: snapshot: %w", err)
		}
	}
	// The store time the next append starts from, which the log may no
	// longer hold.
	bw.WriteByte(snapState)
	bw.Write(binary.AppendUvarint(hdr[:0], uint64(len(stateLastStoreTs))))
	bw.Write(stateLastStoreTs)
	bw.Write(binary.AppendUvarint(hdr[:0], 8))
	bw.Write(meta.EncodeInt64(lastStoreTs))
	n++
	bw.WriteByte(snapEnd)
	bw.Write(binary.BigEndian.AppendUint64(hdr[:0], n))
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("store: snapshot: %w", err)
	}
	if _, err := w.Write(binary.BigEndian.AppendUint32(hdr[:0], crc.Sum32())); err != nil {
		return fmt.Errorf("store: snapshot: %w", err)
	}
	return nil
}

// Restore creates a store in opts.Dir (which must not hold one) from a
// stream Snapshot wrote, and opens it. The restored store answers every
// read as the snapshotted one did at the snapshot, and applying the same
// ops to both keeps it so. On any error nothing is left in opts.Dir's
// databases.
func Restore(opts Options, r io.Reader) (*Store, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if names, err := opts.FS.List(opts.Dir); err == nil && len(names) > 0 {
		return nil, fmt.Errorf("store: restore into %s: the directory is not empty", opts.Dir)
	}
	if err := opts.FS.MkdirAll(opts.Dir, privateDirMode); err != nil {
		return nil, fmt.Errorf("store: restore: %w", err)
	}
	dirs := []string{opts.FS.PathJoin(opts.Dir, "log"), opts.FS.PathJoin(opts.Dir, "meta")}
	lastStoreTs, err := restoreDBs(opts, dirs, r)
	if err != nil {
		for _, d := range dirs {
			_ = opts.FS.RemoveAll(d)
		}
		return nil, err
	}
	s, err := open(opts, true)
	if err != nil {
		return nil, err
	}
	s.applyMu.Lock()
	s.lastStoreTs = max(s.lastStoreTs, lastStoreTs)
	s.applyMu.Unlock()
	return s, nil
}

// restoreDBs writes the snapshot's entries into fresh databases and
// flushes them, so the Open that follows has no WAL to replay.
func restoreDBs(opts Options, dirs []string, r io.Reader) (lastStoreTs int64, err error) {
	var dbs [2]*pebble.DB
	defer func() {
		for _, db := range dbs {
			if db != nil {
				_ = db.Close()
			}
		}
	}()
	for i, dir := range dirs {
		db, err := pebble.Open(dir, &pebble.Options{FS: opts.FS, Logger: opts.Logger,
			FormatMajorVersion: pebble.FormatNewest, MemTableSize: opts.MemTableSize})
		if err != nil {
			return 0, fmt.Errorf("store: restore: open %s: %w", dir, err)
		}
		dbs[i] = db
	}
	crc := crc32.New(castagnoli)
	sr := &snapReader{r: bufio.NewReaderSize(r, 256<<10), crc: crc}
	if magic := sr.bytes(len(snapshotMagic) + 1); sr.err == nil &&
		(!bytes.Equal(magic[:len(snapshotMagic)], snapshotMagic) || magic[len(snapshotMagic)] != snapshotVersion) {
		return 0, fmt.Errorf("%w: header %q, want %q version %d", ErrBadSnapshot, magic, snapshotMagic, snapshotVersion)
	}
	batches := [2]*pebble.Batch{dbs[0].NewBatch(), dbs[1].NewBatch()}
	defer func() {
		for _, b := range batches {
			_ = b.Close()
		}
	}()
	var n uint64
	var key []byte
	for sr.err == nil {
		tag := sr.byte()
		if tag == snapEnd || sr.err != nil {
			break
		}
		if tag != snapLog && tag != snapMeta && tag != snapState {
			return 0, fmt.Errorf("%w: entry %d: database %d", ErrBadSnapshot, n, tag)
		}
		key = append(key[:0], sr.bytes(sr.length(maxSnapKey))...)
		v := sr.bytes(sr.length(maxSnapValue))
		if sr.err != nil {
			break
		}
		n++
		if tag == snapState {
			if !bytes.Equal(key, stateLastStoreTs) || len(v) != 8 {
				return 0, fmt.Errorf("%w: entry %d: state %q of %d bytes", ErrBadSnapshot, n, key, len(v))
			}
			lastStoreTs = int64(binary.BigEndian.Uint64(v))
			continue
		}
		b := batches[tag-1]
		_ = b.Set(key, v, nil)
		if b.Len() >= 4<<20 {
			if err := b.Commit(pebble.NoSync); err != nil {
				return 0, fmt.Errorf("store: restore: %w", err)
			}
			_ = b.Close()
			batches[tag-1] = dbs[tag-1].NewBatch()
		}
	}
	count := binary.BigEndian.Uint64(sr.bytes(8))
	sum := crc.Sum32()
	sr.crc = nil
	want := binary.BigEndian.Uint32(sr.bytes(4))
	if sr.err != nil {
		return 0, fmt.Errorf("%w: after %d entries: %w", ErrBadSnapshot, n, sr.err)
	}
	if count != n || sum != want {
		return 0, fmt.Errorf("%w: %d entries (the stream says %d), crc %08x (the stream says %08x)", ErrBadSnapshot, n, count, sum, want)
	}
	if _, err := sr.r.ReadByte(); err != io.EOF {
		return 0, fmt.Errorf("%w: bytes after the end", ErrBadSnapshot)
	}
	for i, db := range dbs {
		if err := batches[i].Commit(pebble.NoSync); err != nil {
			return 0, fmt.Errorf("store: restore: %w", err)
		}
		if err := db.Flush(); err != nil {
			return 0, fmt.Errorf("store: restore: %w", err)
		}
	}
	for i, db := range dbs {
		dbs[i] = nil
		if err := db.Close(); err != nil {
			return 0, fmt.Errorf("store: restore: %w", err)
		}
	}
	return lastStoreTs, nil
}

// snapReader reads a snapshot's fields, summing what it reads while crc is
// set; the first error sticks. A byte string is read into a buffer that
// grows with the bytes that arrive, not with the length claimed.
type snapReader struct {
	r   *bufio.Reader
	crc hash.Hash32
	buf bytes.Buffer
	err error
}

func (sr *snapReader) byte() byte {
	b := sr.bytes(1)
	if sr.err != nil {
		return 0
	}
	return b[0]
}

func (sr *snapReader) length(limit uint64) int {
	if sr.err != nil {
		return 0
	}
	v, err := binary.ReadUvarint(byteCounter{sr})
	if err == nil && v > limit {
		err = fmt.Errorf("length %d over %d", v, limit)
	}
	if err != nil {
		sr.err = err
		return 0
	}
	return int(v)
}

// bytes returns the next n bytes, valid until the next call; after an
// error, zeros (for the fixed-size fields read before it is checked).
func (sr *snapReader) bytes(n int) []byte {
	if sr.err != nil {
		return make([]byte, min(n, 16))
	}
	sr.buf.Reset()
	if _, err := io.CopyN(&sr.buf, sr.r, int64(n)); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		sr.err = err
		return make([]byte, min(n, 16))
	}
	if sr.crc != nil {
		sr.crc.Write(sr.buf.Bytes())
	}
	return sr.buf.Bytes()
}

// byteCounter lets binary.ReadUvarint read through snapReader's sum.
type byteCounter struct{ sr *snapReader }

func (b byteCounter) ReadByte() (byte, error) {
	c, err := b.sr.r.ReadByte()
	if err == nil && b.sr.crc != nil {
		b.sr.crc.Write([]byte{c})
	}
	return c, err
}
