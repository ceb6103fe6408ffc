package due

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/runnelmq/runnel/message"
)

// timer stores a message for topic T queue 1 due after d, the way the
// send path does.
func (e *env) timer(body string, d time.Duration) {
	e.t.Helper()
	m := &message.MessageExt{
		Message: message.Message{Topic: "T", Body: []byte(body), Properties: map[string]string{
			PropertyTimerDelayMS:                   strconv.FormatInt(d.Milliseconds(), 10),
			message.PropertyUniqClientMessageIDKey: "u-" + body,
		}},
		QueueID: 1, BornHost: netip.MustParseAddrPort("10.0.0.1:5000"), StoreHost: netip.MustParseAddrPort("10.0.0.2:10911"),
	}
	ok, err := TransformTimer(m, e.clock.Now(), DefaultTimerMaxDelay)
	if err != nil || !ok {
		e.t.Fatalf("TransformTimer = %v, %v", ok, err)
	}
	if _, err := e.st.Put([]*message.MessageExt{m}); err != nil {
		e.t.Fatal(err)
	}
}

// timerAt stores a timer due at an absolute time, on the real clock.
func (e *env) timerAt(body string, at time.Time) {
	e.t.Helper()
	m := &message.MessageExt{Message: message.Message{Topic: "T", Body: []byte(body), Properties: map[string]string{
		message.PropertyTimerDeliverMS: strconv.FormatInt(at.UnixMilli(), 10)}}, QueueID: 1}
	if ok, err := TransformTimer(m, time.Now(), DefaultTimerMaxDelay); !ok || err != nil {
		e.t.Fatalf("TransformTimer = %v, %v", ok, err)
	}
	if _, err := e.st.Put([]*message.MessageExt{m}); err != nil {
		e.t.Fatal(err)
	}
}

// delivered returns the bodies in T queue 1, in order, checking that
// none kept its timer properties.
func (e *env) delivered() []string {
	e.t.Helper()
	var out []string
	for _, m := range e.messages("T", 1) {
		out = append(out, string(m.Body))
		if m.Properties[PropertyTimerOutMS] != "" || m.Properties[PropertyTimerDelayMS] != "" {
			e.t.Fatalf("delivered %s with its timer properties: %v", m.Body, m.Properties)
		}
	}
	return out
}

func TestTimerDue(t *testing.T) {
	now := time.UnixMilli(1_000_000)
	for _, c := range []struct {
		props map[string]string
		due   int64
		ok    bool
		bad   bool
	}{
		{props: nil},
		{props: map[string]string{"TIMER_DELIVER_MS": "2000000"}, due: 2_000_000, ok: true},
		{props: map[string]string{"TIMER_DELAY_SEC": "90"}, due: 1_090_000, ok: true},
		{props: map[string]string{"TIMER_DELAY_MS": "250"}, due: 1_000_250, ok: true},
		// Java's order: DELAY_SEC before DELAY_MS before DELIVER_MS.
		{props: map[string]string{"TIMER_DELAY_SEC": "1", "TIMER_DELAY_MS": "5", "TIMER_DELIVER_MS": "7"}, due: 1_001_000, ok: true},
		{props: map[string]string{"TIMER_DELIVER_MS": "soon"}, ok: true, bad: true},
		{props: map[string]string{"TIMER_DELAY_SEC": "-1"}, ok: true, bad: true},
		{props: map[string]string{"TIMER_DELAY_SEC": "9223372036854775807"}, ok: true, bad: true},
	} {
		due, ok, err := TimerDue(&message.Message{Properties: c.props}, now)
		if ok != c.ok || (err != nil) != c.bad || (!c.bad && due != c.due) {
			t.Errorf("TimerDue(%v) = %d, %v, %v", c.props, due, ok, err)
		}
		if c.bad && !errors.Is(err, ErrBadTime) {
			t.Errorf("TimerDue(%v) error %v, want ErrBadTime", c.props, err)
		}
	}
}

func TestTransformTimer(t *testing.T) {
	now := time.UnixMilli(1_000_000)
	m := &message.MessageExt{Message: message.Message{Topic: "T", Properties: map[string]string{"TIMER_DELAY_SEC": "10"}}, QueueID: 3}
	if ok, err := TransformTimer(m, now, time.Minute); !ok || err != nil {
		t.Fatalf("TransformTimer = %v, %v", ok, err)
	}
	if m.Topic != TimerTopic || m.QueueID != 0 || m.Properties["REAL_TOPIC"] != "T" || m.Properties["REAL_QID"] != "3" ||
		m.Properties[PropertyTimerOutMS] != "1010000" {
		t.Fatalf("transformed %+v", m)
	}
	out, err := RestoreTimer(m)
	if err != nil {
		t.Fatal(err)
	}
	if out.Topic != "T" || out.QueueID != 3 || out.Properties[PropertyTimerOutMS] != "" || out.Properties["TIMER_DELAY_SEC"] != "" {
		t.Fatalf("restored %+v", out)
	}
	if m.Properties[PropertyTimerOutMS] == "" {
		t.Fatal("RestoreTimer modified the stored message")
	}
	far := &message.MessageExt{Message: message.Message{Topic: "T", Properties: map[string]string{"TIMER_DELAY_MS": "60001"}}}
	if _, err := TransformTimer(far, now, time.Minute); !errors.Is(err, ErrTooLate) || far.Topic != "T" {
		t.Fatalf("a timer beyond the max delay: %v, topic %s", err, far.Topic)
	}
	edge := &message.MessageExt{Message: message.Message{Topic: "T", Properties: map[string]string{"TIMER_DELAY_MS": "60000"}}}
	if ok, err := TransformTimer(edge, now, time.Minute); !ok || err != nil {
		t.Fatalf("a timer at the max delay: %v, %v", ok, err)
	}
	past := &message.MessageExt{Message: message.Message{Topic: "T", Properties: map[string]string{"TIMER_DELIVER_MS": "999999"}}}
	if ok, err := TransformTimer(past, now, time.Minute); ok || err != nil || past.Topic != "T" {
		t.Fatalf("a timer already due diverted: %v, %v", ok, err)
	}
}

// TestDeliversInDueOrder: timers stored in any order go out in due order,
// none before its time, and Step says when the next falls due.
func TestDeliversInDueOrder(t *testing.T) {
	e := newEnv(t)
	for _, d := range []int{5, 1, 3, 2, 4, 3} {
		e.timer(fmt.Sprintf("at%d-%d", d, e.st.MaxOffset(TimerTopic, 0)), time.Duration(d)*time.Second)
	}
	s := e.service(opts{batch: 4})
	if next := step(t, s); !next.Equal(t0.Add(time.Second)) || len(e.delivered()) != 0 {
		t.Fatalf("next %v, delivered %v", next, e.delivered())
	}
	e.clock.Advance(3*time.Second - time.Millisecond)
	step(t, s)
	if got := e.delivered(); !slices.Equal(got, []string{"at1-1", "at2-3"}) {
		t.Fatalf("at 3s-1ms: %v", got)
	}
	e.clock.Advance(time.Millisecond)
	if next := step(t, s); !next.Equal(t0.Add(4 * time.Second)) {
		t.Fatalf("next %v", next)
	}
	if got := e.delivered(); !slices.Equal(got, []string{"at1-1", "at2-3", "at3-2", "at3-5"}) {
		t.Fatalf("at 3s: %v", got)
	}
	e.clock.Advance(time.Hour)
	if next := step(t, s); !next.IsZero() || s.Waiting() != 0 {
		t.Fatalf("next %v, %d waiting", next, s.Waiting())
	}
	if got := e.delivered(); len(got) != 6 {
		t.Fatalf("delivered %v", got)
	}
}

// TestRestartRereadsOnlyFromWatermark: after a restart the timers
// delivered before are not delivered again, the waiting ones are, and the
// timer queue is re-read only from the oldest waiting timer on.
func TestRestartRereadsOnlyFromWatermark(t *testing.T) {
	e := newEnv(t)
	for i := range 100 {
		e.timer(fmt.Sprintf("early-%03d", i), time.Second)
	}
	for i := range 5 {
		e.timer(fmt.Sprintf("late-%d", i), time.Hour)
	}
	s := e.service(opts{batch: 4})
	e.clock.Advance(time.Minute)
	step(t, s)
	if n := len(e.delivered()); n != 100 {
		t.Fatalf("delivered %d before the restart", n)
	}
	e.reopen()
	fs := &faultStore{Store: e.st}
	s = e.service(opts{batch: 4, st: fs})
	e.clock.Advance(time.Minute)
	step(t, s)
	// The 5 waiting timers are read to index them, then not again.
	if fs.reads != 5 || s.Waiting() != 5 || s.timer.Waiting() != 5 {
		t.Fatalf("restart read %d records, %d waiting; want 5 and 5", fs.reads, s.Waiting())
	}
	e.clock.Advance(time.Hour)
	step(t, s)
	got := e.delivered()
	if len(got) != 105 || got[100] != "late-0" || got[104] != "late-4" {
		t.Fatalf("delivered %d: %v", len(got), got[95:])
	}
}

// TestCrashBeforeProgress: a batch delivered whose progress write failed
// (a crash between the two) is not delivered again after a restart.
func TestCrashBeforeProgress(t *testing.T) {
	e := newEnv(t)
	for i := range 10 {
		e.timer(fmt.Sprintf("m-%d", i), time.Duration(i+1)*time.Second)
	}
	s := e.service(opts{batch: 4})
	e.clock.Advance(4 * time.Second)
	step(t, s) // m-0..m-3, progress recorded
	e.clock.Advance(2 * time.Second)
	e.stepLosingProgress(opts{batch: 4}) // a new service over the same store: a restart
	if n := len(e.delivered()); n != 6 {
		t.Fatalf("delivered %d, want 6", n)
	}
	e.reopen()
	s = e.service(opts{batch: 4})
	e.clock.Advance(time.Minute)
	step(t, s)
	got := e.delivered()
	want := []string{"m-0", "m-1", "m-2", "m-3", "m-4", "m-5", "m-6", "m-7", "m-8", "m-9"}
	if !slices.Equal(got, want) {
		t.Fatalf("delivered %v", got)
	}
}

// TestDeliverFailureRetried: a failed delivery leaves the timers waiting
// and the next Step delivers them.
func TestDeliverFailureRetried(t *testing.T) {
	e := newEnv(t)
	e.timer("a", time.Second)
	fail := true
	s := e.service(opts{deliver: e.failing(&fail)})
	e.clock.Advance(time.Second)
	if _, err := s.Step(); err == nil || s.Waiting() != 1 {
		t.Fatalf("Step = %v, %d waiting", err, s.Waiting())
	}
	fail = false
	step(t, s)
	if got := e.delivered(); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("delivered %v", got)
	}
}

// TestLoopWakesForEarlierTimer: the running loop, asleep until a far
// timer, delivers a nearer one notified later at its time.
func TestLoopWakesForEarlierTimer(t *testing.T) {
	e := newEnv(t)
	e.clock = nil // the real clock from here on
	e.reopen()
	e.timerAt("far", time.Now().Add(time.Hour))
	s := e.service(opts{idle: time.Hour})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	due := time.Now().Add(300 * time.Millisecond)
	e.timerAt("near", due)
	s.Notify()
	deadline := time.Now().Add(20 * time.Second)
	for len(e.delivered()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the near timer was not delivered")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if now := time.Now(); now.Before(due) {
		t.Fatalf("delivered %v before its time", due.Sub(now))
	}
	if got := e.delivered(); !slices.Equal(got, []string{"near"}) {
		t.Fatalf("delivered %v", got)
	}
}

func FuzzDueTime(f *testing.F) {
	f.Add("TIMER_DELIVER_MS", "1700000000000")
	f.Add("TIMER_DELAY_SEC", "90")
	f.Add("TIMER_DELAY_MS", "-5")
	f.Fuzz(func(t *testing.T, k, v string) {
		now := time.UnixMilli(1_700_000_000_000)
		m := &message.MessageExt{Message: message.Message{Topic: "T", Properties: map[string]string{k: v}}}
		ok, err := TransformTimer(m, now, DefaultTimerMaxDelay)
		if err != nil && !errors.Is(err, ErrBadTime) && !errors.Is(err, ErrTooLate) {
			t.Fatalf("unexpected error %v", err)
		}
		if ok {
			due, err := timerDueOf(m)
			if err != nil || due <= now.UnixMilli() || due-now.UnixMilli() > DefaultTimerMaxDelay.Milliseconds() {
				t.Fatalf("diverted with due %d (%v)", due, err)
			}
		}
	})
}

// TestCrashWhileReindexing: a timer not yet indexed, due long before one
// already delivered, is not taken as delivered after a crash in the
// middle of a re-index (the cursor is saved only while the index is
// complete), and a long re-index goes chunk by chunk.
func TestCrashWhileReindexing(t *testing.T) {
	e := newEnv(t)
	e.timer("A", 20*time.Second) // offset 0, in the first chunk
	var fill []*message.MessageExt
	for i := range scanBudget - 1 {
		m := &message.MessageExt{Message: message.Message{Topic: "T", Body: []byte(fmt.Sprint("f", i)),
			Properties: map[string]string{PropertyTimerDelayMS: "3600000"}}, QueueID: 1}
		if _, err := TransformTimer(m, e.clock.Now(), DefaultTimerMaxDelay); err != nil {
			t.Fatal(err)
		}
		fill = append(fill, m)
	}
	if _, err := e.st.Put(fill); err != nil {
		t.Fatal(err)
	}
	e.timer("B", time.Second) // in the second chunk
	e.clock.Advance(30 * time.Second)
	s := e.service(opts{batch: 4})
	if next := step(t, s); !next.Equal(e.clock.Now()) {
		t.Fatalf("Step with more to index returned %v, want now", next)
	}
	if got := e.delivered(); !slices.Equal(got, []string{"A"}) {
		t.Fatalf("after the first chunk: %v", got)
	}
	s = e.service(opts{batch: 4}) // a crash: the index is lost
	for range 3 {
		step(t, s)
	}
	if got := e.delivered(); !slices.Equal(got, []string{"A", "B"}) {
		t.Fatalf("after the restart: %v", got)
	}
	if s.Waiting() != scanBudget-1 {
		t.Fatalf("%d waiting, want the %d fillers", s.Waiting(), scanBudget-1)
	}
}
