package schedule

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkStep measures delivering due messages: read the schedule
// queue, restore, one append per BatchSize messages, one progress write
// per batch.
func BenchmarkStep(b *testing.B) {
	e := newEnv(b)
	l, _ := ParseLevels("1s")
	for i := range b.N {
		e.schedule(l, "T", 0, fmt.Sprint("body-", i), 1, fmt.Sprint("u", i))
	}
	s := e.service(l, nil)
	e.clock.Advance(time.Second)
	b.ResetTimer()
	if _, err := s.Step(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if got := e.st.MaxOffset("T", 0); got != int64(b.N) {
		b.Fatalf("delivered %d of %d", got, b.N)
	}
}
