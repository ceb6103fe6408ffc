package store

import (
	"testing"

	"github.com/runnelmq/runnel/message"
)

// BenchmarkReadInterleaved pulls, 32 at a time and queue after queue, what
// was sent to 8 queues in turn: a push consumer draining a topic, whose
// records of one queue sit every eighth in the log. The log is flushed to
// tables first, and its 38 MB are more than the block cache holds, so each
// pass reads every block from the tables once and the other queues' pulls
// of it from the cache.
//
//	go test -run '^$' -bench ReadInterleaved ./store
func BenchmarkReadInterleaved(b *testing.B) {
	const queues, perQueue, perCall = 8, 4000, 32
	s := benchOpen(b, AsyncFlush)
	batch := make([]*message.MessageExt, queues)
	for range perQueue {
		for q := range batch {
			batch[q] = benchMsg(int32(q))
		}
		if _, err := s.Put(batch); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.log.Flush(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	var next [queues]int64
	msgs := 0
	for i := 0; i < b.N; i++ {
		q := i % queues
		r, err := s.Get("Bench", int32(q), next[q], perCall, 1<<20, nil)
		if err != nil || r.Count != perCall {
			b.Fatalf("queue %d at %d: %v %d %v", q, next[q], err, r.Count, r.Status)
		}
		msgs += r.Count
		next[q] = r.NextBeginOffset
		if next[q]+perCall > perQueue {
			next[q] = 0
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(msgs), "ns/msg")
}
