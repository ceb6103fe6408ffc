package transaction

import (
	"errors"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"go.uber.org/goleak"

	"github.com/runnelmq/runnel/broker/offsets"
	"github.com/runnelmq/runnel/internal/fakeclock"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// producer records the checks it is asked.
type producer struct {
	mu     sync.Mutex
	checks []Check
	halves []*message.MessageExt
}

func (p *producer) CheckTransactionState(h Check, msg []byte) {
	m, _, err := message.DecodeStoredMessage(msg, false)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err == nil {
		p.checks, p.halves = append(p.checks, h), append(p.halves, m)
	}
}

// env is a Service wired to a real store on an in-memory filesystem, with
// plain funcs where the broker's core wires its tables: the package stands
// alone.
type env struct {
	st     *store.Store
	clock  *fakeclock.Clock
	topics map[string]bool
	prod   *producer
	svc    *Service
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{clock: fakeclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), topics: map[string]bool{}, prod: &producer{}}
	st, err := store.Open(store.Options{Dir: "db", FS: vfs.NewMem(), Now: e.clock.Now, RetentionInterval: -1,
		FlushInterval: -1, MemTableSize: 4 << 20, CacheSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	e.st = st
	host := netip.MustParseAddrPort("10.0.0.1:10911")
	e.svc = New(Config{
		Store:            st,
		Offsets:          offsets.New(),
		HasTopic:         func(name string) bool { return e.topics[name] },
		EnsureTopic:      func(name string) error { e.topics[name] = true; return nil },
		Producers:        func(group string) []Producer { return []Producer{e.prod} },
		Delay:            func(*message.MessageExt) error { return nil },
		Host:             func() netip.AddrPort { return host },
		Now:              e.clock.Now,
		CheckMax:         15,
		FileReservedTime: 72 * time.Hour,
		Timeout:          6 * time.Second,
	})
	return e
}

// sendHalf stores a half message of group "pg" for topic T queue 2 as the
// send path does, and returns it as stored.
func (e *env) sendHalf(t *testing.T, body string) *message.MessageExt {
	t.Helper()
	m := &message.MessageExt{
		Message:       message.Message{Topic: "T", Body: []byte(body), Properties: map[string]string{message.PropertyUniqClientMessageIDKey: "u-" + body}},
		QueueID:       2,
		SysFlag:       message.SysFlagTransactionPrep,
		BornTimestamp: e.clock.Now().UnixMilli(),
	}
	if !IsHalfSend(m.SysFlag, m.Properties) {
		t.Fatal("a PREPARED send is not a half send")
	}
	if err := e.svc.ToHalf("pg", m); err != nil {
		t.Fatal(err)
	}
	res, err := e.st.Put([]*message.MessageExt{m})
	if err != nil {
		t.Fatal(err)
	}
	m.CommitLogOffset, m.QueueOffset = res[0].CommitLogOffset, res[0].QueueOffset
	return m
}

func endHeader(m *message.MessageExt, how Resolution) EndRequest {
	return EndRequest{ProducerGroup: "pg", QueueOffset: m.QueueOffset,
		CommitLogOffset: m.CommitLogOffset, Resolution: how, MsgID: m.UniqKey()}
}

// TestCheckThenCommitOnce runs a transaction through the service alone:
// the half is hidden from its topic, the check asks the producer about a
// renewed copy once the immunity has passed, the producer's commit (named
// after the copy) puts the message in its real queue, and a second commit
// of the original half stores nothing more.
func TestCheckThenCommitOnce(t *testing.T) {
	e := newEnv(t)
	half := e.sendHalf(t, "b1")
	if half.Topic != HalfTopic || e.st.MaxOffset("T", 2) != 0 {
		t.Fatalf("half stored in %s, real queue at %d", half.Topic, e.st.MaxOffset("T", 2))
	}
	if res, err := e.svc.Check(nil); err != nil || res.Checked != 0 {
		t.Fatalf("check within the immunity: %+v, %v", res, err)
	}
	e.clock.Advance(7 * time.Second)
	res, err := e.svc.Check(nil)
	if err != nil || res.Checked != 1 || res.Sent != 1 || res.Progress != 1 {
		t.Fatalf("check after the immunity: %+v, %v", res, err)
	}
	if len(e.prod.checks) != 1 || e.prod.halves[0].Topic != "T" || e.prod.halves[0].QueueID != 2 {
		t.Fatalf("producer asked %d times: %+v", len(e.prod.checks), e.prod.halves)
	}
	h := e.prod.checks[0]
	copyHdr := EndRequest{ProducerGroup: "pg", QueueOffset: h.QueueOffset,
		CommitLogOffset: h.CommitLogOffset, Resolution: Commit, MsgID: h.MsgID, FromCheck: true}
	if answered, err := e.svc.End(copyHdr, "c1", ""); !answered || err != nil {
		t.Fatalf("commit of the checked copy: %v, %v", answered, err)
	}
	if answered, err := e.svc.End(endHeader(half, Commit), "c1", ""); !answered || err != nil {
		t.Fatalf("second commit: %v, %v", answered, err)
	}
	if got := e.st.MaxOffset("T", 2); got != 1 {
		t.Fatalf("real queue holds %d messages, want 1", got)
	}
	rec, err := e.st.Get("T", 2, 0, 1, 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := message.DecodeMessages(rec.Messages)
	if err != nil || len(ms) != 1 || string(ms[0].Body) != "b1" ||
		ms[0].SysFlag&message.SysFlagTransactionMask != message.SysFlagTransactionComm ||
		ms[0].Property(message.PropertyRealTopic) != "" || ms[0].PreparedTransactionOffset != h.CommitLogOffset {
		t.Fatalf("committed message: %+v, %v", ms, err)
	}
	if res, err := e.svc.Check(nil); err != nil || res.Ended != 1 || res.Checked != 0 {
		t.Fatalf("check after the commit: %+v, %v", res, err)
	}
}

// TestEndRefusals: a request naming no half, another group's half, or a
// rollback after a commit is a *Refused with Java's remark; UNKNOW is left
// to the check.
func TestEndRefusals(t *testing.T) {
	e := newEnv(t)
	half := e.sendHalf(t, "b2")
	var r *Refused
	wrong := endHeader(half, Commit)
	wrong.ProducerGroup = "other"
	if _, err := e.svc.End(wrong, "c", ""); !errors.As(err, &r) || r.Remark == "" {
		t.Fatalf("other group: %v", err)
	}
	nowhere := endHeader(half, Commit)
	nowhere.CommitLogOffset += 1 << 20
	if _, err := e.svc.End(nowhere, "c", ""); !errors.As(err, &r) {
		t.Fatalf("no half there: %v", err)
	}
	if answered, err := e.svc.End(endHeader(half, Unknown), "c", ""); answered || err != nil {
		t.Fatalf("UNKNOW: %v, %v", answered, err)
	}
	if _, err := e.svc.End(endHeader(half, Commit), "c", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.End(endHeader(half, Rollback), "c", ""); !errors.As(err, &r) {
		t.Fatalf("rollback after commit: %v", err)
	}
	if got := e.st.MaxOffset(OpHalfTopic, 0); got != 1 {
		t.Fatalf("%d ops stored, want 1", got)
	}
}

// TestIsHalfSendOfPlainSend checks the half-message test of every send:
// false without the flag or TRAN_MSG, and no allocation for it.
func TestIsHalfSendOfPlainSend(t *testing.T) {
	props := map[string]string{message.PropertyTags: "a"}
	if n := testing.AllocsPerRun(100, func() { _ = IsHalfSend(0, props) }); n != 0 {
		t.Fatalf("IsHalfSend of a plain send: %v allocations", n)
	}
	if IsHalfSend(0, props) || !IsHalfSend(message.SysFlagTransactionPrep, props) {
		t.Fatal("IsHalfSend by the system flag")
	}
	for v, want := range map[string]bool{"": false, "x": false, "false": false, "true": true} {
		if got := IsHalfSend(0, map[string]string{message.PropertyTransactionPrepared: v}); got != want {
			t.Errorf("IsHalfSend(TRAN_MSG=%q) = %v, want %v", v, got, want)
		}
	}
}
