package schedule

import (
	"errors"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"go.uber.org/goleak"

	"github.com/runnelmq/runnel/internal/fakeclock"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// env is a store on an in-memory filesystem that can be reopened, as a
// broker restart would.
type env struct {
	t     testing.TB
	fs    vfs.FS
	clock *fakeclock.Clock
	st    *store.Store
}

func newEnv(t testing.TB) *env {
	e := &env{t: t, fs: vfs.NewMem(), clock: fakeclock.New(t0)}
	e.open()
	t.Cleanup(func() { _ = e.st.Close() })
	return e
}

func (e *env) open() {
	e.t.Helper()
	st, err := store.Open(store.Options{Dir: "db", FS: e.fs, Now: e.clock.Now, RetentionInterval: -1,
		FlushInterval: -1, MemTableSize: 4 << 20, CacheSize: 8 << 20})
	if err != nil {
		e.t.Fatal(err)
	}
	e.st = st
}

func (e *env) reopen() {
	e.t.Helper()
	if err := e.st.Close(); err != nil {
		e.t.Fatal(err)
	}
	e.open()
}

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

// service returns a Service delivering into e's store; it counts writes.
func (e *env) service(levels Levels, deliver func([]*message.MessageExt) error) *Service {
	e.t.Helper()
	if deliver == nil {
		deliver = func(ms []*message.MessageExt) error { _, err := e.st.Put(ms); return err }
	}
	s, err := New(Config{Levels: levels, Store: e.st, Deliver: deliver, Now: e.clock.Now})
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// queue returns the bodies in topic/queue, in order.
func (e *env) queue(topic string, q int32) []string {
	e.t.Helper()
	res, err := e.st.Get(topic, q, 0, 1000, 0, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	ms, err := message.DecodeMessages(res.Messages)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, m := range ms {
		out = append(out, string(m.Body))
	}
	return out
}

func mustLevels(t *testing.T, s string) Levels {
	t.Helper()
	l, err := ParseLevels(s)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func step(t *testing.T, s *Service) time.Time {
	t.Helper()
	next, err := s.Step()
	if err != nil {
		t.Fatal(err)
	}
	return next
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
	if m.Topic != Topic || m.QueueID != 2 || m.Properties["DELAY"] != "3" ||
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

func TestNewValidates(t *testing.T) {
	e := newEnv(t)
	l := mustLevels(t, "1s")
	put := func([]*message.MessageExt) error { return nil }
	for _, c := range []Config{{Store: e.st, Deliver: put}, {Levels: l, Deliver: put}, {Levels: l, Store: e.st}} {
		if _, err := New(c); !errors.Is(err, ErrBadConfig) {
			t.Errorf("New(%+v) = %v", c, err)
		}
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
	s := e.service(l, nil)

	if next := step(t, s); !next.Equal(t0.Add(time.Second)) {
		t.Fatalf("next due %v, want t0+1s", next)
	}
	if got := e.queue("T", 1); len(got) != 0 {
		t.Fatalf("delivered early: %v", got)
	}
	e.clock.Advance(899 * time.Millisecond) // t0+999ms
	step(t, s)
	if got := e.queue("T", 1); len(got) != 0 {
		t.Fatalf("delivered 1 ms early: %v", got)
	}
	e.clock.Advance(time.Millisecond) // t0+1s: b due, c due at t0+1.1s, a at t0+2s
	if next := step(t, s); !next.Equal(t0.Add(1100 * time.Millisecond)) {
		t.Fatalf("next due %v, want t0+1.1s", next)
	}
	if got := e.queue("T", 1); len(got) != 1 || got[0] != "b" {
		t.Fatalf("queue 1 = %v, want [b]", got)
	}
	if got := e.queue("T", 0); len(got) != 0 {
		t.Fatalf("c delivered early: %v", got)
	}
	e.clock.Advance(time.Second) // t0+2s
	if next := step(t, s); !next.IsZero() {
		t.Fatalf("next due %v with nothing pending", next)
	}
	if got := e.queue("T", 1); len(got) != 2 || got[1] != "a" {
		t.Fatalf("queue 1 = %v, want [b a]", got)
	}
	if got := e.queue("T", 0); len(got) != 1 || got[0] != "c" {
		t.Fatalf("queue 0 = %v, want [c]", got)
	}
	res, _ := e.st.Get("T", 1, 1, 1, 0, nil)
	ms, _ := message.DecodeMessages(res.Messages)
	m := ms[0]
	if m.Topic != "T" || m.QueueID != 1 || m.ReconsumeTimes != 2 || m.Properties["DELAY"] != "" ||
		m.Properties["REAL_TOPIC"] != "T" || m.Tags() != "tagA" || m.UniqKey() != "u-a" {
		t.Fatalf("delivered message %+v", m)
	}
	offs, err := e.st.DelayOffsets()
	if err != nil {
		t.Fatal(err)
	}
	if offs[1] != 2 || offs[2] != 1 {
		t.Fatalf("persisted progress %v, want level1=2 level2=1", offs)
	}
	if p := s.Progress(); p[1] != 2 || p[2] != 1 || p[3] != 0 {
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
	step(t, e.service(l, nil))
	e.reopen()
	s := e.service(l, nil)
	step(t, s)
	if got := e.queue("T", 0); len(got) != 1 {
		t.Fatalf("after restart before due: %v", got)
	}
	e.clock.Advance(time.Second)
	step(t, s)
	step(t, s)
	if got := e.queue("T", 0); len(got) != 2 || got[0] != "early" || got[1] != "late" {
		t.Fatalf("after restart: %v, want [early late]", got)
	}
}

// TestCrashBetweenDeliverAndProgress: the delivering append is durable but
// the progress write was lost (put back to the old value). The next Service
// recognises the delivered copies and does not deliver them again, and
// still delivers a producer's duplicate (same UNIQ_KEY, its own entry)
// exactly once, and everything after.
func TestCrashBetweenDeliverAndProgress(t *testing.T) {
	e := newEnv(t)
	l := mustLevels(t, "1s")
	e.schedule(l, "T", 0, "a", 1, "u-a")
	e.schedule(l, "T", 0, "b", 1, "u-b")
	e.clock.Advance(time.Second)
	step(t, e.service(l, nil))
	e.schedule(l, "T", 0, "b-dup", 1, "u-b") // a producer retry of b
	if err := e.st.SetDelayOffset(1, 0); err != nil {
		t.Fatal(err)
	}
	e.reopen()
	s := e.service(l, nil)
	step(t, s) // b-dup not due yet; a and b must be recognised
	if got := e.queue("T", 0); len(got) != 2 {
		t.Fatalf("re-delivered after the lost progress write: %v", got)
	}
	e.clock.Advance(time.Second)
	e.schedule(l, "T", 0, "c", 1, "u-c")
	e.clock.Advance(time.Second)
	step(t, s)
	want := []string{"a", "b", "b-dup", "c"}
	if got := e.queue("T", 0); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if offs, _ := e.st.DelayOffsets(); offs[1] != 4 {
		t.Fatalf("progress %v, want 4", offs)
	}
}

// TestDeliverErrorRetries: a failed delivery leaves progress alone; the
// next Step delivers.
func TestDeliverErrorRetries(t *testing.T) {
	e := newEnv(t)
	l := mustLevels(t, "1s")
	e.schedule(l, "T", 0, "a", 1, "u-a")
	fail := true
	s := e.service(l, func(ms []*message.MessageExt) error {
		if fail {
			return errors.New("disk full")
		}
		_, err := e.st.Put(ms)
		return err
	})
	e.clock.Advance(time.Second)
	next, err := s.Step()
	if err == nil || next.IsZero() {
		t.Fatalf("Step = %v, %v; want an error and a retry time", next, err)
	}
	if p := s.Progress(); p[1] != 0 {
		t.Fatalf("progress advanced past a failed delivery: %v", p)
	}
	fail = false
	step(t, s)
	if got := e.queue("T", 0); len(got) != 1 {
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
	s, err := New(Config{Levels: l, Store: e.st, Now: e.clock.Now, BatchSize: 3,
		Deliver: func(ms []*message.MessageExt) error { writes++; _, err := e.st.Put(ms); return err }})
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Second)
	step(t, s)
	if got := e.queue("T", 0); fmt.Sprint(got) != "[0 1 2 3 4 5 6 7 8 9]" || writes != 4 {
		t.Fatalf("got %v in %d writes", got, writes)
	}
}

// TestLoop: the goroutine delivers a notified message without Step being
// called, and Close stops it (goleak checks).
func TestLoop(t *testing.T) {
	e := newEnv(t)
	l := mustLevels(t, "1s")
	s := e.service(l, nil)
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
	for len(e.queue("T", 0)) == 0 {
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
