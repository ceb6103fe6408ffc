package core

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store"
)

// TestPopConcurrentModel checks POP against a model under concurrency:
// consumers pop and acknowledge from every queue at once, leaving some
// messages unacknowledged; when their time passes those come back. In
// the end every message was acknowledged exactly once, and none was
// delivered while a delivery of it was still in flight.
func TestPopConcurrentModel(t *testing.T) {
	c := openCore(t, nil)
	const n = 400
	for i := range n {
		sendBody(t, c, "T", int32(i%4), fmt.Sprint(i))
	}
	var mu sync.Mutex
	acked := map[string]int{}
	inFlight := map[string]bool{}
	var failures []string
	round := func() (popped int) {
		var wg sync.WaitGroup
		var counted sync.Mutex
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					res, _, err := c.Pop(PopRequest{Group: "g", Topic: "T", QueueID: -1, MaxMessages: 7, InvisibleTime: time.Minute}, nil)
					if err != nil {
						mu.Lock()
						failures = append(failures, err.Error())
						mu.Unlock()
						return
					}
					if len(res.Messages) == 0 {
						return
					}
					counted.Lock()
					popped += len(res.Messages)
					counted.Unlock()
					for i, p := range res.Messages {
						body := string(p.Message.Body)
						mu.Lock()
						if inFlight[body] {
							failures = append(failures, "delivered while in flight: "+body)
						}
						inFlight[body] = true
						mu.Unlock()
						// Every third message of a worker's batch is left
						// unacknowledged, on the first delivery only.
						if p.DeliveryAttempt == 1 && (i+w)%3 == 0 {
							continue
						}
						err := c.Ack("g", "T", p.Handle)
						mu.Lock()
						if err != nil {
							failures = append(failures, fmt.Sprintf("ack %s: %v", body, err))
						} else {
							acked[body]++
							delete(inFlight, body)
						}
						mu.Unlock()
					}
				}
			}()
		}
		wg.Wait()
		return popped
	}
	for r := 0; ; r++ {
		popped := round()
		if len(failures) > 0 {
			t.Fatalf("round %d: %v", r, failures[:min(len(failures), 5)])
		}
		if popped == 0 && len(inFlight) == 0 {
			break
		}
		if r > 5 {
			t.Fatalf("still %d in flight after %d rounds", len(inFlight), r)
		}
		c.advance(t, time.Minute)
		clear(inFlight) // their time passed: they may come back
	}
	for i := range n {
		if got := acked[fmt.Sprint(i)]; got != 1 {
			t.Fatalf("message %d acknowledged %d times", i, got)
		}
	}
	if c.InFlight("g", "T") != 0 || c.InFlight("g", "%RETRY%g_T") != 0 {
		t.Fatal("records left in flight")
	}
}

// TestPopFilters: a pop's tag or SQL92 expression picks what it pops;
// what it skips is passed for good by the group's offset.
func TestPopFilters(t *testing.T) {
	c := openCore(t, func(cfg *Config, _ *store.Options) { cfg.EnablePropertyFilter = true })
	for i, tag := range []string{"A", "B", "A", "C"} {
		sendBody(t, c, "T", 0, fmt.Sprint(tag, i), message.PropertyTags, tag, "n", fmt.Sprint(i))
	}
	r := popReq("tags", "T", 32, time.Minute)
	r.Expression = "A || C"
	if got := bodiesOf(mustPop(t, c, r).Messages); fmt.Sprint(got) != "[A0#1 A2#1 C3#1]" {
		t.Fatalf("tag filter popped %v", got)
	}
	if off, _ := c.ConsumerOffset("tags", "T", 0); off != 4 {
		t.Fatalf("offset %d after the tag filter, want 4", off)
	}
	r = popReq("sql", "T", 32, time.Minute)
	r.ExpressionType, r.Expression = message.ExpressionTypeSQL92, "n > 1"
	if got := bodiesOf(mustPop(t, c, r).Messages); fmt.Sprint(got) != "[A2#1 C3#1]" {
		t.Fatalf("SQL92 filter popped %v", got)
	}
	r.Expression = "n >"
	_, _, err := c.Pop(r, nil)
	wantReason(t, err, BadFilter)
}
