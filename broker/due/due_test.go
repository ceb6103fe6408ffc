package due

import (
	"errors"
	"fmt"
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
	opts := store.Options{Dir: "db", FS: e.fs, RetentionInterval: -1,
		FlushInterval: -1, MemTableSize: 4 << 20, CacheSize: 8 << 20}
	if e.clock != nil {
		opts.Now = e.clock.Now
	}
	st, err := store.Open(opts)
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

// opts says how rig builds a Service; the zero value is the broker's
// shape: delay levels "1s", timers, delivery into e's store.
type opts struct {
	levels  Levels
	st      Store                             // nil: e.st
	deliver func([]*message.MessageExt) error // nil: put into e.st
	batch   int
	idle    time.Duration
	extra   []Source
}

// rig is a Service with its delay and timer sources at hand.
type rig struct {
	*Service
	delay, timer *QueueSource
}

func (e *env) service(o opts) *rig {
	e.t.Helper()
	r, err := e.newService(o)
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

func (e *env) newService(o opts) (*rig, error) {
	if o.levels == nil {
		o.levels = Levels{time.Second}
	}
	if o.st == nil {
		o.st = e.st
	}
	if o.deliver == nil {
		o.deliver = func(ms []*message.MessageExt) error { _, err := e.st.Put(ms); return err }
	}
	r := &rig{delay: NewDelaySource(o.st, o.levels, nil), timer: NewTimerSource(o.st, nil)}
	cfg := Config{Store: o.st, Sources: append([]Source{r.delay, r.timer}, o.extra...), Deliver: o.deliver,
		BatchSize: o.batch, IdleInterval: o.idle}
	if e.clock != nil {
		cfg.Now = e.clock.Now
	}
	s, err := New(cfg)
	r.Service = s
	return r, err
}

// saved returns a source's lanes as the checkpoint record in the store
// holds them: lane id -> [next, cursor].
func (e *env) saved(name string) map[int32][2]int64 {
	e.t.Helper()
	v, ok, err := e.st.Checkpoint(CheckpointName)
	if err != nil || !ok {
		e.t.Fatalf("no checkpoint record: %v", err)
	}
	secs, err := decodeCheckpoint(v)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, s := range secs {
		if s.name != name {
			continue
		}
		lanes, err := decodeLanes(s.state)
		if err != nil {
			e.t.Fatal(err)
		}
		out := make(map[int32][2]int64)
		for _, l := range lanes {
			out[l.id] = [2]int64{l.next, l.cursor}
		}
		return out
	}
	e.t.Fatalf("no section %q in the checkpoint", name)
	return nil
}

// bodies returns the bodies in topic/queue, in order.
func (e *env) bodies(topic string, q int32) []string {
	e.t.Helper()
	var out []string
	for _, m := range e.messages(topic, q) {
		out = append(out, string(m.Body))
	}
	return out
}

// messages returns the messages in topic/queue, in order.
func (e *env) messages(topic string, q int32) []*message.MessageExt {
	e.t.Helper()
	var out []*message.MessageExt
	for off := e.st.MinOffset(topic, q); off < e.st.MaxOffset(topic, q); {
		res, err := e.st.Get(topic, q, off, 1000, 0, nil)
		if err != nil {
			e.t.Fatal(err)
		}
		ms, err := message.DecodeMessages(res.Messages)
		if err != nil {
			e.t.Fatal(err)
		}
		out = append(out, ms...)
		off = res.NextBeginOffset
	}
	return out
}

// failing returns a Deliver that fails while *fail is true and
// otherwise puts into e's store.
func (e *env) failing(fail *bool) func([]*message.MessageExt) error {
	return func(ms []*message.MessageExt) error {
		if *fail {
			return errors.New("injected")
		}
		_, err := e.st.Put(ms)
		return err
	}
}

// stepLosingProgress runs one Step of a Service whose progress writes
// fail, as a crash between the delivering write and the progress write
// leaves the store.
func (e *env) stepLosingProgress(o opts) {
	e.t.Helper()
	o.st = &faultStore{Store: e.st, failCheckpoint: true}
	if _, err := e.service(o).Step(); err == nil {
		e.t.Fatal("the lost progress write not reported")
	}
}

func step(t testing.TB, s *rig) time.Time {
	t.Helper()
	next, err := s.Step()
	if err != nil {
		t.Fatal(err)
	}
	return next
}

// faultStore counts records read (Get and ReadRecord) and resume checks,
// and can fail the progress write.
type faultStore struct {
	*store.Store
	reads, checks  int
	failCheckpoint bool
}

func (f *faultStore) ReadRecord(phys int64) ([]byte, error) {
	f.reads++
	return f.Store.ReadRecord(phys)
}

func (f *faultStore) Get(topic string, queueID int32, offset int64, maxMsgs, maxBytes int, fl store.Filter) (*store.GetResult, error) {
	res, err := f.Store.Get(topic, queueID, offset, maxMsgs, maxBytes, fl)
	if err == nil {
		f.reads += res.Count
	}
	return res, err
}

func (f *faultStore) QueryByUniqKey(topic, key string, n int) ([][]byte, error) {
	f.checks++
	return f.Store.QueryByUniqKey(topic, key, n)
}

func (f *faultStore) PutCheckpoint(name string, v []byte) error {
	if f.failCheckpoint {
		return errors.New("injected")
	}
	return f.Store.PutCheckpoint(name, v)
}

func TestNewValidates(t *testing.T) {
	e := newEnv(t)
	put := func([]*message.MessageExt) error { return nil }
	d := NewDelaySource(e.st, Levels{time.Second}, nil)
	for _, c := range []Config{
		{Store: e.st, Deliver: put},
		{Sources: []Source{d}, Deliver: put},
		{Store: e.st, Sources: []Source{d}},
		{Store: e.st, Sources: []Source{d, NewDelaySource(e.st, Levels{time.Second}, nil)}, Deliver: put},
	} {
		if _, err := New(c); !errors.Is(err, ErrBadConfig) {
			t.Errorf("New(%+v) = %v", c, err)
		}
	}
	if err := e.st.PutCheckpoint(CheckpointName, []byte{9}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.newService(opts{}); !errors.Is(err, ErrBadCheckpoint) {
		t.Fatalf("New over a bad checkpoint record: %v", err)
	}
}

// TestOneIndexOneRecord: delayed and timer messages due at once go out
// in one Step of one index, and all their progress is one record: no
// per-level delay offset, no "timer" checkpoint; a Step that moves no
// progress writes nothing.
func TestOneIndexOneRecord(t *testing.T) {
	e := newEnv(t)
	l := Levels{time.Second, 2 * time.Second}
	e.schedule(l, "T", 1, "delayed", 2, "u-d")
	e.timer("timed", 2*time.Second)
	writes := 0
	s := e.service(opts{levels: l, deliver: func(ms []*message.MessageExt) error {
		writes++
		_, err := e.st.Put(ms)
		return err
	}})
	if next := step(t, s); !next.Equal(t0.Add(2*time.Second)) || s.Waiting() != 2 {
		t.Fatalf("next %v, %d waiting", next, s.Waiting())
	}
	if _, ok, _ := e.st.Checkpoint(CheckpointName); ok {
		t.Fatal("a Step that delivered nothing wrote the checkpoint")
	}
	e.clock.Advance(2 * time.Second)
	if next := step(t, s); !next.IsZero() || writes != 1 {
		t.Fatalf("next %v after %d writes, want zero after one", next, writes)
	}
	if got := fmt.Sprint(e.bodies("T", 1)); got != "[delayed timed]" {
		t.Fatalf("T/1 = %s", got)
	}
	if d, tm := e.saved("delay"), e.saved("timer"); d[1][0] != 1 || d[0][0] != 0 || tm[0][0] != 1 || tm[0][1] != t0.Add(2*time.Second).UnixMilli() {
		t.Fatalf("saved delay %v timer %v", d, tm)
	}
	if offs, err := e.st.DelayOffsets(); err != nil || len(offs) != 0 {
		t.Fatalf("delay offsets written: %v %v", offs, err)
	}
	if _, ok, _ := e.st.Checkpoint(legacyTimerCheckpoint); ok {
		t.Fatal("the old timer checkpoint written")
	}
}
