package rebalance

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/runnelmq/runnel/client/queue"
)

// allStrategies lists every partitioning strategy (ByConfig is not one).
func allStrategies() []Strategy {
	return []Strategy{
		Averagely{},
		AveragelyByCircle{},
		ConsistentHash{},
		ConsistentHash{VirtualNodes: 1},
		ConsistentHash{Ring: RingGoClient, VirtualNodes: 7},
		ByMachineRoom{ConsumerIDCs: []string{"hz", "sh"}},
		MachineRoomNearby{Resolver: roomByCut{}},
		MachineRoomNearby{Inner: AveragelyByCircle{}, Resolver: roomByCut{}},
	}
}

// roomByCut reads the room before "@" in broker names and client ids.
type roomByCut struct{}

func (roomByCut) BrokerRoom(mq queue.MessageQueue) string { return roomOf(mq.BrokerName) }
func (roomByCut) ClientRoom(cid string) string            { return roomOf(cid) }

func roomOf(s string) string {
	for i := range len(s) {
		if s[i] == '@' {
			return s[:i]
		}
	}
	return "none"
}

// randomGroup makes a topic spread over a few brokers in a few rooms and a
// group of clients in some of those rooms, both in canonical order.
func randomGroup(r *rand.Rand) ([]queue.MessageQueue, []string) {
	rooms := []string{"hz", "sh", "bj", "sz"}
	var all []queue.MessageQueue
	for b := range 1 + r.IntN(4) {
		name := fmt.Sprintf("%s@broker-%d", rooms[r.IntN(len(rooms))], b)
		if r.IntN(5) == 0 {
			name = fmt.Sprintf("broker-%d", b) // no room
		}
		for q := range 1 + r.IntN(16) {
			all = append(all, queue.MessageQueue{Topic: "T", BrokerName: name, QueueID: int32(q)})
		}
	}
	queue.Sort(all)
	n := 1 + r.IntN(12)
	clients := make([]string, n)
	for i := range clients {
		clients[i] = fmt.Sprintf("%s@10.0.0.%d@%d", rooms[r.IntN(len(rooms))], r.IntN(250), i)
	}
	slices.Sort(clients)
	return all, clients
}

// expectedUnion is the set a strategy promises to hand out in full.
func expectedUnion(s Strategy, all []queue.MessageQueue) []queue.MessageQueue {
	if m, ok := s.(ByMachineRoom); ok {
		var out []queue.MessageQueue
		for _, mq := range all {
			if p := javaSplit(mq.BrokerName, "@"); len(p) == 2 && slices.Contains(m.ConsumerIDCs, p[0]) {
				out = append(out, mq)
			}
		}
		return out
	}
	return all
}

// TestPropertyPartition: for every strategy, across all clients of a group,
// the allocations are disjoint and together cover every queue the strategy
// promises to serve.
func TestPropertyPartition(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 300 {
		all, clients := randomGroup(r)
		for _, s := range allStrategies() {
			seen := map[queue.MessageQueue]string{}
			for _, c := range clients {
				got, err := s.Allocate("g", c, all, clients)
				if err != nil {
					t.Fatalf("round %d %s: %v", round, s.Name(), err)
				}
				for _, mq := range got {
					if prev, dup := seen[mq]; dup {
						t.Fatalf("round %d %s %+v: %v given to both %s and %s", round, s.Name(), s, mq, prev, c)
					}
					seen[mq] = c
				}
			}
			want := expectedUnion(s, all)
			if len(seen) != len(want) {
				t.Fatalf("round %d %s %+v: %d queues allocated, want %d (%d queues, %d clients)",
					round, s.Name(), s, len(seen), len(want), len(all), len(clients))
			}
			for _, mq := range want {
				if _, ok := seen[mq]; !ok {
					t.Fatalf("round %d %s: %v allocated to nobody", round, s.Name(), mq)
				}
			}
		}
	}
}

// TestPropertyAveragelyBalanced: Averagely hands out contiguous runs whose
// sizes differ by at most one, larger runs first.
func TestPropertyAveragelyBalanced(t *testing.T) {
	for nq := 1; nq <= 40; nq++ {
		for nc := 1; nc <= 12; nc++ {
			all, clients := mqs(nq), cids(nc)
			next, prevLen := int32(0), nq+1
			for _, c := range clients {
				got, _ := Averagely{}.Allocate("g", c, all, clients)
				if len(got) > prevLen {
					t.Fatalf("%dq/%dc: %s got %d after a client with %d", nq, nc, c, len(got), prevLen)
				}
				if len(got) < nq/nc || len(got) > nq/nc+1 {
					t.Fatalf("%dq/%dc: %s got %d queues", nq, nc, c, len(got))
				}
				for _, mq := range got {
					if mq.QueueID != next {
						t.Fatalf("%dq/%dc: %s got queue %d, want %d (not contiguous)", nq, nc, c, mq.QueueID, next)
					}
					next++
				}
				prevLen = len(got)
			}
		}
	}
}
