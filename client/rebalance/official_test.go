package rebalance

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	official "github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/rlog"

	"github.com/runnelmq/runnel/client/queue"
)

// These tests run the official Go client's exported strategies on the same
// inputs and require the same answer, so a consumer group mixing both
// clients splits its queues without overlap or gap.

func toOfficial(all []queue.MessageQueue) []*primitive.MessageQueue {
	out := make([]*primitive.MessageQueue, len(all))
	for i, mq := range all {
		out[i] = &primitive.MessageQueue{Topic: mq.Topic, BrokerName: mq.BrokerName, QueueId: int(mq.QueueID)}
	}
	return out
}

func fromOfficial(all []*primitive.MessageQueue) []queue.MessageQueue {
	out := make([]queue.MessageQueue, 0, len(all))
	for _, mq := range all {
		out = append(out, queue.MessageQueue{Topic: mq.Topic, BrokerName: mq.BrokerName, QueueID: int32(mq.QueueId)})
	}
	return out
}

func compareWithOfficial(t *testing.T, name string, ours Strategy, theirs official.AllocateStrategy, all []queue.MessageQueue, clients []string) {
	t.Helper()
	for _, c := range append(slices.Clone(clients), "stranger") {
		got, err := ours.Allocate("g", c, all, clients)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := fromOfficial(theirs("g", c, toOfficial(all), clients))
		if !slices.Equal(got, want) {
			t.Fatalf("%s, %d queues, clients %v, client %s:\n ours     %v\n official %v", name, len(all), clients, c, got, want)
		}
	}
}

func TestMatchesOfficialGoClient(t *testing.T) {
	rlog.SetLogLevel("error") // its "[BUG] not in cidAll" warnings are expected here
	r := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		all, clients := randomGroup(r)
		compareWithOfficial(t, "averagely", Averagely{}, official.AllocateByAveragely, all, clients)
		compareWithOfficial(t, "circle", AveragelyByCircle{}, official.AllocateByAveragelyCircle, all, clients)
		v := 1 + r.IntN(20)
		compareWithOfficial(t, fmt.Sprintf("consistent hash (%d vnodes)", v),
			ConsistentHash{VirtualNodes: v, Ring: RingGoClient}, official.AllocateByConsistentHash(v), all, clients)
		fixed := all[:1+r.IntN(len(all))]
		compareWithOfficial(t, "config", ByConfig{Queues: fixed}, official.AllocateByConfig(toOfficial(fixed)), all, clients)
		// The official client's machine-room strategy agrees with Java's
		// only when every queue is in a served room (see ByMachineRoom).
		rooms := []string{}
		for _, mq := range all {
			if p := javaSplit(mq.BrokerName, "@"); len(p) == 2 && !slices.Contains(rooms, p[0]) {
				rooms = append(rooms, p[0])
			}
		}
		if len(rooms) > 0 && allServed(all, rooms) {
			compareWithOfficial(t, "machine room", ByMachineRoom{ConsumerIDCs: rooms}, official.AllocateByMachineRoom(rooms), all, clients)
		}
	}
}

func allServed(all []queue.MessageQueue, rooms []string) bool {
	for _, mq := range all {
		if p := javaSplit(mq.BrokerName, "@"); len(p) != 2 || !slices.Contains(rooms, p[0]) {
			return false
		}
	}
	return true
}

// TestByMachineRoomFollowsJavaNotOfficialGo pins down the one known
// divergence: when unserved queues sort before served ones, the official Go
// client hands out the unserved ones; Java (and we) hand out served queues.
func TestByMachineRoomFollowsJavaNotOfficialGo(t *testing.T) {
	all := []queue.MessageQueue{
		{Topic: "T", BrokerName: "aa@b", QueueID: 0}, // not served
		{Topic: "T", BrokerName: "aa@b", QueueID: 1}, // not served
		{Topic: "T", BrokerName: "hz@b", QueueID: 0},
		{Topic: "T", BrokerName: "hz@b", QueueID: 1},
	}
	clients := []string{"c1"}
	got, err := ByMachineRoom{ConsumerIDCs: []string{"hz"}}.Allocate("g", "c1", all, clients)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, all[2:]) {
		t.Fatalf("ours = %v, want the hz queues %v", got, all[2:])
	}
	theirs := fromOfficial(official.AllocateByMachineRoom([]string{"hz"})("g", "c1", toOfficial(all), clients))
	if slices.Equal(theirs, got) {
		t.Fatalf("official client now agrees with Java (%v); update ByMachineRoom's doc and the comparison test", theirs)
	}
}
