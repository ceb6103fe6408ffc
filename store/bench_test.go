package store

import (
	"bytes"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/runnelmq/runnel/internal/periodic"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store/commitlog"
	"github.com/runnelmq/runnel/store/walfs"
)

// Each store benchmark runs beside a "pebble" sub-benchmark writing or
// reading the same bytes with raw Pebble batches: the physical limit on this
// machine. For AsyncFlush the raw side commits with pebble.NoSync, which is
// faster than anything kill-safe (see package walfs), so the ratio is
// conservative.

var benchBody = bytes.Repeat([]byte("b"), 1024)

func benchMsg(q int32) *message.MessageExt {
	m := msg("Bench", q, "", message.PropertyTags, "TagA", message.PropertyUniqClientMessageIDKey, "C0A80001000100000000000000000001")
	m.Body = benchBody
	return m
}

func benchOpen(b *testing.B, mode FlushMode) *Store {
	opts := DefaultOptions(b.TempDir())
	opts.FlushMode = mode
	opts.RetentionInterval = -1
	s := mustOpen(b, opts)
	return s
}

func rawOpen(b *testing.B, wrap bool) *pebble.DB {
	opts := DefaultOptions(b.TempDir())
	popts := &pebble.Options{FS: opts.FS, MemTableSize: opts.MemTableSize, Logger: quietLogger{},
		Cache: pebble.NewCache(opts.CacheSize), FormatMajorVersion: pebble.FormatNewest}
	if wrap {
		// Same durability as the store's AsyncFlush: writes reach the OS
		// before the commit returns; fsync every FlushInterval.
		fs := walfs.New(opts.FS, true)
		popts.FS = fs
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			periodic.Run(stop, opts.FlushInterval, func() { _ = fs.SyncAll() })
		}()
		b.Cleanup(func() { close(stop); <-done })
	}
	db, err := pebble.Open(opts.Dir, popts)
	popts.Cache.Unref()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	return db
}

func BenchmarkAppend(b *testing.B) {
	rec, _ := message.AppendStoredMessage(nil, benchMsg(0))
	for _, mode := range []FlushMode{SyncFlush, AsyncFlush} {
		for _, n := range []int{1, 64} {
			name := fmt.Sprintf("%v/batch=%d", mode, n)
			b.Run(name+"/store", func(b *testing.B) {
				s := benchOpen(b, mode)
				var q atomic.Int32
				runParallel(b, n*len(rec), func(pb *testing.PB) {
					batch := make([]*message.MessageExt, n)
					qid := q.Add(1) % 4
					for i := range batch {
						batch[i] = benchMsg(qid)
					}
					for pb.Next() {
						if _, err := s.Put(batch); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
			rawAppend := func(b *testing.B, wrap bool, wo *pebble.WriteOptions) {
				db := rawOpen(b, wrap)
				var phys atomic.Int64
				runParallel(b, n*len(rec), func(pb *testing.PB) {
					key := make([]byte, 0, commitlog.KeyLen)
					for pb.Next() {
						batch := db.NewBatch()
						base := phys.Add(int64(n*len(rec))) - int64(n*len(rec))
						for i := 0; i < n; i++ {
							key = commitlog.AppendKey(key[:0], base+int64(i*len(rec)))
							_ = batch.Set(key, rec, nil)
						}
						if err := batch.Commit(wo); err != nil {
							b.Error(err)
							return
						}
						_ = batch.Close()
					}
				})
			}
			if mode == SyncFlush {
				b.Run(name+"/pebble", func(b *testing.B) { rawAppend(b, false, pebble.Sync) })
			} else {
				// The physical limit (not kill-safe), and the same bytes
				// made kill-safe the way the store does it.
				b.Run(name+"/pebble", func(b *testing.B) { rawAppend(b, false, pebble.NoSync) })
				b.Run(name+"/pebble-walfs", func(b *testing.B) { rawAppend(b, true, pebble.Sync) })
			}
		}
	}
}

const readPrefill = 20000

func BenchmarkRead(b *testing.B) {
	rec, _ := message.AppendStoredMessage(nil, benchMsg(0))
	const perCall = 32
	b.Run("store", func(b *testing.B) {
		s := benchOpen(b, AsyncFlush)
		batch := make([]*message.MessageExt, 100)
		for i := range batch {
			batch[i] = benchMsg(0)
		}
		for i := 0; i < readPrefill/len(batch); i++ {
			if _, err := s.Put(batch); err != nil {
				b.Fatal(err)
			}
		}
		b.SetBytes(int64(perCall * len(rec)))
		b.ResetTimer()
		off := int64(0)
		for i := 0; i < b.N; i++ {
			r, err := s.Get("Bench", 0, off, perCall, 1<<20, nil)
			if err != nil || r.Count != perCall {
				b.Fatalf("%v %d %v", err, r.Count, r.Status)
			}
			off = r.NextBeginOffset
			if off+perCall > readPrefill {
				off = 0
			}
		}
	})
	b.Run("pebble", func(b *testing.B) {
		db := rawOpen(b, false)
		for i := 0; i < readPrefill; i++ {
			_ = db.Set(commitlog.Key(int64(i*len(rec))), rec, pebble.NoSync)
		}
		lo, hi := commitlog.Bounds()
		b.SetBytes(int64(perCall * len(rec)))
		b.ResetTimer()
		off := 0
		var out []byte
		for i := 0; i < b.N; i++ {
			it, _ := db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
			out = make([]byte, 0, perCall*len(rec))
			n := 0
			for ok := it.SeekGE(commitlog.Key(int64(off * len(rec)))); ok && n < perCall; ok = it.Next() {
				out = append(out, it.Value()...)
				n++
			}
			_ = it.Close()
			if n != perCall {
				b.Fatal(n)
			}
			off += perCall
			if off+perCall > readPrefill {
				off = 0
			}
		}
		_ = out
	})
}

// runParallel times body on four goroutines per P, each op bytes long.
func runParallel(b *testing.B, bytes int, body func(*testing.PB)) {
	b.SetBytes(int64(bytes))
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(body)
}

// BenchmarkDecodeOp: a replica reads every replicated append through
// DecodeOp; 16 records of 1 KiB with a producer's properties (tags, keys,
// unique id, two of the application's own).
func BenchmarkDecodeOp(b *testing.B) {
	ms := make([]*message.MessageExt, 16)
	for i := range ms {
		ms[i] = msg("Bench", int32(i%4), "", message.PropertyTags, "TagA", message.PropertyKeys, "order-1 customer-7",
			message.PropertyUniqClientMessageIDKey, "C0A80001000100000000000000000001", "region", "eu", "a", "1")
		ms[i].Body = benchBody
	}
	enc := appendOp(b, 1, ms...).Marshal()
	b.ReportAllocs()
	b.SetBytes(int64(len(enc)))
	for b.Loop() {
		if _, err := DecodeOp(enc); err != nil {
			b.Fatal(err)
		}
	}
}
