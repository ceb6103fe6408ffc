package core

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/runnelmq/runnel/groupconf"
	"github.com/runnelmq/runnel/internal/fakeclock"
	"github.com/runnelmq/runnel/store"
)

// openCoreAt opens a started core over fs on clock, which a test closes
// with closeCore and opens again: a restart.
func openCoreAt(t *testing.T, fs vfs.FS, clock *fakeclock.Clock) *testCore {
	t.Helper()
	var c *testCore
	c = openCoreNoCleanup(t, func(cfg *Config, o *store.Options) {
		o.FS, o.Now, cfg.Now = fs, clock.Now, clock.Now
	})
	c.clock = clock
	return c
}

// closeCore closes a core as a clean shutdown does.
func closeCore(t *testing.T, c *testCore) {
	t.Helper()
	if err := c.Close(true); err != nil {
		t.Fatal(err)
	}
}

// abortCore closes a core as a crash would: nothing persisted on the way
// out.
func abortCore(t *testing.T, c *testCore) {
	t.Helper()
	if err := c.Close(false); err != nil {
		t.Fatal(err)
	}
}

// TestInFlightSurvivesRestart: what was popped, acknowledged and changed
// before an abort is so after it: an acknowledged message never comes
// back and its handle is refused, a changed one is acknowledged by its new
// handle, one not acknowledged comes back when its time passes, and a
// FIFO queue stays blocked by its batch until that is acknowledged.
func TestInFlightSurvivesRestart(t *testing.T) {
	fs, clock := vfs.NewMem(), fakeclock.Default()
	c := openCoreAt(t, fs, clock)
	for i := range 3 {
		sendBody(t, c, "T", 0, fmt.Sprint("m", i))
	}
	g := groupconf.New("fifo")
	g.ConsumeMessageOrderly = true
	if err := c.UpdateGroup(g, "test"); err != nil {
		t.Fatal(err)
	}
	sendBody(t, c, "F", 0, "f0")
	sendBody(t, c, "F", 0, "f1")
	p := mustPop(t, c, popReq("g", "T", 3, time.Minute))
	if err := c.Ack("g", "T", p.Messages[0].Handle); err != nil {
		t.Fatal(err)
	}
	h1, err := c.ChangeInvisible("g", "T", p.Messages[1].Handle, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	f := mustPop(t, c, popReq("fifo", "F", 1, time.Minute))
	abortCore(t, c)

	c = openCoreAt(t, fs, clock)
	defer closeCore(t, c)
	if res := mustPop(t, c, popReq("g", "T", 3, time.Minute)); res.Status != PopNoNewMessage {
		t.Fatalf("after a restart popped again %v", bodiesOf(res.Messages))
	}
	if res := mustPop(t, c, popReq("fifo", "F", 1, time.Minute)); res.Status != PopNoNewMessage {
		t.Fatalf("after a restart a blocked FIFO queue gave %v", bodiesOf(res.Messages))
	}
	wantReason(t, c.Ack("g", "T", p.Messages[0].Handle), InvalidReceipt)
	wantReason(t, c.Ack("g", "T", p.Messages[1].Handle), InvalidReceipt)
	if err := c.Ack("g", "T", h1); err != nil {
		t.Fatalf("the changed handle after a restart: %v", err)
	}
	if err := c.Ack("fifo", "F", f.Messages[0].Handle); err != nil {
		t.Fatalf("a FIFO handle after a restart: %v", err)
	}
	if got := bodiesOf(mustPop(t, c, popReq("fifo", "F", 1, time.Minute)).Messages); strings.Join(got, " ") != "f1#1" {
		t.Fatalf("FIFO after the ack %v", got)
	}
	c.advance(t, time.Minute)
	if got := bodiesOf(mustPop(t, c, popReq("g", "T", 3, time.Minute)).Messages); strings.Join(got, " ") != "m2#2" {
		t.Fatalf("came back after the restart %v, want m2#2", got)
	}
}

// advance moves the core's clock on by d and runs the due-time service
// once: what fell due meanwhile (delayed messages, POP messages not
// acknowledged in time) is delivered before it returns.
func (c *testCore) advance(t testing.TB, d time.Duration) {
	t.Helper()
	c.clock.Advance(d)
	if svc := c.Due(); svc != nil {
		if _, err := svc.Step(); err != nil {
			t.Fatal(err)
		}
	}
}
