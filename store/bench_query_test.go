package store

import (
	"fmt"
	"testing"

	"github.com/runnelmq/runnel/message"
)

// BenchmarkQueryByKey looks up one key among 128k messages of 1 KiB with
// a key and a unique id each (about 150 MiB of log): the index reads one
// bucket per segment, and the candidates' records.
func BenchmarkQueryByKey(b *testing.B) {
	s := benchOpen(b, AsyncFlush)
	const n, batch = 128 << 10, 64
	for i := 0; i < n; i += batch {
		ms := make([]*message.MessageExt, batch)
		for j := range ms {
			k := i + j
			ms[j] = msg("Q", int32(k%4), "", message.PropertyKeys, fmt.Sprint("key-", k),
				message.PropertyUniqClientMessageIDKey, fmt.Sprintf("C0A80001000100000000%012X", k))
			ms[j].Body = benchBody
		}
		if _, err := s.Put(ms); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("key", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			k := (i * 7919) % n
			if r, err := s.QueryByKey("Q", fmt.Sprint("key-", k), 4, 0, 0); err != nil || len(r) != 1 {
				b.Fatalf("key-%d: %d records, %v", k, len(r), err)
			}
		}
	})
	b.Run("uniq", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			k := (i * 7919) % n
			if r, err := s.QueryByUniqKey("Q", fmt.Sprintf("C0A80001000100000000%012X", k), 4); err != nil || len(r) != 1 {
				b.Fatalf("uniq %d: %d records, %v", k, len(r), err)
			}
		}
	})
}
