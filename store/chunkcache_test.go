package store

import (
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/runnelmq/runnel/internal/fakeclock"
	"github.com/runnelmq/runnel/message"
)

// Consecutive pulls of 32 within one queue chunk of 64 read the chunk from
// Pebble once: the second finds it decoded in the queue. The records of two
// queues alternate in the log, so every pull needs the queue's entries (the
// hint only helps adjacent records).
func TestPullsShareTheChunkRead(t *testing.T) {
	fs := vfs.NewMem()
	opts := memOptions(fs, fakeclock.New(t0))
	s, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	for range 4 {
		for q := int32(0); q < 2; q++ {
			batch := make([]*message.MessageExt, 16)
			for i := range batch {
				batch[i] = msg("T", q, "body")
			}
			mustPut(t, s, batch...)
		}
	}
	// Close and open again: the entries are in Pebble's chunks, not in
	// the queues' tails.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(opts); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	var got []int64
	for off := int64(0); off < 64; {
		r, err := s.Get("T", 0, off, 32, 1<<20, nil)
		if err != nil || r.Count == 0 {
			t.Fatalf("Get at %d: %v, %v", off, err, r)
		}
		got = append(got, r.QueueOffsets...)
		off = r.NextBeginOffset
	}
	if len(got) != 64 || got[0] != 0 || got[63] != 63 {
		t.Fatalf("offsets %v", got)
	}
	if n := s.chunkReads.Load(); n != 1 {
		t.Errorf("%d chunk reads for two pulls of one chunk, want 1", n)
	}
}
