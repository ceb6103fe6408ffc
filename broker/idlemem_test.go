package broker

import (
	"fmt"
	"testing"
	"time"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// TestIdleReleaseOncePerIdleSpell: memory is released when a whole tick
// passed without activity, once per idle spell, and again after activity
// resumed and stopped.
func TestIdleReleaseOncePerIdleSpell(t *testing.T) {
	var act uint64
	released := 0
	// A release collects, which the activity counts.
	r := idleRelease{activity: func() uint64 { return act }, release: func() { released++; act += 2 }}
	for i, c := range []struct {
		bump bool
		want bool
	}{
		{false, false}, // the first tick has nothing to compare with
		{false, true},  // idle for a tick: release
		{false, false}, // still idle: not again
		{false, false}, // its own collections were not activity
		{true, false},  // busy
		{true, false},  // busy
		{false, true},  // idle again: release again
		{false, false},
	} {
		if c.bump {
			act++
		}
		if got := r.tick(); got != c.want {
			t.Fatalf("tick %d: released %v, want %v", i, got, c.want)
		}
	}
	if released != 2 {
		t.Fatalf("released %d times, want 2", released)
	}
}

// TestIdleReleaseWaitsForQuietTicks: with quiet ticks to an interval, the
// release comes after that many idle ticks in a row, and activity in
// between (Pebble compacting after the load) starts the count again.
func TestIdleReleaseWaitsForQuietTicks(t *testing.T) {
	var act uint64
	released := 0
	r := idleRelease{quiet: 3, activity: func() uint64 { return act }, release: func() { released++; act++ }}
	for i, bump := range []bool{false, false, false, true, false, false} {
		if bump {
			act++
		}
		if r.tick() {
			t.Fatalf("released at tick %d, before three idle ticks in a row", i)
		}
	}
	if !r.tick() {
		t.Fatal("no release after three idle ticks in a row")
	}
	for i := range 10 {
		if r.tick() {
			t.Fatalf("released again %d ticks later in the same idle spell", i+1)
		}
	}
	if released != 1 {
		t.Fatalf("released %d times, want 1", released)
	}
}

// TestBrokerReleasesMemoryWhenIdle: a broker that stops being written to
// gives its memory back (once), and serves as before afterwards.
func TestBrokerReleasesMemoryWhenIdle(t *testing.T) {
	b := startBroker(t, func(c *config.Config) { c.IdleMemoryRelease = 20 * time.Millisecond })
	rc := newRawClient(t, b.Addr())
	rc.createTopic("Idle", 1)
	for i := range 50 {
		if r := rc.send("Idle", 0, "", fmt.Sprint(i)); r.Code != protocol.RespSuccess {
			t.Fatalf("send: %d %s", r.Code, r.Remark)
		}
	}
	testwait.For(t, 10*time.Second, "a release after the sends", func() bool { return b.MemoryReleases() >= 1 })
	if r := rc.send("Idle", 0, "", "after"); r.Code != protocol.RespSuccess {
		t.Fatalf("send after the release: %d %s", r.Code, r.Remark)
	}
	if n := b.Store().MaxOffset("Idle", 0); n != 51 {
		t.Fatalf("queue holds %d messages, want 51", n)
	}
}
