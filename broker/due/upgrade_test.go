package due

import (
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/runnelmq/runnel/message"
)

// oldDeliver stores the delivered copy of the waiting message at queue
// offset off of topic/queue, as the services before package due did.
func (e *env) oldDeliver(topic string, q int32, off int64, restore func(*message.MessageExt) (*message.MessageExt, error)) {
	e.t.Helper()
	m := e.messages(topic, q)[off]
	out, err := restore(m)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.st.Put([]*message.MessageExt{out}); err != nil {
		e.t.Fatal(err)
	}
}

// TestUpgradeFromOldProgress: a store written the old way (per-level
// delay offsets through SetDelayOffset, the 16-byte "timer" checkpoint),
// each left one delivery behind as a crash between the delivering write
// and the progress write leaves it, resumes with the Service: nothing
// delivered twice, nothing lost. The first progress saved is the one
// record, and from then on the old records are not read.
func TestUpgradeFromOldProgress(t *testing.T) {
	e := newEnv(t)
	l := mustLevels(t, "1s 2s")
	e.scheduleLevel1(l, "a", "b", "c")
	e.schedule(l, "T", 0, "d", 2, "u-d")
	e.timer("t1", time.Second)
	e.timer("t2", 2*time.Second)
	e.timer("t3", 3*time.Second)
	e.timer("t4", time.Hour)

	// The old services at t0+2s: a delivered and counted, b delivered and
	// its level's offset not yet written; t1 delivered and checkpointed,
	// t2 delivered and not.
	e.clock.Advance(2 * time.Second)
	e.oldDeliver(ScheduleTopic, 0, 0, Restore)
	if err := e.st.SetDelayOffset(1, 1); err != nil {
		t.Fatal(err)
	}
	e.oldDeliver(ScheduleTopic, 0, 1, Restore)
	e.oldDeliver(TimerTopic, 0, 0, RestoreTimer)
	var old [16]byte
	binary.BigEndian.PutUint64(old[:], 1) // t2 is the lowest waiting offset
	binary.BigEndian.PutUint64(old[8:], uint64(t0.Add(time.Second).UnixMilli()))
	if err := e.st.PutCheckpoint(legacyTimerCheckpoint, old[:]); err != nil {
		t.Fatal(err)
	}
	e.oldDeliver(TimerTopic, 0, 1, RestoreTimer)
	e.reopen()

	s := e.service(opts{levels: l})
	if _, ok, _ := e.st.Checkpoint(CheckpointName); ok {
		t.Fatal("the record written before any progress moved")
	}
	if n, tn := s.delay.Next(), s.timer.Next(); n[0] != 1 || n[1] != 0 || tn[0] != 1 {
		t.Fatalf("progress resumed as delay %v timer %v, want level 1 at 1 and the timer queue at 1", n, tn)
	}
	step(t, s)
	if got := fmt.Sprint(e.bodies("T", 0)); got != "[a b c d]" {
		t.Fatalf("T/0 = %s, want each delayed message once", got)
	}
	if got := fmt.Sprint(e.delivered()); got != "[t1 t2]" {
		t.Fatalf("T/1 = %s before t3 is due", got)
	}
	e.clock.Advance(time.Hour)
	step(t, s)
	if got := fmt.Sprint(e.delivered()); got != "[t1 t2 t3 t4]" {
		t.Fatalf("T/1 = %s, want each timer once", got)
	}
	if d, tm := e.saved("delay"), e.saved("timer"); d[0][0] != 3 || d[1][0] != 1 || tm[0][0] != 4 {
		t.Fatalf("saved delay %v timer %v", d, tm)
	}

	// The old records, even gone back to zero, are not read again.
	if err := e.st.SetDelayOffset(1, 0); err != nil {
		t.Fatal(err)
	}
	if err := e.st.PutCheckpoint(legacyTimerCheckpoint, make([]byte, 16)); err != nil {
		t.Fatal(err)
	}
	e.reopen()
	fs := &faultStore{Store: e.st}
	s = e.service(opts{levels: l, st: fs})
	if n := s.delay.Next(); n[0] != 3 || n[1] != 1 {
		t.Fatalf("delay progress after the upgrade %v, want the record's", n)
	}
	step(t, s)
	if fs.reads != 0 || fs.checks != 0 {
		t.Fatalf("%d records read, %d resume checks after the upgrade, want none", fs.reads, fs.checks)
	}
	if len(e.bodies("T", 0)) != 4 || len(e.delivered()) != 4 {
		t.Fatal("delivered again after the upgrade")
	}
}

// TestUpgradeRefusesBadTimerCheckpoint: an old "timer" checkpoint of the
// wrong size stops the start, as it stopped the old service.
func TestUpgradeRefusesBadTimerCheckpoint(t *testing.T) {
	e := newEnv(t)
	if err := e.st.PutCheckpoint(legacyTimerCheckpoint, make([]byte, 15)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.newService(opts{}); !errors.Is(err, ErrBadCheckpoint) {
		t.Fatalf("New = %v, want ErrBadCheckpoint", err)
	}
}
