package clients

import (
	"reflect"
	"testing"
	"time"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newManager() (*Manager[string], *clock) {
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	return New[string](Config{ChannelExpiry: 2 * time.Minute}, c.now), c
}

func consumer(group string, subs ...Subscription) ConsumerData {
	return ConsumerData{Group: group, ConsumeType: "CONSUME_PASSIVELY", MessageModel: "CLUSTERING",
		ConsumeFromWhere: "CONSUME_FROM_LAST_OFFSET", Subscriptions: subs}
}

func TestMembershipChanges(t *testing.T) {
	m, _ := newManager()
	a := Channel[string]{ClientID: "A", ConnID: 1}
	b := Channel[string]{ClientID: "B", ConnID: 2}
	if !m.RegisterConsumer(a, consumer("g")) {
		t.Fatal("first member must change the group")
	}
	if m.RegisterConsumer(a, consumer("g")) {
		t.Fatal("a repeated heartbeat must not change the group")
	}
	if !m.RegisterConsumer(b, consumer("g")) {
		t.Fatal("second member must change the group")
	}
	if got := m.ConsumerIDs("g"); !reflect.DeepEqual(got, []string{"A", "B"}) {
		t.Fatalf("ids = %v", got)
	}
	// A reconnects on a new connection: replaced, not added.
	if m.RegisterConsumer(Channel[string]{ClientID: "A", ConnID: 3}, consumer("g")) {
		t.Fatal("reconnect reported as a new member")
	}
	if got := m.Channels("g"); len(got) != 2 || got[0].ConnID != 3 {
		t.Fatalf("channels = %+v", got)
	}
	// The old connection closing must not drop A's new channel.
	if got := m.ConnClosed(1); len(got) != 0 {
		t.Fatalf("closing a replaced conn changed %v", got)
	}
	if got := m.ConnClosed(2); !reflect.DeepEqual(got, []string{"g"}) {
		t.Fatalf("close changed %v", got)
	}
	if got := m.ConsumerIDs("g"); !reflect.DeepEqual(got, []string{"A"}) {
		t.Fatalf("ids = %v", got)
	}
	if !m.UnregisterConsumer("g", "A", 3) {
		t.Fatal("unregister of a member failed")
	}
	if m.UnregisterConsumer("g", "A", 3) {
		t.Fatal("unregister twice succeeded")
	}
	if got := m.Groups(); len(got) != 0 {
		t.Fatalf("empty group kept: %v", got)
	}
}

func TestExpiry(t *testing.T) {
	m, c := newManager()
	m.RegisterConsumer(Channel[string]{ClientID: "A", ConnID: 1}, consumer("g1"))
	m.RegisterConsumer(Channel[string]{ClientID: "A", ConnID: 1}, consumer("g2"))
	m.RegisterProducer("pg", Channel[string]{ClientID: "A", ConnID: 1})
	c.t = c.t.Add(time.Minute)
	m.RegisterConsumer(Channel[string]{ClientID: "B", ConnID: 2}, consumer("g1"))
	c.t = c.t.Add(time.Minute) // A: exactly at expiry, kept
	if got := m.ExpireIdle(); len(got) != 0 {
		t.Fatalf("expired too early: %v", got)
	}
	c.t = c.t.Add(time.Millisecond)
	if got := m.ExpireIdle(); !reflect.DeepEqual(got, []string{"g1", "g2"}) {
		t.Fatalf("expired %v", got)
	}
	if got := m.ConsumerIDs("g1"); !reflect.DeepEqual(got, []string{"B"}) {
		t.Fatalf("g1 = %v", got)
	}
	if got := m.ProducerChannels("pg"); len(got) != 0 {
		t.Fatalf("producer not expired: %v", got)
	}
}

func TestSubscriptions(t *testing.T) {
	m, _ := newManager()
	ch := Channel[string]{ClientID: "A", ConnID: 1}
	m.RegisterConsumer(ch, consumer("g",
		Subscription{Topic: "T", Expression: "A || B", Version: 10},
		Subscription{Topic: "U", Expression: "*", Version: 10}))
	// An older version of T's subscription does not replace the newer one.
	m.RegisterConsumer(ch, consumer("g", Subscription{Topic: "T", Expression: "C", Version: 5}))
	s, _, ok := m.Subscription("g", "T")
	if !ok || s.Expression != "A || B" {
		t.Fatalf("sub = %+v %v", s, ok)
	}
	// U is no longer named: dropped, while the group stays known.
	if _, hasGroup, ok := m.Subscription("g", "U"); !hasGroup || ok {
		t.Fatalf("unnamed topic: hasGroup %v, ok %v; want true, false", hasGroup, ok)
	}
	if _, hasGroup, ok := m.Subscription("nobody", "T"); hasGroup || ok {
		t.Fatalf("unknown group: hasGroup %v, ok %v; want false, false", hasGroup, ok)
	}
	m.RegisterConsumer(ch, consumer("g", Subscription{Topic: "T", Expression: "C", Version: 11}))
	if s, _, _ := m.Subscription("g", "T"); s.Expression != "C" {
		t.Fatalf("newer sub not taken: %+v", s)
	}
	if got := m.GroupsOfTopic("T"); !reflect.DeepEqual(got, []string{"g"}) {
		t.Fatalf("groups of T = %v", got)
	}
	info, ok := m.Group("g")
	if !ok || info.MessageModel != "CLUSTERING" || len(info.Channels) != 1 || len(info.Subscriptions) != 1 {
		t.Fatalf("group = %+v", info)
	}
}
