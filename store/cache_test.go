package store

import (
	"crypto/rand"
	"fmt"
	"testing"

	"github.com/runnelmq/runnel/message"
)

// TestPullsHitTheBlockCache pulls, queue after queue, what was sent to 8
// queues in turn, as a push consumer of the topic does: each block of the
// log holds records of every queue, so after its first read it should come
// from the block cache. Pebble charges the memtables to the cache it is
// given; sized at CacheSize alone the memtables took all of it and every
// read missed.
func TestPullsHitTheBlockCache(t *testing.T) {
	opts := DefaultOptions(t.TempDir())
	opts.RetentionInterval = -1
	opts.MemTableSize = 1 << 20
	opts.CacheSize = 4 << 20
	s := mustOpen(t, opts)
	const n, queues = 16000, 8
	for i := range n {
		m := msg("Cached", int32(i%queues), "", message.PropertyUniqClientMessageIDKey, fmt.Sprintf("C0A8000100010000000%013d", i))
		m.Body = make([]byte, 1024)
		_, _ = rand.Read(m.Body)
		if _, err := s.Put([]*message.MessageExt{m}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.log.Flush(); err != nil {
		t.Fatal(err)
	}
	before := s.log.Metrics().BlockCache
	var next [queues]int64
	for got := 0; got < n; {
		for q := range int32(queues) {
			r, err := s.Get("Cached", q, next[q], 32, 256<<10, nil)
			if err != nil {
				t.Fatal(err)
			}
			if r.Count == 0 {
				t.Fatalf("queue %d at %d: nothing (%v)", q, next[q], r.Status)
			}
			next[q] += int64(r.Count)
			got += r.Count
		}
	}
	after := s.log.Metrics().BlockCache
	hits, misses := after.Hits-before.Hits, after.Misses-before.Misses
	t.Logf("block cache: %d hits, %d misses", hits, misses)
	// 16 MB of log in 32 KiB blocks is about 500 blocks, each wanted by 8
	// queues' pulls: most reads must hit.
	if hits < 4*misses {
		t.Fatalf("block cache: %d hits, %d misses; want most reads from the cache", hits, misses)
	}
}
