package client

import (
	"reflect"
	"testing"

	"github.com/runnelmq/runnel/remoting/protocol"
)

func routeOn(brokers ...protocol.BrokerData) *protocol.TopicRouteData {
	d := &protocol.TopicRouteData{}
	for _, b := range brokers {
		// Each route decodes its own copy, as from the wire.
		d.BrokerDatas = append(d.BrokerDatas, b.Clone())
		d.QueueDatas = append(d.QueueDatas, protocol.QueueData{BrokerName: b.BrokerName, ReadQueueNums: 8, WriteQueueNums: 8, Perm: 6})
	}
	return d
}

// The topics of one broker share the table's entry for it (one address
// map, not one per topic); an entry changes only when a route says
// something else of its broker, and routes stored after see the change.
func TestRoutesShareTheirBrokersEntries(t *testing.T) {
	var rt routeTable
	rt.init()
	a := protocol.BrokerData{Cluster: "c", BrokerName: "broker-a", BrokerAddrs: map[int64]string{0: "10.0.0.1:10911"}}
	if !rt.put("T1", buildRoute("T1", routeOn(a), 0)) {
		t.Fatal("a new broker's address was not reported")
	}
	if rt.put("T2", buildRoute("T2", routeOn(a), 0)) {
		t.Fatal("a known address was reported as new")
	}
	m1, m2 := rt.get("T1").data.BrokerDatas[0].BrokerAddrs, rt.get("T2").data.BrokerDatas[0].BrokerAddrs
	if reflect.ValueOf(m1).Pointer() != reflect.ValueOf(m2).Pointer() {
		t.Fatal("two topics of one broker hold two address maps")
	}
	if got := rt.get("T1").data.QueueDatas; got != nil {
		t.Fatalf("a stored route kept its queue datas: %v", got)
	}

	moved := a.Clone()
	moved.BrokerAddrs[0] = "10.0.0.2:10911"
	if !rt.put("T3", buildRoute("T3", routeOn(moved), 0)) {
		t.Fatal("a moved master's address was not reported")
	}
	if got := rt.masterAddr("broker-a"); got != "10.0.0.2:10911" {
		t.Fatalf("master %s after the move", got)
	}
	if got := rt.get("T1").data.BrokerDatas[0].BrokerAddrs[0]; got != "10.0.0.1:10911" {
		t.Fatalf("an entry was written after it was stored: T1's route says %s", got)
	}
	if got := rt.get("T3").data.BrokerDatas[0].BrokerAddrs[0]; got != "10.0.0.2:10911" {
		t.Fatalf("T3's route says %s", got)
	}
	if pub := rt.get("T3").publish; len(pub) != 8 || pub[0].BrokerName != "broker-a" {
		t.Fatalf("publish queues %v", pub)
	}
}

// A route whose readable and writable queues are the same keeps one list
// for both; one whose differ keeps each, each right.
func TestRouteKeepsOneListWhenBothAreTheSame(t *testing.T) {
	a := protocol.BrokerData{Cluster: "c", BrokerName: "broker-a", BrokerAddrs: map[int64]string{0: "10.0.0.1:10911"}}
	r := buildRoute("T", routeOn(a), 0)
	if len(r.publish) != 8 || len(r.subscribe) != 8 || &r.publish[0] != &r.subscribe[0] {
		t.Fatalf("publish %v and subscribe %v: not one list", r.publish, r.subscribe)
	}

	d := routeOn(a)
	d.QueueDatas[0].WriteQueueNums = 4
	r = buildRoute("T", d, 0)
	if len(r.publish) != 4 || len(r.subscribe) != 8 || cap(r.publish) != 4 || cap(r.subscribe) != 8 {
		t.Fatalf("4 writable of 8 readable: publish %v (cap %d), subscribe %v (cap %d)",
			r.publish, cap(r.publish), r.subscribe, cap(r.subscribe))
	}
	for i, mq := range r.subscribe {
		if mq.QueueID != int32(i) || mq.Topic != "T" || mq.BrokerName != "broker-a" {
			t.Fatalf("subscribe[%d] = %v", i, mq)
		}
	}

	d = routeOn(a)
	d.QueueDatas[0].Perm = permRead
	r = buildRoute("T", d, 0)
	if len(r.publish) != 0 || len(r.subscribe) != 8 {
		t.Fatalf("read-only topic: publish %v, subscribe %v", r.publish, r.subscribe)
	}
}
