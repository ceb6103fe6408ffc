package lock

import (
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/runnelmq/runnel/internal/fakeclock"
)

func newTable(t *testing.T) (*Manager, *fakeclock.Clock) {
	t.Helper()
	clk := fakeclock.New(time.Unix(1_700_000_000, 0))
	return New(Config{MaxLiveTime: time.Minute}, clk.Now), clk
}

var (
	q0 = Queue{Topic: "T", BrokerName: "b", QueueID: 0}
	q1 = Queue{Topic: "T", BrokerName: "b", QueueID: 1}
	q2 = Queue{Topic: "T", BrokerName: "b", QueueID: 2}
)

func TestTryLockBatch(t *testing.T) {
	type step struct {
		advance time.Duration
		op      string // "lock" or "unlock"
		group   string
		client  string
		qs      []Queue
		want    []Queue
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"free queues are granted", []step{
			{op: "lock", group: "g", client: "A", qs: []Queue{q1, q0}, want: []Queue{q0, q1}},
		}},
		{"own live lock is renewed and reported", []step{
			{op: "lock", group: "g", client: "A", qs: []Queue{q0}, want: []Queue{q0}},
			{advance: 50 * time.Second, op: "lock", group: "g", client: "A", qs: []Queue{q0}, want: []Queue{q0}},
			// Renewal moved the deadline: 50 s later B is still refused.
			{advance: 50 * time.Second, op: "lock", group: "g", client: "B", qs: []Queue{q0}, want: []Queue{}},
		}},
		{"live lock of another client is refused, others granted", []step{
			{op: "lock", group: "g", client: "A", qs: []Queue{q0}, want: []Queue{q0}},
			{op: "lock", group: "g", client: "B", qs: []Queue{q0, q1}, want: []Queue{q1}},
		}},
		{"lock at exactly max live time is still live", []step{
			{op: "lock", group: "g", client: "A", qs: []Queue{q0}, want: []Queue{q0}},
			{advance: time.Minute, op: "lock", group: "g", client: "B", qs: []Queue{q0}, want: []Queue{}},
		}},
		{"expired lock goes to the new client", []step{
			{op: "lock", group: "g", client: "A", qs: []Queue{q0}, want: []Queue{q0}},
			{advance: time.Minute + time.Millisecond, op: "lock", group: "g", client: "B", qs: []Queue{q0}, want: []Queue{q0}},
			{op: "lock", group: "g", client: "A", qs: []Queue{q0}, want: []Queue{}},
		}},
		{"own expired lock is taken again", []step{
			{op: "lock", group: "g", client: "A", qs: []Queue{q0}, want: []Queue{q0}},
			{advance: 2 * time.Minute, op: "lock", group: "g", client: "A", qs: []Queue{q0}, want: []Queue{q0}},
		}},
		{"groups are independent", []step{
			{op: "lock", group: "g1", client: "A", qs: []Queue{q0}, want: []Queue{q0}},
			{op: "lock", group: "g2", client: "B", qs: []Queue{q0}, want: []Queue{q0}},
		}},
		{"only the owner unlocks", []step{
			{op: "lock", group: "g", client: "A", qs: []Queue{q0, q1}, want: []Queue{q0, q1}},
			{op: "unlock", group: "g", client: "B", qs: []Queue{q0}, want: nil},
			{op: "lock", group: "g", client: "B", qs: []Queue{q0}, want: []Queue{}},
			{op: "unlock", group: "g", client: "A", qs: []Queue{q0, q2}, want: []Queue{q0}},
			{op: "lock", group: "g", client: "B", qs: []Queue{q0, q1}, want: []Queue{q0}},
		}},
		{"unlock of an unknown group is a no-op", []step{
			{op: "unlock", group: "nobody", client: "A", qs: []Queue{q0}, want: nil},
		}},
		{"empty batch", []step{
			{op: "lock", group: "g", client: "A", qs: nil, want: []Queue{}},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, clk := newTable(t)
			for i, s := range tc.steps {
				clk.Advance(s.advance)
				var got []Queue
				switch s.op {
				case "lock":
					got = m.TryLockBatch(s.group, s.qs, s.client)
				case "unlock":
					got = m.UnlockBatch(s.group, s.qs, s.client)
				}
				if len(got) == 0 && len(s.want) == 0 {
					continue
				}
				if !reflect.DeepEqual(got, s.want) {
					t.Fatalf("step %d (%s %s by %s): got %v, want %v", i, s.op, s.group, s.client, got, s.want)
				}
			}
		})
	}
}

func TestOwnerAndExpiry(t *testing.T) {
	m, clk := newTable(t)
	if _, ok := m.Owner("g", q0); ok {
		t.Fatal("owner of an unlocked queue")
	}
	if !m.IsLockAllExpired("g") {
		t.Fatal("empty group must count as all expired")
	}
	m.TryLockBatch("g", []Queue{q0}, "A")
	if id, ok := m.Owner("g", q0); !ok || id != "A" {
		t.Fatalf("owner = %q %v, want A", id, ok)
	}
	if m.IsLockAllExpired("g") {
		t.Fatal("live lock reported expired")
	}
	clk.Advance(61 * time.Second)
	if _, ok := m.Owner("g", q0); ok {
		t.Fatal("expired lock still has an owner")
	}
	if !m.IsLockAllExpired("g") {
		t.Fatal("expired lock not reported")
	}
	if n := m.Sweep(); n != 1 {
		t.Fatalf("sweep removed %d, want 1", n)
	}
	if n := m.Sweep(); n != 0 {
		t.Fatalf("second sweep removed %d, want 0", n)
	}
}

// TestConcurrentLockersNeverShare races many clients for the same queues:
// every queue must end with exactly one owner, and each grant must be
// exclusive at the moment it is made.
func TestConcurrentLockersNeverShare(t *testing.T) {
	m, _ := newTable(t)
	qs := []Queue{q0, q1, q2}
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		grants = map[Queue]map[string]bool{}
	)
	for c := 0; c < 8; c++ {
		id := string(rune('A' + c))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				for _, q := range m.TryLockBatch("g", qs, id) {
					mu.Lock()
					if grants[q] == nil {
						grants[q] = map[string]bool{}
					}
					grants[q][id] = true
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	for q, owners := range grants {
		if len(owners) != 1 {
			t.Errorf("queue %v granted to %d clients: %v", q, len(owners), owners)
		}
	}
}

func TestDefaults(t *testing.T) {
	m := New(Config{}, nil)
	if m.maxLive != 60*time.Second {
		t.Fatalf("default max live = %v", m.maxLive)
	}
}
