package integration

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting/protocol"
	"github.com/runnelmq/runnel/store"
)

// timerLate bounds how long after its due time a timer message may be
// stored in its real queue: the goal is 100 ms; the bound is generous for
// a loaded 2-core machine.
const timerLate = 2 * time.Second

// storedByBody returns every message stored in topic's queues 0..queues-1, by
// body.
func storedByBody(t *testing.T, st *store.Store, topic string, queues int32) map[string][]*protocol.MessageExt {
	t.Helper()
	out := map[string][]*protocol.MessageExt{}
	for q := range queues {
		for off := st.MinOffset(topic, q); off < st.MaxOffset(topic, q); {
			res, err := st.Get(topic, q, off, 32, 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			ms, err := message.DecodeMessages(res.Messages)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range ms {
				out[string(m.Body)] = append(out[string(m.Body)], m)
			}
			off = res.NextBeginOffset
		}
	}
	return out
}

// checkOnTime fails unless body was stored exactly once, not before due
// and within timerLate after it.
func checkOnTime(t *testing.T, got map[string][]*protocol.MessageExt, body string, due time.Time) {
	t.Helper()
	ms := got[body]
	if len(ms) != 1 {
		t.Fatalf("%s stored %d times in its real queue", body, len(ms))
	}
	at := time.UnixMilli(ms[0].StoreTimestamp)
	if at.Before(due.Truncate(time.Millisecond)) {
		t.Fatalf("%s delivered %v before its time", body, due.Sub(at))
	}
	if late := at.Sub(due); late > timerLate {
		t.Fatalf("%s delivered %v after its time", body, late)
	}
	for _, k := range []string{"TIMER_OUT_MS", "TIMER_DELIVER_MS", "TIMER_DELAY_SEC", "TIMER_DELAY_MS"} {
		if v := ms[0].Properties[k]; v != "" {
			t.Fatalf("%s delivered with %s=%s", body, k, v)
		}
	}
	t.Logf("%s delivered %v after its time", body, at.Sub(due))
}

// TestTimerOfficialProducer: an official-client producer's
// WithDelayTimestamp message, and ones with TIMER_DELAY_SEC and
// TIMER_DELAY_MS, wait in the timer topic and are stored in their real
// queue at their time; one due beyond timerMaxDelaySec is refused with
// Java's code and remark, as is a timer property that is not a number.
func TestTimerOfficialProducer(t *testing.T) {
	c := rcCluster(t, cluster.Configure(func(_ int, cfg *config.Config) { cfg.TimerMaxDelay = time.Minute }))
	const topic = "TimerT"
	createTopic(t, c, 0, topic, 2)
	p := newProducer(t, c, withNoRetry())
	send := func(body string, set func(*primitive.Message)) {
		t.Helper()
		m := primitive.NewMessage(topic, []byte(body))
		set(m)
		res, err := p.SendSync(context.Background(), m)
		if err != nil || res.Status != primitive.SendOK {
			t.Fatalf("send %s: %v %v", body, res, err)
		}
	}
	start := time.Now()
	at := start.Add(1500 * time.Millisecond)
	send("at", func(m *primitive.Message) { m.WithDelayTimestamp(at) })
	send("sec", func(m *primitive.Message) { m.WithProperty("TIMER_DELAY_SEC", "2") })
	send("ms", func(m *primitive.Message) { m.WithProperty("TIMER_DELAY_MS", "1000") })
	sent := time.Now()
	st := c.Broker(0).Store()
	if n := st.MaxOffset(topic, 0) + st.MaxOffset(topic, 1); n != 0 && time.Now().Before(start.Add(time.Second)) {
		t.Fatalf("%d timer messages in their real queues at once", n)
	}

	refused := primitive.NewMessage(topic, []byte("too-late"))
	refused.WithDelayTimestamp(time.Now().Add(2 * time.Minute))
	_, err := p.SendSync(context.Background(), refused)
	checkBrokerErr(t, "a timer beyond timerMaxDelaySec", err, protocol.RespMessageIllegal,
		"timer message illegal, the delay time should not be bigger than the max delay 60000ms")
	bad := primitive.NewMessage(topic, []byte("bad"))
	bad.WithProperty("TIMER_DELAY_SEC", "soon")
	_, err = p.SendSync(context.Background(), bad)
	checkBrokerErr(t, "TIMER_DELAY_SEC=soon", err, protocol.RespMessageIllegal, "TIMER_DELAY_SEC")

	testwait.For(t, 20*time.Second, "the timer messages delivered", func() bool {
		return st.MaxOffset(topic, 0)+st.MaxOffset(topic, 1) == 3
	})
	got := storedByBody(t, st, topic, 2)
	checkOnTime(t, got, "at", at)
	// A relative timer is due from its arrival, between start and sent.
	for body, d := range map[string]time.Duration{"sec": 2 * time.Second, "ms": time.Second} {
		ms := got[body]
		if len(ms) != 1 {
			t.Fatalf("%s stored %d times", body, len(ms))
		}
		if at := time.UnixMilli(ms[0].StoreTimestamp); at.Before(start.Add(d).Truncate(time.Millisecond)) || at.After(sent.Add(d+timerLate)) {
			t.Fatalf("%s (due %v after its send) stored %v after the sends began", body, d, at.Sub(start))
		}
	}
	if len(got["too-late"]) != 0 || len(got["bad"]) != 0 {
		t.Fatal("a refused timer message was stored")
	}
}

// TestTimerOurClient: our producer's DeliverAt and DeliverAfter.
func TestTimerOurClient(t *testing.T) {
	c := rcCluster(t)
	const topic = "TimerRC"
	createTopic(t, c, 0, topic, 1)
	p := rcProducer(t, c)
	at := time.Now().Add(1200 * time.Millisecond)
	if _, err := p.Send(context.Background(), &client.Message{Topic: topic, Body: []byte("at"), DeliverAt: at}); err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	if _, err := p.Send(context.Background(), &client.Message{Topic: topic, Body: []byte("after"), DeliverAfter: 800 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	st := c.Broker(0).Store()
	testwait.For(t, 20*time.Second, "the timer messages delivered", func() bool { return st.MaxOffset(topic, 0) == 2 })
	got := storedByBody(t, st, topic, 1)
	checkOnTime(t, got, "at", at)
	if a := time.UnixMilli(got["after"][0].StoreTimestamp); a.Before(before.Add(800 * time.Millisecond).Truncate(time.Millisecond)) {
		t.Fatalf("DeliverAfter 800ms stored %v after the send began", a.Sub(before))
	}
	_, err := p.Send(context.Background(), &client.Message{Topic: topic, Body: []byte("x"), DeliverAfter: time.Second, DelayLevel: 2})
	if err == nil {
		t.Fatal("a message with a delay level and DeliverAfter sent")
	}
}

// TestTimerAcrossKill: timer messages waiting when the broker is killed
// (Abort) are stored in their real queue at their time after it restarts,
// each once, and those delivered before the kill are not delivered again.
func TestTimerAcrossKill(t *testing.T) {
	c := rcCluster(t)
	const topic = "TimerK"
	createTopic(t, c, 0, topic, 2)
	p := newProducer(t, c)
	const n = 10
	start := time.Now()
	soon, later := start.Add(500*time.Millisecond), start.Add(4*time.Second)
	for i := range n {
		for _, w := range []struct {
			name string
			at   time.Time
		}{{"soon", soon}, {"later", later}} {
			m := primitive.NewMessage(topic, []byte(w.name+"-"+strconv.Itoa(i)))
			m.WithDelayTimestamp(w.at)
			if _, err := p.SendSync(context.Background(), m); err != nil {
				t.Fatal(err)
			}
		}
	}
	st := c.Broker(0).Store()
	testwait.For(t, 20*time.Second, "the soon timers delivered", func() bool {
		return st.MaxOffset(topic, 0)+st.MaxOffset(topic, 1) == n
	})
	c.KillBroker(0)
	c.RestartBroker(0)
	st = c.Broker(0).Store()
	testwait.For(t, 20*time.Second, "every timer delivered", func() bool {
		return st.MaxOffset(topic, 0)+st.MaxOffset(topic, 1) >= 2*n
	})
	got := storedByBody(t, st, topic, 2)
	if len(got) != 2*n {
		t.Fatalf("%d distinct messages stored, want %d", len(got), 2*n)
	}
	for i := range n {
		checkOnTime(t, got, "later-"+strconv.Itoa(i), later)
		if ms := got["soon-"+strconv.Itoa(i)]; len(ms) != 1 || time.UnixMilli(ms[0].StoreTimestamp).Before(soon.Truncate(time.Millisecond)) {
			t.Fatalf("soon-%d stored %d times, or early", i, len(ms))
		}
	}
}
