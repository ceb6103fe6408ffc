package routeinfo

import (
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/runnelmq/runnel/internal/fakeclock"

	"github.com/runnelmq/runnel/remoting/protocol"
)

func newFakeClock() *fakeclock.Clock { return fakeclock.Default() }

func newTable(clock *fakeclock.Clock) *Table {
	cfg := DefaultConfig()
	cfg.Now = clock.Now
	return New(cfg)
}

func topics(version int64, cfgs ...protocol.TopicConfig) protocol.TopicConfigSerializeWrapper {
	w := protocol.TopicConfigSerializeWrapper{
		TopicConfigTable: map[string]protocol.TopicConfig{},
		DataVersion:      protocol.DataVersion{Timestamp: 1000, Counter: version},
	}
	for _, c := range cfgs {
		w.TopicConfigTable[c.TopicName] = c
	}
	return w
}

func tc(name string, queues, perm int) protocol.TopicConfig {
	return protocol.TopicConfig{TopicName: name, ReadQueueNums: queues, WriteQueueNums: queues, Perm: perm}
}

func reg(cluster, name, addr string, id int64, w protocol.TopicConfigSerializeWrapper) Registration {
	return Registration{ClusterName: cluster, BrokerName: name, BrokerAddr: addr, BrokerID: id,
		HAServerAddr: addr + "-ha", Topics: w}
}

func mustRoute(t *testing.T, tb *Table, topic string) *protocol.TopicRouteData {
	t.Helper()
	r, ok := tb.TopicRoute(topic)
	if !ok {
		t.Fatalf("no route for %s", topic)
	}
	return r
}

func TestRegisterAndRoute(t *testing.T) {
	tb := newTable(newFakeClock())
	res := tb.RegisterBroker(reg("c1", "b", "10.0.0.1:10911", 0, topics(1, tc("T", 4, 6), tc("TBW102", 8, 7))))
	if !res.TopicsUpdated || res.MasterAddr != "" {
		t.Fatalf("master result %+v", res)
	}
	res = tb.RegisterBroker(reg("c1", "b", "10.0.0.2:10911", 1, topics(9, tc("ignored-from-slave", 1, 6))))
	if res.MasterAddr != "10.0.0.1:10911" || res.HAServerAddr != "10.0.0.1:10911-ha" || res.TopicsUpdated {
		t.Fatalf("slave result %+v", res)
	}
	tb.RegisterBroker(reg("c1", "a", "10.0.0.3:10911", 0, topics(1, tc("T", 2, 4))))

	r := mustRoute(t, tb, "T")
	wantQ := []protocol.QueueData{
		{BrokerName: "a", ReadQueueNums: 2, WriteQueueNums: 2, Perm: 4},
		{BrokerName: "b", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6},
	}
	if !reflect.DeepEqual(r.QueueDatas, wantQ) {
		t.Fatalf("queues %+v", r.QueueDatas)
	}
	wantB := []protocol.BrokerData{
		{Cluster: "c1", BrokerName: "a", BrokerAddrs: map[int64]string{0: "10.0.0.3:10911"}},
		{Cluster: "c1", BrokerName: "b", BrokerAddrs: map[int64]string{0: "10.0.0.1:10911", 1: "10.0.0.2:10911"}},
	}
	if !reflect.DeepEqual(r.BrokerDatas, wantB) {
		t.Fatalf("brokers %+v", r.BrokerDatas)
	}
	if _, ok := tb.TopicRoute("ignored-from-slave"); ok {
		t.Fatal("a slave's topics made a route")
	}
	if _, ok := tb.TopicRoute("nope"); ok {
		t.Fatal("unknown topic has a route")
	}
	if got := tb.Topics(); !reflect.DeepEqual(got, []string{"T", "TBW102"}) {
		t.Fatalf("topics %v", got)
	}
	ci := tb.ClusterInfo()
	if !reflect.DeepEqual(ci.ClusterAddrTable, map[string][]string{"c1": {"a", "b"}}) || len(ci.BrokerAddrTable) != 2 {
		t.Fatalf("cluster info %+v", ci)
	}
	// The route is a copy: changing it does not change the table.
	r.BrokerDatas[0].BrokerAddrs[0] = "mutated"
	if mustRoute(t, tb, "T").BrokerDatas[0].BrokerAddrs[0] != "10.0.0.3:10911" {
		t.Fatal("route aliases the table")
	}
}

func TestDataVersionChangeDetection(t *testing.T) {
	tests := []struct {
		name        string
		version     int64
		queues      int
		wantUpdated bool
		wantQueues  int
	}{
		{"same version is ignored", 1, 16, false, 4},
		{"new version is applied", 2, 16, true, 16},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := newTable(newFakeClock())
			tb.RegisterBroker(reg("c", "b", "a:1", 0, topics(1, tc("T", 4, 6))))
			res := tb.RegisterBroker(reg("c", "b", "a:1", 0, topics(tt.version, tc("T", tt.queues, 6))))
			if res.TopicsUpdated != tt.wantUpdated {
				t.Fatalf("TopicsUpdated %v", res.TopicsUpdated)
			}
			if got := mustRoute(t, tb, "T").QueueDatas[0].WriteQueueNums; got != tt.wantQueues {
				t.Fatalf("queues %d want %d", got, tt.wantQueues)
			}
			if v, ok := tb.DataVersion("a:1"); !ok || v.Counter != tt.version {
				t.Fatalf("data version %+v %v", v, ok)
			}
		})
	}
}

func TestDeleteTopicsOnRegistration(t *testing.T) {
	for _, del := range []bool{false, true} {
		cfg := Config{Now: newFakeClock().Now, DeleteTopicsOnRegistration: del}
		tb := New(cfg)
		tb.RegisterBroker(reg("c", "b", "a:1", 0, topics(1, tc("T", 4, 6), tc("U", 4, 6))))
		tb.RegisterBroker(reg("c", "b", "a:1", 0, topics(2, tc("T", 4, 6))))
		if _, ok := tb.TopicRoute("U"); ok == del {
			t.Errorf("DeleteTopicsOnRegistration=%v: route for U present=%v", del, ok)
		}
	}
}

func TestExpiryByClock(t *testing.T) {
	clock := newFakeClock()
	tb := newTable(clock)
	tb.RegisterBroker(reg("c", "b", "m:1", 0, topics(1, tc("T", 4, 6))))
	tb.RegisterBroker(reg("c", "b", "s:1", 1, topics(1)))
	short := reg("c", "quick", "q:1", 0, topics(1, tc("T", 1, 6)))
	short.HeartbeatTimeout = 10 * time.Second
	tb.RegisterBroker(short)

	steps := []struct {
		advance     time.Duration
		touch       string // broker heartbeat before checking
		wantExpired []string
		wantGroups  []string // brokers in route of T
	}{
		{10 * time.Second, "", nil, []string{"b", "quick"}},                     // exactly at the timeout: kept
		{time.Millisecond, "", []string{"q:1"}, []string{"b"}},                  // past its own timeout
		{60 * time.Second, "s:1", nil, []string{"b"}},                           // 70 s
		{50*time.Second + time.Millisecond, "", []string{"m:1"}, []string{"b"}}, // master gone, slave keeps group
		{120*time.Second - 50*time.Second, "", []string{"s:1"}, nil},            // slave silent 120 s + 1 ms since touch
	}
	for i, st := range steps {
		clock.Advance(st.advance)
		if st.touch != "" && !tb.Heartbeat("c", st.touch) {
			t.Fatalf("step %d: heartbeat of %s refused", i, st.touch)
		}
		var got []string
		for _, b := range tb.ExpireBrokers() {
			got = append(got, b.BrokerAddr)
		}
		if !reflect.DeepEqual(got, st.wantExpired) {
			t.Fatalf("step %d: expired %v want %v", i, got, st.wantExpired)
		}
		var groups []string
		if r, ok := tb.TopicRoute("T"); ok {
			for _, bd := range r.BrokerDatas {
				groups = append(groups, bd.BrokerName)
			}
		}
		if !reflect.DeepEqual(groups, st.wantGroups) {
			t.Fatalf("step %d: route groups %v want %v", i, groups, st.wantGroups)
		}
	}
	if len(tb.Topics()) != 0 || len(tb.ClusterInfo().ClusterAddrTable) != 0 || len(tb.LiveBrokers()) != 0 {
		t.Fatalf("table not empty: %v %+v", tb.Topics(), tb.ClusterInfo())
	}
}

func TestHeartbeat(t *testing.T) {
	clock := newFakeClock()
	tb := newTable(clock)
	if tb.Heartbeat("c", "a:1") {
		t.Fatal("heartbeat of unknown broker accepted")
	}
	tb.RegisterBroker(reg("c", "b", "a:1", 0, topics(1, tc("T", 1, 6))))
	if tb.Heartbeat("other", "a:1") {
		t.Fatal("heartbeat with wrong cluster accepted")
	}
	for i := 0; i < 5; i++ {
		clock.Advance(100 * time.Second)
		if !tb.Heartbeat("c", "a:1") {
			t.Fatal("heartbeat refused")
		}
		if exp := tb.ExpireBrokers(); len(exp) != 0 {
			t.Fatalf("expired despite heartbeats: %v", exp)
		}
	}
}

func TestRemoveConn(t *testing.T) {
	tb := newTable(newFakeClock())
	r1 := reg("c", "b", "m:1", 0, topics(1, tc("T", 4, 6)))
	r1.ConnID = 7
	tb.RegisterBroker(r1)
	r2 := reg("c", "b2", "m:2", 0, topics(1, tc("T", 4, 6)))
	r2.ConnID = 8
	tb.RegisterBroker(r2)

	if got := tb.RemoveConn(0); got != nil {
		t.Fatalf("conn 0 removed %v", got)
	}
	// b re-registers over a new connection; the old one closing later must
	// not drop it.
	r1.ConnID = 9
	tb.RegisterBroker(r1)
	if got := tb.RemoveConn(7); len(got) != 0 {
		t.Fatalf("stale conn removed %v", got)
	}
	got := tb.RemoveConn(8)
	if len(got) != 1 || got[0].BrokerAddr != "m:2" || got[0].BrokerName != "b2" {
		t.Fatalf("removed %v", got)
	}
	r := mustRoute(t, tb, "T")
	if len(r.BrokerDatas) != 1 || r.BrokerDatas[0].BrokerName != "b" || len(r.QueueDatas) != 1 {
		t.Fatalf("route %+v", r)
	}
	if !tb.RemoveBroker("m:1") || tb.RemoveBroker("m:1") {
		t.Fatal("RemoveBroker result")
	}
	if _, ok := tb.TopicRoute("T"); ok {
		t.Fatal("route survives its last broker")
	}
}

func TestUnregister(t *testing.T) {
	tb := newTable(newFakeClock())
	tb.RegisterBroker(reg("c", "b", "m:1", 0, topics(1, tc("T", 4, 6))))
	tb.RegisterBroker(reg("c", "b", "s:1", 1, topics(1)))
	if !tb.UnregisterBroker("c", "m:1", "b", 0) {
		t.Fatal("unregister master")
	}
	r := mustRoute(t, tb, "T")
	if !reflect.DeepEqual(r.BrokerDatas[0].BrokerAddrs, map[int64]string{1: "s:1"}) {
		t.Fatalf("after master left: %+v", r.BrokerDatas)
	}
	if tb.UnregisterBroker("c", "x:1", "nobody", 0) {
		t.Fatal("unknown broker unregistered")
	}
	tb.UnregisterBroker("c", "s:1", "b", 1)
	if _, ok := tb.TopicRoute("T"); ok || len(tb.ClusterInfo().BrokerAddrTable) != 0 || len(tb.ClusterInfo().ClusterAddrTable) != 0 {
		t.Fatal("group survives its last broker")
	}
}

func TestRoleSwitchKeepsOneEntry(t *testing.T) {
	tb := newTable(newFakeClock())
	tb.RegisterBroker(reg("c", "b", "x:1", 1, topics(1)))
	tb.RegisterBroker(reg("c", "b", "x:1", 0, topics(1, tc("T", 1, 6))))
	r := mustRoute(t, tb, "T")
	if !reflect.DeepEqual(r.BrokerDatas[0].BrokerAddrs, map[int64]string{0: "x:1"}) {
		t.Fatalf("addrs %v", r.BrokerDatas[0].BrokerAddrs)
	}
}

func TestDeleteTopic(t *testing.T) {
	tb := newTable(newFakeClock())
	tb.RegisterBroker(reg("c1", "b1", "a:1", 0, topics(1, tc("T", 4, 6), tc("U", 1, 6))))
	tb.RegisterBroker(reg("c2", "b2", "a:2", 0, topics(1, tc("T", 4, 6))))
	tests := []struct {
		topic, cluster string
		want           bool
		wantGroups     int // groups left in T's route, -1 = no route
	}{
		{"nope", "", false, 2},
		{"T", "c3", false, 2},
		{"T", "c2", true, 1},
		{"T", "", true, -1},
		{"T", "", false, -1},
	}
	for i, tt := range tests {
		if got := tb.DeleteTopic(tt.topic, tt.cluster); got != tt.want {
			t.Fatalf("step %d: DeleteTopic(%s,%s) = %v", i, tt.topic, tt.cluster, got)
		}
		r, ok := tb.TopicRoute("T")
		groups := -1
		if ok {
			groups = len(r.BrokerDatas)
		}
		if groups != tt.wantGroups {
			t.Fatalf("step %d: groups %d want %d", i, groups, tt.wantGroups)
		}
	}
	if !reflect.DeepEqual(tb.Topics(), []string{"U"}) {
		t.Fatalf("topics %v", tb.Topics())
	}
}

func TestConcurrentUse(t *testing.T) {
	clock := newFakeClock()
	tb := newTable(clock)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			addr := string(rune('a'+i)) + ":1"
			for j := 0; j < 200; j++ {
				tb.RegisterBroker(reg("c", addr, addr, 0, topics(int64(j), tc("T", 4, 6))))
				tb.TopicRoute("T")
				tb.ClusterInfo()
				tb.Heartbeat("c", addr)
				clock.Advance(time.Second)
				tb.ExpireBrokers()
				if j%50 == 0 {
					tb.RemoveBroker(addr)
				}
			}
		}(i)
	}
	wg.Wait()
}

func TestQueryDataVersion(t *testing.T) {
	clock := newFakeClock()
	tb := newTable(clock)
	v1 := protocol.DataVersion{Timestamp: 1000, Counter: 1}
	if changed, _, known := tb.QueryDataVersion("a:1", v1); !changed || known {
		t.Fatal("unknown broker not reported changed")
	}
	tb.RegisterBroker(reg("c", "b", "a:1", 0, topics(1, tc("T", 1, 6))))
	clock.Advance(100 * time.Second)
	if changed, cur, known := tb.QueryDataVersion("a:1", protocol.DataVersion{Timestamp: 1000, Counter: 2}); !changed || !known || cur != v1 {
		t.Fatalf("newer version: changed=%v cur=%+v known=%v", changed, cur, known)
	}
	if exp := tb.ExpireBrokers(); len(exp) != 0 {
		t.Fatal("expired early")
	}
	clock.Advance(100 * time.Second) // 200 s since registering: only the unchanged query below kept it
	if exp := tb.ExpireBrokers(); len(exp) != 1 {
		t.Fatal("a changed query counted as heartbeat")
	}
	tb.RegisterBroker(reg("c", "b", "a:1", 0, topics(1, tc("T", 1, 6))))
	clock.Advance(100 * time.Second)
	if changed, _, _ := tb.QueryDataVersion("a:1", v1); changed {
		t.Fatal("same version reported changed")
	}
	clock.Advance(100 * time.Second)
	if exp := tb.ExpireBrokers(); len(exp) != 0 {
		t.Fatal("an unchanged query did not count as heartbeat")
	}
}

func TestTopicsOfCluster(t *testing.T) {
	tb := newTable(newFakeClock())
	tb.RegisterBroker(reg("c1", "b1", "a:1", 0, topics(1, tc("T", 1, 6), tc("U", 1, 6))))
	tb.RegisterBroker(reg("c2", "b2", "a:2", 0, topics(1, tc("T", 1, 6), tc("V", 1, 6))))
	for cluster, want := range map[string][]string{"c1": {"T", "U"}, "c2": {"T", "V"}, "c3": {}} {
		if got := tb.TopicsOfCluster(cluster); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v want %v", cluster, got, want)
		}
	}
}

// TestPartialRegistrationKeepsOtherTopics: a registration that carries only
// the broker's changed topics (a new data version, as Java's
// registerIncrementBrokerData sends) writes those and keeps the group's
// other topics; a registration whose version the table already has still
// brings back a topic it lacks (Java's isTopicConfigChanged) without
// rewriting the ones it has.
func TestPartialRegistrationKeepsOtherTopics(t *testing.T) {
	tb := newTable(newFakeClock())
	tb.RegisterBroker(reg("c", "b", "a:1", 0, topics(1, tc("T", 4, 6), tc("U", 4, 6))))
	if res := tb.RegisterBroker(reg("c", "b", "a:1", 0, topics(2, tc("V", 2, 6), tc("T", 8, 6)))); !res.TopicsUpdated {
		t.Fatal("a partial registration with a new version was not applied")
	}
	for topic, want := range map[string]int{"T": 8, "U": 4, "V": 2} {
		if got := mustRoute(t, tb, topic).QueueDatas[0].WriteQueueNums; got != want {
			t.Errorf("%s: %d queues, want %d", topic, got, want)
		}
	}
	if got := tb.Topics(); !reflect.DeepEqual(got, []string{"T", "U", "V"}) {
		t.Fatalf("topics %v", got)
	}

	if !tb.DeleteTopic("U", "") {
		t.Fatal("DeleteTopic(U) found nothing")
	}
	res := tb.RegisterBroker(reg("c", "b", "a:1", 0, topics(2, tc("T", 16, 6), tc("U", 4, 6), tc("V", 2, 6))))
	if !res.TopicsUpdated {
		t.Fatal("the same version with a missing topic reported no update")
	}
	if got := mustRoute(t, tb, "U").QueueDatas[0].WriteQueueNums; got != 4 {
		t.Errorf("U came back with %d queues, want 4", got)
	}
	if got := mustRoute(t, tb, "T").QueueDatas[0].WriteQueueNums; got != 8 {
		t.Errorf("T rewritten by a registration of a version the table has: %d queues, want 8", got)
	}
	if res := tb.RegisterBroker(reg("c", "b", "a:1", 0, topics(2, tc("T", 16, 6)))); res.TopicsUpdated {
		t.Error("the same version with nothing missing reported an update")
	}
}
