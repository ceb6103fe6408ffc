package rebalance

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/runnelmq/runnel/client/queue"
)

// mqs returns n queues of topic T on broker b, in canonical order.
func mqs(n int) []queue.MessageQueue {
	out := make([]queue.MessageQueue, n)
	for i := range out {
		out[i] = queue.MessageQueue{Topic: "T", BrokerName: "b", QueueID: int32(i)}
	}
	return out
}

func cids(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("c%02d", i)
	}
	return out
}

// ids lists the queue ids of an allocation, for compact expectations.
func ids(got []queue.MessageQueue) []int {
	out := []int{}
	for _, mq := range got {
		out = append(out, int(mq.QueueID))
	}
	return out
}

func TestAveragelyTable(t *testing.T) {
	tests := []struct {
		queues, clients int
		want            [][]int // per client index
	}{
		{1, 1, [][]int{{0}}},
		{4, 2, [][]int{{0, 1}, {2, 3}}},
		{5, 5, [][]int{{0}, {1}, {2}, {3}, {4}}},
		// Uneven: the first queues%clients clients take one more.
		{8, 3, [][]int{{0, 1, 2}, {3, 4, 5}, {6, 7}}},
		{10, 4, [][]int{{0, 1, 2}, {3, 4, 5}, {6, 7}, {8, 9}}},
		{7, 2, [][]int{{0, 1, 2, 3}, {4, 5, 6}}},
		{16, 5, [][]int{{0, 1, 2, 3}, {4, 5, 6}, {7, 8, 9}, {10, 11, 12}, {13, 14, 15}}},
		// More clients than queues: the surplus clients get nothing.
		{3, 5, [][]int{{0}, {1}, {2}, {}, {}}},
		{1, 3, [][]int{{0}, {}, {}}},
	}
	for _, tt := range tests {
		for i, want := range tt.want {
			t.Run(fmt.Sprintf("%dq/%dc/client%d", tt.queues, tt.clients, i), func(t *testing.T) {
				got, err := Averagely{}.Allocate("g", cids(tt.clients)[i], mqs(tt.queues), cids(tt.clients))
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(ids(got), want) {
					t.Fatalf("got %v, want %v", ids(got), want)
				}
			})
		}
	}
}

func TestAveragelyByCircleTable(t *testing.T) {
	tests := []struct {
		queues, clients int
		want            [][]int
	}{
		{8, 3, [][]int{{0, 3, 6}, {1, 4, 7}, {2, 5}}},
		{4, 4, [][]int{{0}, {1}, {2}, {3}}},
		{2, 3, [][]int{{0}, {1}, {}}},
		{5, 1, [][]int{{0, 1, 2, 3, 4}}},
	}
	for _, tt := range tests {
		for i, want := range tt.want {
			got, err := AveragelyByCircle{}.Allocate("g", cids(tt.clients)[i], mqs(tt.queues), cids(tt.clients))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids(got), want) {
				t.Errorf("%dq/%dc client %d: got %v, want %v", tt.queues, tt.clients, i, ids(got), want)
			}
		}
	}
}

func TestByConfigReturnsFixedListToAnyone(t *testing.T) {
	fixed := []queue.MessageQueue{{Topic: "X", BrokerName: "b9", QueueID: 7}}
	s := ByConfig{Queues: fixed}
	got, err := s.Allocate("g", "not-a-member", mqs(3), cids(2))
	if err != nil || !slices.Equal(got, fixed) {
		t.Fatalf("got %v, %v; want %v", got, err, fixed)
	}
	got[0].QueueID = 99
	if fixed[0].QueueID != 7 {
		t.Fatal("ByConfig result aliases its configuration")
	}
	if got, err := (ByConfig{}).Allocate("g", "c", nil, nil); err != nil || len(got) != 0 {
		t.Fatalf("empty ByConfig: got %v, %v", got, err)
	}
}

func TestMD5HashIsJavas(t *testing.T) {
	// First four bytes of well-known MD5 digests, read big-endian.
	for key, want := range map[string]uint32{
		"":    0xd41d8cd9, // d41d8cd98f00b204e9800998ecf8427e
		"abc": 0x90015098, // 900150983cd24fb0d6963f7d28e17f72
	} {
		if got := md5Hash(key); got != want {
			t.Errorf("md5Hash(%q) = %#x, want %#x", key, got, want)
		}
	}
}

// TestConsistentHashJavaRingRouting checks the Java ring against a linear
// scan over the virtual nodes written straight from Java's definition.
func TestConsistentHashJavaRingRouting(t *testing.T) {
	clients := cids(4)
	all := mqs(32)
	const vnodes = 3
	want := map[string][]int{}
	for _, mq := range all {
		h := md5Hash(mq.String())
		var best, lowest string
		var bestH, lowestH uint32
		for _, c := range clients {
			for i := range vnodes {
				p := md5Hash(fmt.Sprintf("%s-%d", c, i))
				if p >= h && (best == "" || p < bestH) {
					best, bestH = c, p
				}
				if lowest == "" || p < lowestH {
					lowest, lowestH = c, p
				}
			}
		}
		if best == "" {
			best = lowest // wrap around the ring
		}
		want[best] = append(want[best], int(mq.QueueID))
	}
	for _, c := range clients {
		got, err := ConsistentHash{VirtualNodes: vnodes}.Allocate("g", c, all, clients)
		if err != nil {
			t.Fatal(err)
		}
		w := want[c]
		if w == nil {
			w = []int{}
		}
		if !slices.Equal(ids(got), w) {
			t.Errorf("client %s: got %v, want %v", c, ids(got), w)
		}
	}
}

func TestConsistentHashMovesFewQueuesWhenAClientLeaves(t *testing.T) {
	all := mqs(64)
	before := owners(t, ConsistentHash{}, all, cids(5))
	after := owners(t, ConsistentHash{}, all, cids(4)) // c04 left
	for mq, o := range before {
		if o != "c04" && after[mq] != o {
			t.Errorf("queue %v moved from %s to %s though its owner stayed", mq, o, after[mq])
		}
	}
}

func owners(t *testing.T, s Strategy, all []queue.MessageQueue, clients []string) map[queue.MessageQueue]string {
	t.Helper()
	out := map[queue.MessageQueue]string{}
	for _, c := range clients {
		got, err := s.Allocate("g", c, all, clients)
		if err != nil {
			t.Fatal(err)
		}
		for _, mq := range got {
			out[mq] = c
		}
	}
	return out
}

func TestByMachineRoomTable(t *testing.T) {
	var all []queue.MessageQueue
	for _, b := range []string{"hz@b1", "sh@b2", "hz@b3", "plain", "hz@x@y", "hz@"} {
		for q := range int32(3) {
			all = append(all, queue.MessageQueue{Topic: "T", BrokerName: b, QueueID: q})
		}
	}
	queue.Sort(all)
	s := ByMachineRoom{ConsumerIDCs: []string{"hz"}}
	// Served, in canonical order: hz@b1 0..2, hz@b3 0..2 (6 queues); "hz@"
	// and "hz@x@y" do not split into two parts, as in Java.
	clients := cids(4)
	// per = 6/4 = 1 consecutive queue each; rem = 2, so clients 0 and 1 also
	// take served[4] and served[5].
	want := [][]string{
		{"hz@b1/0", "hz@b3/1"},
		{"hz@b1/1", "hz@b3/2"},
		{"hz@b1/2"},
		{"hz@b3/0"},
	}
	for i, c := range clients {
		if names := allocatedNames(t, s, c, all, clients); !slices.Equal(names, want[i]) {
			t.Errorf("client %d: got %v, want %v", i, names, want[i])
		}
	}
}

// allocatedNames is what s allocates to client c, as "broker/queue".
func allocatedNames(t *testing.T, s Strategy, c string, all []queue.MessageQueue, clients []string) []string {
	t.Helper()
	got, err := s.Allocate("g", c, all, clients)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, mq := range got {
		names = append(names, fmt.Sprintf("%s/%d", mq.BrokerName, mq.QueueID))
	}
	return names
}

type roomByPrefix struct{}

func (roomByPrefix) BrokerRoom(mq queue.MessageQueue) string { return mq.BrokerName[:2] }
func (roomByPrefix) ClientRoom(cid string) string            { return cid[:2] }

func TestMachineRoomNearby(t *testing.T) {
	var all []queue.MessageQueue
	for _, b := range []string{"hz-b1", "sh-b1", "bj-b1"} {
		for q := range int32(4) {
			all = append(all, queue.MessageQueue{Topic: "T", BrokerName: b, QueueID: q})
		}
	}
	queue.Sort(all)
	clients := []string{"hz-1", "hz-2", "sh-1"} // nobody in bj
	s := MachineRoomNearby{Resolver: roomByPrefix{}}
	if s.Name() != "MACHINE_ROOM_NEARBY-AVG" {
		t.Fatalf("Name() = %q", s.Name())
	}
	want := map[string][]string{
		// hz queues split between the hz clients; bj queues (no client in
		// bj) split among all three: 2/1/1.
		"hz-1": {"hz-b1/0", "hz-b1/1", "bj-b1/0", "bj-b1/1"},
		"hz-2": {"hz-b1/2", "hz-b1/3", "bj-b1/2"},
		"sh-1": {"sh-b1/0", "sh-b1/1", "sh-b1/2", "sh-b1/3", "bj-b1/3"},
	}
	for _, c := range clients {
		if names := allocatedNames(t, s, c, all, clients); !slices.Equal(names, want[c]) {
			t.Errorf("%s: got %v, want %v", c, names, want[c])
		}
	}
}

type emptyRoom struct{ roomByCut }

func (emptyRoom) ClientRoom(string) string { return "" }

func TestBadInput(t *testing.T) {
	strategies := []Strategy{
		Averagely{}, AveragelyByCircle{}, ConsistentHash{}, ConsistentHash{Ring: RingGoClient},
		ByMachineRoom{ConsumerIDCs: []string{"x"}}, MachineRoomNearby{Resolver: roomByCut{}},
	}
	for _, s := range strategies {
		for _, tc := range []struct {
			cid     string
			mqs     []queue.MessageQueue
			clients []string
			want    error
		}{
			{"", mqs(2), cids(2), ErrEmptyClientID},
			{"c00", nil, cids(2), ErrNoQueues},
			{"c00", mqs(2), nil, ErrNoClients},
		} {
			got, err := s.Allocate("g", tc.cid, tc.mqs, tc.clients)
			if !errors.Is(err, tc.want) || got == nil || len(got) != 0 {
				t.Errorf("%s(%q, %d mqs, %d cids) = %v, %v; want empty, %v", s.Name(), tc.cid, len(tc.mqs), len(tc.clients), got, err, tc.want)
			}
		}
		// Not a member: empty allocation, no error (the caller releases
		// its queues).
		got, err := s.Allocate("g", "stranger", mqs(4), cids(2))
		if err != nil || got == nil || len(got) != 0 {
			t.Errorf("%s: non-member got %v, %v; want empty, nil", s.Name(), got, err)
		}
	}
	for _, s := range []Strategy{
		ConsistentHash{VirtualNodes: -1},
		ConsistentHash{Ring: Ring(7)},
		ByMachineRoom{},
		MachineRoomNearby{},
	} {
		if _, err := s.Allocate("g", "c00", mqs(2), cids(2)); !errors.Is(err, ErrBadConfig) {
			t.Errorf("%s %+v: err = %v, want ErrBadConfig", s.Name(), s, err)
		}
	}
	if _, err := (MachineRoomNearby{Resolver: emptyRoom{}}).Allocate("g", "hz-1", mqs(2), []string{"hz-1"}); !errors.Is(err, ErrNoRoom) {
		t.Errorf("empty client room: err = %v, want ErrNoRoom", err)
	}
}

func TestAllocateDoesNotTouchInputs(t *testing.T) {
	all, clients := mqs(9), cids(4)
	wantAll, wantClients := slices.Clone(all), slices.Clone(clients)
	for _, s := range allStrategies() {
		got, err := s.Allocate("g", clients[1], all, clients)
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			got[i].Topic = "scribbled"
		}
		if !slices.Equal(all, wantAll) || !slices.Equal(clients, wantClients) {
			t.Fatalf("%s: inputs changed or aliased by the result", s.Name())
		}
	}
}
