package clients

import (
	"testing"
	"time"
)

func TestClientChannelsProducersFirstNewestFirst(t *testing.T) {
	now := time.Unix(1000, 0)
	m := New[string](Config{}, func() time.Time { return now })
	m.RegisterConsumer(Channel[string]{ClientID: "a", ConnID: 1}, ConsumerData{Group: "cg"})
	now = now.Add(time.Second)
	m.RegisterProducer("pg", Channel[string]{ClientID: "a", ConnID: 2})
	now = now.Add(time.Second)
	m.RegisterProducer("pg2", Channel[string]{ClientID: "a", ConnID: 3})
	m.RegisterProducer("pg", Channel[string]{ClientID: "b", ConnID: 4})

	got := m.ClientChannels("a")
	var conns []uint64
	for _, c := range got {
		conns = append(conns, c.ConnID)
	}
	if len(conns) != 3 || conns[0] != 3 || conns[1] != 2 || conns[2] != 1 {
		t.Fatalf("ClientChannels(a) conns = %v, want [3 2 1]", conns)
	}
	if got := m.ClientChannels("nobody"); len(got) != 0 {
		t.Fatalf("ClientChannels(nobody) = %v, want none", got)
	}
	m.ConnClosed(3)
	if got := m.ClientChannels("a"); len(got) != 2 || got[0].ConnID != 2 {
		t.Fatalf("after close: %v, want conn 2 first", got)
	}
}
