package routeinfo

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"testing"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// TestTopicQueuesAgainstAMap drives a topic's list and a map through the
// same random puts and deletes: the list always holds the map's entries,
// in broker name order.
func TestTopicQueuesAgainstAMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var qs topicQueues
	model := map[string]protocol.QueueData{}
	for step := range 5000 {
		name := fmt.Sprintf("broker-%d", rng.IntN(9))
		if rng.IntN(3) == 0 {
			var had bool
			qs, had = qs.del(name)
			if _, want := model[name]; had != want {
				t.Fatalf("step %d: del(%s) = %v, the model had it: %v", step, name, had, want)
			}
			delete(model, name)
		} else {
			qd := protocol.QueueData{BrokerName: name, ReadQueueNums: step, WriteQueueNums: step, Perm: 6}
			qs = qs.put(qd)
			model[name] = qd
		}
		want := make([]protocol.QueueData, 0, len(model))
		for _, qd := range model {
			want = append(want, qd)
		}
		sort.Slice(want, func(i, j int) bool { return want[i].BrokerName < want[j].BrokerName })
		if !slices.Equal(qs, want) {
			t.Fatalf("step %d: list %v, model %v", step, qs, want)
		}
		for _, n := range []string{"broker-0", "broker-4", "broker-8", "absent"} {
			if _, in := model[n]; qs.has(n) != in {
				t.Fatalf("step %d: has(%s) = %v", step, n, !in)
			}
		}
	}
}

// TestRouteListsGroupsByName registers groups out of name order; the
// route lists their queue and broker data sorted by name, whatever the
// order they came in or were removed.
func TestRouteListsGroupsByName(t *testing.T) {
	tb := newTable(newFakeClock())
	for _, n := range []string{"b-3", "b-1", "b-4", "b-0", "b-2"} {
		tb.RegisterBroker(reg("c", n, n+":10911", 0, topics(1, tc("T", 4, 6))))
	}
	if !tb.UnregisterBroker("c", "b-4:10911", "b-4", 0) {
		t.Fatal("unregister of b-4 refused")
	}
	r := mustRoute(t, tb, "T")
	var qNames, bNames []string
	for _, qd := range r.QueueDatas {
		qNames = append(qNames, qd.BrokerName)
	}
	for _, bd := range r.BrokerDatas {
		bNames = append(bNames, bd.BrokerName)
	}
	want := []string{"b-0", "b-1", "b-2", "b-3"}
	if !slices.Equal(qNames, want) || !slices.Equal(bNames, want) {
		t.Fatalf("queue datas %v, broker datas %v; want both %v", qNames, bNames, want)
	}
}

// BenchmarkTableHeapPerTopic reports the heap a table keeps per topic of
// one broker group, the shape of a dev cluster: the name server holds
// this for every topic, in the same process as the broker under `runnel
// dev`, where the collector scans it every cycle.
func BenchmarkTableHeapPerTopic(b *testing.B) {
	const n = 10000
	w := topics(1)
	for i := range n {
		name := fmt.Sprintf("topic-%d", i)
		w.TopicConfigTable[name] = tc(name, 8, 6)
	}
	var perTopic float64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		tb := newTable(newFakeClock())
		tb.RegisterBroker(reg("c", "broker-a", "a:10911", 0, w))
		runtime.GC()
		runtime.ReadMemStats(&after)
		perTopic = float64(after.HeapAlloc-before.HeapAlloc) / n
		runtime.KeepAlive(tb)
	}
	b.ReportMetric(perTopic, "heap-B/topic")
}
