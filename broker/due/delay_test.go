package due

import (
	"errors"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/runnelmq/runnel/message"
)

// schedule stores a message for topic/queue with a delay level the way the
// broker's send path does, and returns its commit log offset.
func (e *env) schedule(levels Levels, topic string, q int32, body string, level int, uniq string) int64 {
	e.t.Helper()
	m := &message.MessageExt{
		Message: message.Message{Topic: topic, Body: []byte(body), Properties: map[string]string{
			message.PropertyDelayTimeLevel:         fmt.Sprint(level),
			message.PropertyUniqClientMessageIDKey: uniq,
			message.PropertyTags:                   "tagA",
		}},
		QueueID: q, BornTimestamp: 1, BornHost: netip.MustParseAddrPort("10.0.0.1:5000"),
		StoreHost: netip.MustParseAddrPort("10.0.0.2:10911"), ReconsumeTimes: 2,
	}
	if !levels.Transform(m) {
		e.t.Fatalf("message with DELAY=%d not diverted", level)
	}
	res, err := e.st.Put([]*message.MessageExt{m})
	if err != nil {
		e.t.Fatal(err)
	}
	return res[0].CommitLogOffset
}

// scheduleLevel1 stores a message for T/0 at level 1 for each body, with
// UNIQ_KEY u-<body>.
func (e *env) scheduleLevel1(l Levels, bodies ...string) {
	e.t.Helper()
	for _, b := range bodies {
		e.schedule(l, "T", 0, b, 1, "u-"+b)
	}
}

func mustLevels(t *testing.T, s string) Levels {
	t.Helper()
	l, err := ParseLevels(s)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestParseLevels(t *testing.T) {
	l := mustLevels(t, DefaultLevels)
	if l.Max() != 18 || l.Delay(1) != time.Second || l.Delay(2) != 5*time.Second || l.Delay(5) != time.Minute ||
		l.Delay(17) != time.Hour || l.Delay(18) != 2*time.Hour {
		t.Fatalf("default levels: %v", l)
	}
	if l.Delay(0) != 0 || l.Delay(19) != 0 {
		t.Fatal("out-of-range level has a delay")
	}
	l = mustLevels(t, " 500ms\t1d ")
	if len(l) != 2 || l[0] != 500*time.Millisecond || l[1] != 24*time.Hour {
		t.Fatalf("got %v", l)
	}
	for _, bad := range []string{"", "   ", "1s x", "0s", "-1s", "1", "1.5d", "1s 0d"} {
		if _, err := ParseLevels(bad); !errors.Is(err, ErrBadLevels) {
			t.Errorf("ParseLevels(%q) = %v, want ErrBadLevels", bad, err)
		}
	}
}

func TestTransformAndRestore(t *testing.T) {
	l := mustLevels(t, "1s 2s 3s")
	plain := &message.MessageExt{Message: message.Message{Topic: "T"}, QueueID: 2}
	if l.Transform(plain) || plain.Topic != "T" {
		t.Fatal("message without DELAY diverted")
	}
	for _, v := range []string{"0", "-1", "x"} {
		m := &message.MessageExt{Message: message.Message{Topic: "T", Properties: map[string]string{"DELAY": v}}}
		if l.Transform(m) {
			t.Fatalf("DELAY=%s diverted", v)
		}
	}
	m := &message.MessageExt{
		Message: message.Message{Topic: "T", Flag: 7, Body: []byte("b"), Properties: map[string]string{
			"DELAY": "9", "TIMER_DELIVER_MS": "1", "TIMER_DELAY_SEC": "1", "KEYS": "k"}},
		QueueID: 2, SysFlag: 0, BornTimestamp: 5, ReconsumeTimes: 3,
	}
	if !l.Transform(m) {
		t.Fatal("not diverted")
	}
	if m.Topic != ScheduleTopic || m.QueueID != 2 || m.Properties["DELAY"] != "3" ||
		m.Properties["REAL_TOPIC"] != "T" || m.Properties["REAL_QID"] != "2" {
		t.Fatalf("level 9 not clamped to 3 in queue 2: %+v", m)
	}
	out, err := Restore(m)
	if err != nil {
		t.Fatal(err)
	}
	if out.Topic != "T" || out.QueueID != 2 || out.Flag != 7 || string(out.Body) != "b" || out.BornTimestamp != 5 ||
		out.ReconsumeTimes != 3 || out.Properties["KEYS"] != "k" || out.Properties["REAL_TOPIC"] != "T" {
		t.Fatalf("restored %+v", out)
	}
	for _, gone := range []string{"DELAY", "TIMER_DELIVER_MS", "TIMER_DELAY_SEC"} {
		if _, ok := out.Properties[gone]; ok {
			t.Fatalf("%s kept", gone)
		}
	}
	if m.Properties["DELAY"] != "3" {
		t.Fatal("Restore modified the scheduled message")
	}
	delete(m.Properties, "REAL_QID")
	if _, err := Restore(m); !errors.Is(err, ErrNotScheduled) {
		t.Fatalf("no REAL_QID: %v", err)
	}
}

// TestDeliverWhenDue moves the clock by hand: nothing goes out before its
// due time, each level at its own delay, in queue order, restored to its
// real topic and queue, with progress persisted.
func TestDeliverWhenDue(t *testing.T) {
	e := newEnv(t)
	l := mustLevels(t, "1s 2s 3s")
	e.schedule(l, "T", 1, "a", 2, "u-a")
	e.schedule(l, "T", 1, "b", 1, "u-b")
	e.clock.Advance(100 * time.Millisecond)
	e.schedule(l, "T", 0, "c", 1, "u-c")
	s := e.service(opts{levels: l})

	if next := step(t, s); !next.Equal(t0.Add(time.Second)) {
		t.Fatalf("next due %v, want t0+1s", next)
	}
	if got := e.bodies("T", 1); len(got) != 0 {
		t.Fatalf("delivered early: %v", got)
	}
	e.clock.Advance(899 * time.Millisecond) // t0+999ms
	step(t, s)
	if got := e.bodies("T", 1); len(got) != 0 {
		t.Fatalf("delivered 1 ms early: %v", got)
	}
	e.clock.Advance(time.Millisecond) // t0+1s: b due, c due at t0+1.1s, a at t0+2s
	if next := step(t, s); !next.Equal(t0.Add(1100 * time.Millisecond)) {
		t.Fatalf("next due %v, want t0+1.1s", next)
	}
	if got := e.bodies("T", 1); len(got) != 1 || got[0] != "b" {
		t.Fatalf("queue 1 = %v, want [b]", got)
	}
	if got := e.bodies("T", 0); len(got) != 0 {
		t.Fatalf("c delivered early: %v", got)
	}
	e.clock.Advance(time.Second) // t0+2s
	if next := step(t, s); !next.IsZero() {
		t.Fatalf("next due %v with nothing pending", next)
	}
	if got := e.bodies("T", 1); len(got) != 2 || got[1] != "a" {
		t.Fatalf("queue 1 = %v, want [b a]", got)
	}
	if got := e.bodies("T", 0); len(got) != 1 || got[0] != "c" {
		t.Fatalf("queue 0 = %v, want [c]", got)
	}
	m := e.messages("T", 1)[1]
	if m.Topic != "T" || m.QueueID != 1 || m.ReconsumeTimes != 2 || m.Properties["DELAY"] != "" ||
		m.Properties["REAL_TOPIC"] != "T" || m.Tags() != "tagA" || m.UniqKey() != "u-a" {
		t.Fatalf("delivered message %+v", m)
	}
	if offs := e.saved("delay"); offs[0][0] != 2 || offs[1][0] != 1 {
		t.Fatalf("persisted progress %v, want level1=2 level2=1", offs)
	}
	if p := s.delay.Next(); p[0] != 2 || p[1] != 1 || p[2] != 0 {
		t.Fatalf("progress %v", p)
	}
}

// TestRestartResumes: a new Service on the reopened store delivers what
// was pending and nothing twice.
func TestRestartResumes(t *testing.T) {
	e := newEnv(t)
	l := mustLevels(t, "1s 2s")
	e.schedule(l, "T", 0, "early", 1, "u1")
	e.schedule(l, "T", 0, "late", 2, "u2")
	e.clock.Advance(time.Second)
	step(t, e.service(opts{levels: l}))
	e.reopen()
	s := e.service(opts{levels: l})
	step(t, s)
	if got := e.bodies("T", 0); len(got) != 1 {
		t.Fatalf("after restart before due: %v", got)
	}
	e.clock.Advance(time.Second)
	step(t, s)
	step(t, s)
	if got := e.bodies("T", 0); len(got) != 2 || got[0] != "early" || got[1] != "late" {
		t.Fatalf("after restart: %v, want [early late]", got)
	}
}

// afterLostProgress schedules a and b at the one level (1 s), lets them
// fall due, and steps a Service of batch size batch (0: the default) whose
// progress write is lost.
func afterLostProgress(t *testing.T, batch int) (*env, Levels) {
	e := newEnv(t)
	l := mustLevels(t, "1s")
	e.scheduleLevel1(l, "a", "b")
	e.clock.Advance(time.Second)
	e.stepLosingProgress(opts{levels: l, batch: batch})
	return e, l
}

// TestCrashBetweenDeliverAndProgress: the delivering append is durable but
// the progress write was lost. The next Service recognises the delivered
// copies and does not deliver them again, and still delivers a producer's
// duplicate (same UNIQ_KEY, its own entry) exactly once, and everything
// after.
func TestCrashBetweenDeliverAndProgress(t *testing.T) {
	e, l := afterLostProgress(t, 0)
	e.schedule(l, "T", 0, "b-dup", 1, "u-b") // a producer retry of b
	e.reopen()
	if _, ok, _ := e.st.Checkpoint(CheckpointName); ok {
		t.Fatal("progress saved, want none (the write was lost)")
	}
	s := e.service(opts{levels: l})
	step(t, s) // b-dup not due yet; a and b must be recognised
	if got := e.bodies("T", 0); len(got) != 2 {
		t.Fatalf("re-delivered after the lost progress write: %v", got)
	}
	e.clock.Advance(time.Second)
	e.schedule(l, "T", 0, "c", 1, "u-c")
	e.clock.Advance(time.Second)
	step(t, s)
	want := []string{"a", "b", "b-dup", "c"}
	if got := e.bodies("T", 0); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if offs := e.saved("delay"); offs[0][0] != 4 {
		t.Fatalf("progress %v, want 4", offs)
	}
}

// TestResumeCheckFiredAgain: a batch whose write failed during the resume
// check is fired again with the same answers: an entry found delivered is
// skipped again (its copy stays matched to it), the first one not found is
// delivered once.
func TestResumeCheckFiredAgain(t *testing.T) {
	e, l := afterLostProgress(t, 1)
	if got := e.bodies("T", 0); fmt.Sprint(got) != "[a]" {
		t.Fatalf("before the restart: %v", got)
	}
	fail := true
	s := e.service(opts{levels: l, deliver: e.failing(&fail)})
	if _, err := s.Step(); err == nil {
		t.Fatal("the failed write not reported")
	}
	fail = false
	step(t, s)
	if got := e.bodies("T", 0); fmt.Sprint(got) != "[a b]" {
		t.Fatalf("after the retried batch: %v", got)
	}
}

// TestDeliverErrorRetries: a failed delivery leaves progress alone; the
// next Step delivers.
func TestDeliverErrorRetries(t *testing.T) {
	e := newEnv(t)
	l := mustLevels(t, "1s")
	e.schedule(l, "T", 0, "a", 1, "u-a")
	fail := true
	s := e.service(opts{levels: l, deliver: e.failing(&fail)})
	e.clock.Advance(time.Second)
	next, err := s.Step()
	if err == nil || next.IsZero() {
		t.Fatalf("Step = %v, %v; want an error and a retry time", next, err)
	}
	if p := s.delay.Next(); p[0] != 0 {
		t.Fatalf("progress advanced past a failed delivery: %v", p)
	}
	fail = false
	step(t, s)
	if got := e.bodies("T", 0); len(got) != 1 {
		t.Fatalf("got %v", got)
	}
}

// TestBatches: more due messages than BatchSize go out in several writes,
// in order.
func TestBatches(t *testing.T) {
	e := newEnv(t)
	l := mustLevels(t, "1s")
	for i := range 10 {
		e.schedule(l, "T", 0, fmt.Sprint(i), 1, fmt.Sprint("u", i))
	}
	writes := 0
	s := e.service(opts{levels: l, batch: 3,
		deliver: func(ms []*message.MessageExt) error { writes++; _, err := e.st.Put(ms); return err }})
	e.clock.Advance(time.Second)
	step(t, s)
	if got := e.bodies("T", 0); fmt.Sprint(got) != "[0 1 2 3 4 5 6 7 8 9]" || writes != 4 {
		t.Fatalf("got %v in %d writes", got, writes)
	}
}

// TestLevelReadInChunks: a level with more due entries than one Step
// reads is delivered over several Steps, each returning now, in queue
// order; the index never holds more than one read of the level.
func TestLevelReadInChunks(t *testing.T) {
	e := newEnv(t)
	l := mustLevels(t, "1s")
	n := scanBudget + 10
	var ms []*message.MessageExt
	for i := range n {
		m := &message.MessageExt{Message: message.Message{Topic: "T", Body: []byte(fmt.Sprint(i)),
			Properties: map[string]string{message.PropertyDelayTimeLevel: "1", message.PropertyUniqClientMessageIDKey: fmt.Sprint("u", i)}}}
		l.Transform(m)
		ms = append(ms, m)
	}
	if _, err := e.st.Put(ms); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Second)
	s := e.service(opts{levels: l})
	if next := step(t, s); !next.Equal(e.clock.Now()) || e.st.MaxOffset("T", 0) != scanBudget {
		t.Fatalf("first Step: next %v, %d delivered", next, e.st.MaxOffset("T", 0))
	}
	if next := step(t, s); !next.IsZero() {
		t.Fatalf("second Step: next %v", next)
	}
	got := e.bodies("T", 0)
	if len(got) != n {
		t.Fatalf("delivered %d of %d", len(got), n)
	}
	for i, b := range got {
		if b != fmt.Sprint(i) {
			t.Fatalf("delivery %d is %s", i, b)
		}
	}
}

// TestLoop: the goroutine delivers a notified message without Step being
// called, and Close stops it (goleak checks).
func TestLoop(t *testing.T) {
	e := newEnv(t)
	l := mustLevels(t, "1s")
	s := e.service(opts{levels: l})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err == nil {
		t.Fatal("second Start succeeded")
	}
	e.schedule(l, "T", 0, "a", 1, "u-a")
	e.clock.Advance(time.Hour) // due long ago: no real waiting
	s.Notify()
	deadline := time.Now().Add(10 * time.Second)
	for len(e.bodies("T", 0)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("loop did not deliver")
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.Close()
	s.Close()
	if err := s.Start(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Start after Close: %v", err)
	}
}

// TestDelayLevelOfPlainSend checks the level read of every send: none for
// a message without DELAY, and no allocation for it (a failed Atoi of the
// missing value allocated its error, two per send with IsHalfSend).
func TestDelayLevelOfPlainSend(t *testing.T) {
	plain := &message.Message{Topic: "t", Properties: map[string]string{message.PropertyTags: "a"}}
	if n := testing.AllocsPerRun(100, func() { _ = DelayLevel(plain) }); n != 0 {
		t.Fatalf("DelayLevel of a message without DELAY: %v allocations", n)
	}
	for v, want := range map[string]int{"": 0, "x": 0, "-1": 0, "3": 3} {
		m := &message.Message{Properties: map[string]string{message.PropertyDelayTimeLevel: v}}
		if got := DelayLevel(m); got != want {
			t.Errorf("DelayLevel(DELAY=%q) = %d, want %d", v, got, want)
		}
	}
}
