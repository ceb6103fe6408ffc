package store

import (
	"fmt"
	"github.com/runnelmq/runnel/internal/testwait"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/runnelmq/runnel/internal/fakeclock"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store/commitlog"
	"github.com/runnelmq/runnel/store/consumequeue"
	"github.com/runnelmq/runnel/store/index"
	"github.com/runnelmq/runnel/store/meta"
)

// A truncation cutting into entries that are still only in memory (no
// checkpoint since they were appended) checkpoints them and deletes what
// lies wholly below the cut in the same batch: the deletions must win, or
// chunks below the queues' minimums, and an index segment wholly below the
// log's start, stay in Pebble for good.
func TestTruncationIntoTailsLeavesNothingBelowIt(t *testing.T) {
	for _, all := range []bool{false, true} {
		t.Run(fmt.Sprintf("all=%v", all), func(t *testing.T) {
			clock := fakeclock.New(t0)
			opts := memOptions(vfs.NewMem(), clock)
			opts.FileReservedTime = time.Hour
			opts.CheckpointBytes = 1 << 30 // no checkpoint by size
			s, err := Open(opts)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			old, n := int64(150), 200
			if all {
				old = int64(n)
			}
			for i := 0; i < n; i++ {
				if int64(i) == old {
					clock.Set(t0.Add(2 * time.Hour))
				}
				mustPut(t, s, msg("T", 0, fmt.Sprintf("%04d", i), message.PropertyKeys, fmt.Sprintf("k%d", i)))
			}
			clock.Set(t0.Add(150 * time.Minute))
			if all {
				clock.Set(t0.Add(5 * time.Hour))
			}
			if _, err := s.Retain(clock.Now()); err != nil {
				t.Fatal(err)
			}
			if m := s.MinOffset("T", 0); m != old {
				t.Fatalf("min %d, want %d", m, old)
			}
			for start := int64(0); start+consumequeue.ChunkLen <= old; start += consumequeue.ChunkLen {
				if chunkInPebble(t, s, "T", 0, start) {
					t.Errorf("chunk %d, wholly below the minimum %d, is still in Pebble", start, old)
				}
			}
			err = index.Segments(s.db, func(_ int64, d index.Dir) (bool, error) {
				if d.End <= s.MinPhysOffset() {
					t.Errorf("index segment ending at %d lies wholly below the log's start %d", d.End, s.MinPhysOffset())
				}
				return true, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Verify(); err != nil {
				t.Fatal(err)
			}
			if r := mustPut(t, s, msg("T", 0, "after")); r[0].QueueOffset != int64(n) {
				t.Fatalf("the queue continued at %d, want %d", r[0].QueueOffset, n)
			}
		})
	}
}

// An append that checkpoints while a truncation waits for its log sync
// (its deletions applied, its publish not yet done) must not write back
// the chunks the truncation deleted below a queue's new minimum, which
// that queue's tail still holds: no later truncation would delete them.
func TestCheckpointDuringTruncationWindow(t *testing.T) {
	s, gfs := openGated(t)
	s.opts.CheckpointBytes = 1 << 30 // entries stay in the tail
	var r []PutResult
	for i := 0; i < 200; i++ {
		r = append(r, mustPut(t, s, msg("T", 0, fmt.Sprintf("%04d", i)))...)
	}
	derived := func() int64 {
		d, _, err := meta.GetInt64(s.db, derivedKey)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	gfs.armed.Store(true)
	truncated := make(chan error, 1)
	go func() { _, err := s.Apply(&Op{Kind: OpTruncate, Cutoff: r[150].CommitLogOffset}); truncated <- err }()
	testwait.For(t, testwait.Default, "the truncation to be applied", func() bool {
		_, err := commitlog.Read(s.log, r[0].CommitLogOffset)
		return err != nil
	})
	before := derived() // the truncation's own checkpoint
	s.applyMu.Lock()
	s.opts.CheckpointBytes = 1 // the next append checkpoints
	s.applyMu.Unlock()
	appended := make(chan error, 1)
	go func() { _, err := s.Put([]*message.MessageExt{msg("T", 0, "checkpoints")}); appended <- err }()
	testwait.For(t, testwait.Default, "the append's checkpoint", func() bool { return derived() > before })
	gfs.open()
	if err := <-truncated; err != nil {
		t.Fatal(err)
	}
	if err := <-appended; err != nil {
		t.Fatal(err)
	}
	if m := s.MinOffset("T", 0); m != 150 {
		t.Fatalf("min %d, want 150", m)
	}
	for _, start := range []int64{0, consumequeue.ChunkLen} {
		if chunkInPebble(t, s, "T", 0, start) {
			t.Errorf("chunk %d, wholly below the minimum 150, was written back", start)
		}
	}
	if _, err := s.Verify(); err != nil {
		t.Fatal(err)
	}
}

// chunkInPebble reports whether Pebble holds the chunk starting at start.
func chunkInPebble(t *testing.T, s *Store, topic string, q int32, start int64) bool {
	t.Helper()
	_, _, found, err := consumequeue.ReadChunk(s.db, topic, q, start, nil)
	if err != nil {
		t.Fatal(err)
	}
	return found
}
