package keyed

import (
	"sync"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestMutexes: one key's holders exclude each other, other keys do not
// wait, TryLock fails on a held key, and nothing is kept once free.
func TestMutexes(t *testing.T) {
	var l Mutexes[string]
	var wg sync.WaitGroup
	count := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 500 {
				unlock := l.Lock("a")
				count++
				unlock()
			}
		}()
	}
	wg.Wait()
	if count != 4000 {
		t.Fatalf("count %d: holders did not exclude each other", count)
	}
	unlock := l.Lock("a")
	if _, ok := l.TryLock("a"); ok {
		t.Fatal("a held key was locked again")
	}
	other, ok := l.TryLock("b")
	if !ok {
		t.Fatal("another key waited")
	}
	other()
	unlock()
	if n := l.Len(); n != 0 {
		t.Fatalf("%d keys kept", n)
	}
}
