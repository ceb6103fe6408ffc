package routeinfo

import (
	"testing"

	"github.com/runnelmq/runnel/remoting/protocol"
)

func permOf(t *testing.T, tb *Table, topic, broker string) int {
	t.Helper()
	for _, qd := range mustRoute(t, tb, topic).QueueDatas {
		if qd.BrokerName == broker {
			return qd.Perm
		}
	}
	t.Fatalf("topic %s has no queue data of %s", topic, broker)
	return 0
}

// TestWipeAndAddWritePerm: a wipe takes PERM_WRITE from the named group's
// topics only; an add makes them read-write (dropping inherit, as Java);
// a re-registration with the same data version keeps the wipe, a new
// version restores the broker's own perms.
func TestWipeAndAddWritePerm(t *testing.T) {
	tb := newTable(newFakeClock())
	a := reg("c1", "a", "10.0.0.1:10911", 0, topics(1, tc("T", 4, 6), tc("U", 2, 7)))
	tb.RegisterBroker(a)
	tb.RegisterBroker(reg("c1", "b", "10.0.0.2:10911", 0, topics(1, tc("T", 4, 6))))

	if n := tb.WipeWritePerm("a"); n != 2 {
		t.Fatalf("wipe changed %d topics, want 2", n)
	}
	if p := permOf(t, tb, "T", "a"); p != protocol.PermRead {
		t.Fatalf("T on a after wipe: perm %d, want %d", p, protocol.PermRead)
	}
	if p := permOf(t, tb, "U", "a"); p != protocol.PermRead|protocol.PermInherit {
		t.Fatalf("U on a after wipe: perm %d, want read+inherit", p)
	}
	if p := permOf(t, tb, "T", "b"); p != 6 {
		t.Fatalf("T on b changed by a's wipe: perm %d", p)
	}
	if n := tb.WipeWritePerm("nosuch"); n != 0 {
		t.Fatalf("wipe of an unknown group changed %d topics", n)
	}

	tb.RegisterBroker(a) // same data version: the wipe holds
	if p := permOf(t, tb, "T", "a"); p != protocol.PermRead {
		t.Fatalf("re-registration with the same version undid the wipe: perm %d", p)
	}

	if n := tb.AddWritePerm("a"); n != 2 {
		t.Fatalf("add changed %d topics, want 2", n)
	}
	if p := permOf(t, tb, "U", "a"); p != protocol.PermRead|protocol.PermWrite {
		t.Fatalf("U on a after add: perm %d, want 6", p)
	}

	tb.WipeWritePerm("a")
	tb.RegisterBroker(reg("c1", "a", "10.0.0.1:10911", 0, topics(2, tc("T", 4, 6), tc("U", 2, 7))))
	if p := permOf(t, tb, "U", "a"); p != 7 {
		t.Fatalf("a new data version did not restore U's perm: %d", p)
	}
}
