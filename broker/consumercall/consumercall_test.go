package consumercall

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// consumer answers from memory; a silent one answers only when its call's
// context ends, as the transport ends a call that gets no answer.
type consumer struct {
	closed bool
	silent bool
	table  []byte
}

func (f *consumer) Closed() bool { return f.closed }

func (f *consumer) answer(ctx context.Context, done func(Reply, error), r Reply) {
	if f.silent {
		go func() {
			<-ctx.Done()
			done(Reply{}, ctx.Err())
		}()
		return
	}
	done(r, nil)
}

func (f *consumer) ConsumerRunningInfo(ctx context.Context, group, clientID string, _ bool, done func(Reply, error)) error {
	f.answer(ctx, done, Reply{Body: []byte("info " + group + " " + clientID)})
	return nil
}

func (f *consumer) ConsumeMessageDirectly(ctx context.Context, r Direct, msg []byte, done func(Reply, error)) error {
	f.answer(ctx, done, Reply{Remark: r.MsgID, Body: msg})
	return nil
}

func (f *consumer) ConsumerStatus(ctx context.Context, _, _ string, done func([]byte, error)) error {
	if f.silent {
		go func() {
			<-ctx.Done()
			done(nil, ctx.Err())
		}()
		return nil
	}
	done(f.table, nil)
	return nil
}

func caller(ctx context.Context, members map[string][]Member) *Caller {
	return New(Config{Members: func(g string) []Member { return members[g] }, Timeout: 200 * time.Millisecond, Context: ctx})
}

// wait returns what answer got, failing if it was not called in time.
func wait[T any](t *testing.T, ch chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("no answer")
		panic("unreachable")
	}
}

type outcome struct {
	r   Reply
	err error
}

func TestCallsReachTheLiveMemberOnly(t *testing.T) {
	c := caller(context.Background(), map[string][]Member{"g": {
		{ClientID: "gone", Consumer: &consumer{closed: true}},
		{ClientID: "other-door"}, // registered, but not callable
		{ClientID: "c1", Consumer: &consumer{}},
	}})
	got := make(chan outcome, 1)
	c.RunningInfo("g", "c1", true, func(r Reply, err error) { got <- outcome{r, err} })
	if o := wait(t, got); o.err != nil || string(o.r.Body) != "info g c1" {
		t.Fatalf("running info: %+v", o)
	}
	c.ConsumeDirectly(Direct{Group: "g", ClientID: "c1", MsgID: "m"}, []byte("rec"), func(r Reply, err error) { got <- outcome{r, err} })
	if o := wait(t, got); o.err != nil || o.r.Remark != "m" || string(o.r.Body) != "rec" {
		t.Fatalf("consume directly: %+v", o)
	}
	for _, id := range []string{"gone", "other-door", "nobody"} {
		c.RunningInfo("g", id, false, func(r Reply, err error) { got <- outcome{r, err} })
		if o := wait(t, got); !errors.Is(o.err, ErrNotOnline) {
			t.Fatalf("%s: %+v", id, o)
		}
	}
}

func TestSilentConsumerTimesOutAndTheCallerStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	c := caller(ctx, map[string][]Member{"g": {{ClientID: "s", Consumer: &consumer{silent: true}}}})
	got := make(chan outcome, 1)
	c.RunningInfo("g", "s", false, func(r Reply, err error) { got <- outcome{r, err} })
	if o := wait(t, got); !errors.Is(o.err, context.DeadlineExceeded) {
		t.Fatalf("silent consumer: %+v", o)
	}
	// The caller's context ends every call at once, whatever the timeout.
	c = New(Config{Members: func(string) []Member { return []Member{{ClientID: "s", Consumer: &consumer{silent: true}}} },
		Timeout: time.Hour, Context: ctx})
	c.RunningInfo("g", "s", false, func(r Reply, err error) { got <- outcome{r, err} })
	cancel()
	if o := wait(t, got); !errors.Is(o.err, context.Canceled) {
		t.Fatalf("after the caller's end: %+v", o)
	}
}

func TestStatusGathersWhoAnswers(t *testing.T) {
	c := caller(context.Background(), map[string][]Member{"g": {
		{ClientID: "a", Consumer: &consumer{table: []byte("A")}},
		{ClientID: "b", Consumer: &consumer{table: []byte("B")}},
		{ClientID: "s", Consumer: &consumer{silent: true}},
		{ClientID: "x"},
	}})
	type status struct {
		tables map[string][]byte
		err    error
	}
	got := make(chan status, 1)
	c.Status("T", "g", "", func(tb map[string][]byte, err error) { got <- status{tb, err} })
	if s := wait(t, got); s.err != nil || !reflect.DeepEqual(s.tables, map[string][]byte{"a": []byte("A"), "b": []byte("B")}) {
		t.Fatalf("all: %+v", s)
	}
	c.Status("T", "g", "b", func(tb map[string][]byte, err error) { got <- status{tb, err} })
	if s := wait(t, got); s.err != nil || !reflect.DeepEqual(s.tables, map[string][]byte{"b": []byte("B")}) {
		t.Fatalf("only b: %+v", s)
	}
	c.Status("T", "g", "x", func(tb map[string][]byte, err error) { got <- status{tb, err} })
	if s := wait(t, got); s.err != nil || len(s.tables) != 0 || s.tables == nil {
		t.Fatalf("only an uncallable member: %+v", s)
	}
	c.Status("T", "empty", "", func(tb map[string][]byte, err error) { got <- status{tb, err} })
	if s := wait(t, got); !errors.Is(s.err, ErrNoConsumers) {
		t.Fatalf("empty group: %+v", s)
	}
}
