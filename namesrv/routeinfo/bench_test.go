package routeinfo

import (
	"fmt"
	"testing"
)

// BenchmarkTopicRoute measures assembling one route in a table of 8
// broker groups (master + slave) serving 1000 topics each.
func BenchmarkTopicRoute(b *testing.B) {
	tb := newTable(newFakeClock())
	for g := 0; g < 8; g++ {
		w := topics(1)
		for i := 0; i < 1000; i++ {
			name := fmt.Sprintf("topic-%d", i)
			w.TopicConfigTable[name] = tc(name, 8, 6)
		}
		name := fmt.Sprintf("broker-%d", g)
		tb.RegisterBroker(reg("c", name, name+":10911", 0, w))
		tb.RegisterBroker(reg("c", name, name+":10921", 1, topics(1)))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok := tb.TopicRoute("topic-500"); !ok {
			b.Fatal("no route")
		}
	}
}
