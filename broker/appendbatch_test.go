package broker

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/runnelmq/runnel/internal/testwait"

	"github.com/runnelmq/runnel/store"
)

// Concurrent appends share proposals, and each gets back the offsets of
// its own messages, in its own order.
func TestAppendBatcherSharesProposals(t *testing.T) {
	var mu sync.Mutex
	next, proposals := int64(0), 0
	release := make(chan struct{})
	first := true
	a := &appendBatcher{propose: func(op *store.Op) (*store.ApplyResult, error) {
		mu.Lock()
		hold := first
		first = false
		mu.Unlock()
		if hold {
			<-release // the first proposal is slow: the others queue behind it
		}
		mu.Lock()
		defer mu.Unlock()
		proposals++
		res := &store.ApplyResult{}
		for range op.Messages {
			res.Appended = append(res.Appended, store.Appended{QueueOffset: next})
			next++
		}
		return res, nil
	}}
	const callers = 16
	var wg sync.WaitGroup
	results := make([][]store.Appended, callers)
	started := make(chan struct{}, callers)
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			op := &store.Op{Kind: store.OpAppend}
			for k := range i%3 + 1 {
				op.Messages = append(op.Messages, store.AppendMessage{Record: []byte(fmt.Sprint(i, k))})
			}
			started <- struct{}{}
			res, err := a.append(op)
			if err != nil {
				t.Error(err)
			}
			results[i] = res
		}()
	}
	for range callers {
		<-started
	}
	testwait.For(t, 10*time.Second, "the others queued behind the first", func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return len(a.pending) == callers-1
	})
	close(release)
	wg.Wait()
	seen := map[int64]bool{}
	for i, r := range results {
		if len(r) != i%3+1 {
			t.Fatalf("caller %d got %d results, want %d", i, len(r), i%3+1)
		}
		for k, x := range r {
			if seen[x.QueueOffset] || (k > 0 && x.QueueOffset != r[k-1].QueueOffset+1) {
				t.Fatalf("caller %d: offsets %v", i, r)
			}
			seen[x.QueueOffset] = true
		}
	}
	if proposals != 2 { // the held one, then all the rest in one
		t.Errorf("%d proposals for %d concurrent appends, want 2", proposals, callers)
	}
}
