package broker

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/runnelmq/runnel/internal/testwait"

	"github.com/runnelmq/runnel/internal/fakeclock"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/broker/due"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// testLevels are short delay levels: level n waits n seconds.
const testLevels = "1s 2s 3s 4s 5s"

// delayBroker starts a broker on a fake clock with testLevels.
func delayBroker(t *testing.T, dir string) (*Broker, *fakeclock.Clock) {
	t.Helper()
	clk := newFakeClock()
	b := startBrokerIn(t, dir, clk)
	return b, clk
}

func startBrokerIn(t *testing.T, dir string, clk *fakeclock.Clock, mods ...func(*config.Config)) *Broker {
	t.Helper()
	return startBrokerAt(t, dir, func(cfg *config.Config) {
		cfg.Now = clk.Now
		cfg.MessageDelayLevel = testLevels
		for _, m := range mods {
			m(cfg)
		}
	})
}

// stepSchedule runs one delivery pass by hand (serialised with the
// broker's own loop), so what is due at the fake clock's time is out.
func stepSchedule(t *testing.T, b *Broker) {
	t.Helper()
	if _, err := b.core.Due().Step(); err != nil {
		t.Fatal(err)
	}
}

// deliveredAt asserts that a delay of after, counted from now, delivers
// nothing to topic/queue a millisecond early, and returns what the queue
// holds once it has passed.
func deliveredAt(t *testing.T, b *Broker, clk *fakeclock.Clock, after time.Duration, topic string, q int32) []*protocol.MessageExt {
	t.Helper()
	clk.Advance(after - time.Millisecond)
	stepSchedule(t, b)
	if got := queueMsgs(t, b, topic, q); len(got) != 0 {
		t.Fatalf("%s/%d: delivered before its %v", topic, q, after)
	}
	clk.Advance(time.Millisecond)
	stepSchedule(t, b)
	return queueMsgs(t, b, topic, q)
}

// queueMsgs returns the messages stored in topic/queue.
func queueMsgs(t *testing.T, b *Broker, topic string, q int32) []*protocol.MessageExt {
	t.Helper()
	res, err := b.Store().Get(topic, q, 0, 100, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := message.DecodeMessages(res.Messages)
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

func sendBack(rc *rawClient, offset int64, group string, level, maxTimes int32, originID string) *protocol.Command {
	rc.t.Helper()
	h := protocol.ConsumerSendMsgBackRequestHeader{Offset: offset, Group: group, DelayLevel: level,
		OriginMsgID: originID, OriginTopic: "T", MaxReconsumeTimes: maxTimes, BrokerName: "broker-a"}
	return rc.call(protocol.ReqConsumerSendMsgBack, h.Encode(), nil)
}

// sendProps sends body to T queue 0 with props and returns the stored
// message's commit log offset and offsetMsgId.
func sendProps(t *testing.T, rc *rawClient, topic string, props map[string]string, body string) (int64, string) {
	t.Helper()
	resp := rc.call(protocol.ReqSendMessage, sendHeader(topic, 0, props).Encode(), []byte(body))
	expect(t, resp, protocol.RespSuccess, "")
	_, phys, err := message.ParseOffsetMsgID(resp.Ext("msgId"))
	if err != nil {
		t.Fatal(err)
	}
	return phys, resp.Ext("msgId")
}

// TestSendBackRetryThenDLQ follows one message through two retries and
// into the dead-letter queue, checking the retry copies' bookkeeping and
// their delay levels (3 + reconsumeTimes).
func TestSendBackRetryThenDLQ(t *testing.T) {
	b, clk := delayBroker(t, t.TempDir())
	rc := newRawClient(t, b.Addr())
	rc.createTopic("T", 1)
	phys, offID := sendProps(t, rc, "T", map[string]string{"TAGS": "tagA", "KEYS": "k1", "UNIQ_KEY": "U1"}, "payload")

	expect(t, sendBack(rc, phys, "g", 0, 2, "U1"), protocol.RespSuccess, "")
	if tc, ok := b.core.Topic("%RETRY%g"); !ok || tc.Perm != 6 || tc.WriteQueueNums != 1 {
		t.Fatalf("retry topic %+v %v", tc, ok)
	}
	if got := queueMsgs(t, b, due.ScheduleTopic, 2); len(got) != 1 { // level 3
		t.Fatalf("schedule queue of level 3 holds %d", len(got))
	}
	retries := deliveredAt(t, b, clk, 3*time.Second, "%RETRY%g", 0)
	if len(retries) != 1 {
		t.Fatalf("retry queue holds %d", len(retries))
	}
	r := retries[0]
	if r.ReconsumeTimes != 1 || string(r.Body) != "payload" || r.Property("RETRY_TOPIC") != "T" ||
		r.Property("ORIGIN_MESSAGE_ID") != offID || r.Property("RECONSUME_TIME") != "1" ||
		r.Property("MAX_RECONSUME_TIMES") != "2" || r.Tags() != "tagA" || r.UniqKey() != "U1" ||
		r.Property("DELAY") != "" || r.Property("REAL_TOPIC") != "%RETRY%g" {
		t.Fatalf("first retry %+v", r)
	}

	// Second failure: level 3 + 1.
	expect(t, sendBack(rc, r.CommitLogOffset, "g", 0, 2, "U1"), protocol.RespSuccess, "")
	if got := queueMsgs(t, b, due.ScheduleTopic, 3); len(got) != 1 {
		t.Fatalf("schedule queue of level 4 holds %d", len(got))
	}
	clk.Advance(4 * time.Second)
	stepSchedule(t, b)
	retries = queueMsgs(t, b, "%RETRY%g", 0)
	if len(retries) != 2 || retries[1].ReconsumeTimes != 2 || retries[1].Property("ORIGIN_MESSAGE_ID") != offID {
		t.Fatalf("second retry: %d messages", len(retries))
	}

	// Third failure: reconsumed twice, the maximum: dead letter, at once.
	expect(t, sendBack(rc, retries[1].CommitLogOffset, "g", 0, 2, "U1"), protocol.RespSuccess, "")
	dead := queueMsgs(t, b, "%DLQ%g", 0)
	if len(dead) != 1 {
		t.Fatalf("DLQ holds %d", len(dead))
	}
	d := dead[0]
	if d.ReconsumeTimes != 3 || d.Property("RETRY_TOPIC") != "T" || d.Property("ORIGIN_MESSAGE_ID") != offID ||
		d.Property("DELAY") != "" || string(d.Body) != "payload" {
		t.Fatalf("dead letter %+v", d)
	}
	if tc, ok := b.core.Topic("%DLQ%g"); !ok || tc.Perm != protocol.PermRead|protocol.PermWrite || tc.WriteQueueNums != 1 {
		t.Fatalf("DLQ topic %+v %v", tc, ok)
	}
}

func TestSendBackLevels(t *testing.T) {
	b, _ := delayBroker(t, t.TempDir())
	rc := newRawClient(t, b.Addr())
	rc.createTopic("T", 1)
	phys, _ := sendProps(t, rc, "T", map[string]string{"UNIQ_KEY": "U2"}, "x")

	expect(t, sendBack(rc, phys, "g", 1, -1, ""), protocol.RespSuccess, "") // client's level
	if got := queueMsgs(t, b, due.ScheduleTopic, 0); len(got) != 1 || got[0].Property("MAX_RECONSUME_TIMES") != "16" {
		t.Fatalf("level 1 / default max: %v", got)
	}
	expect(t, sendBack(rc, phys, "g", 99, -1, ""), protocol.RespSuccess, "") // clamped to 5
	if got := queueMsgs(t, b, due.ScheduleTopic, 4); len(got) != 1 || got[0].Property("DELAY") != "5" {
		t.Fatalf("level 99 not clamped to 5: %v", got)
	}
	expect(t, sendBack(rc, phys, "g", -1, -1, ""), protocol.RespSuccess, "") // orderly: straight to DLQ
	if got := queueMsgs(t, b, "%DLQ%g", 0); len(got) != 1 || got[0].ReconsumeTimes != 1 {
		t.Fatalf("delayLevel -1: DLQ %v", got)
	}
}

func TestSendBackLookup(t *testing.T) {
	b, _ := delayBroker(t, t.TempDir())
	rc := newRawClient(t, b.Addr())
	rc.createTopic("T", 1)
	phys, offID := sendProps(t, rc, "T", map[string]string{"UNIQ_KEY": "U3"}, "x")
	other, _ := sendProps(t, rc, "T", map[string]string{"UNIQ_KEY": "U4"}, "other")
	bad := phys + 1<<30

	expect(t, sendBack(rc, bad, "g", 1, 5, ""), protocol.RespSystemError, "look message by offset failed")
	expect(t, sendBack(rc, bad, "g", 1, 5, "NOPE"), protocol.RespSystemError, "look message by offset failed")
	expect(t, sendBack(rc, bad, "g", 1, 5, "U3"), protocol.RespSuccess, "")   // by UNIQ_KEY
	expect(t, sendBack(rc, bad, "g", 1, 5, offID), protocol.RespSuccess, "")  // by offsetMsgId
	expect(t, sendBack(rc, other, "g", 1, 5, "U3"), protocol.RespSuccess, "") // offset names another message
	for i, m := range queueMsgs(t, b, due.ScheduleTopic, 0) {
		if string(m.Body) != "x" {
			t.Fatalf("send-back %d copied %q, want the message named by originMsgId", i, m.Body)
		}
	}
	expect(t, rc.call(protocol.ReqConsumerSendMsgBack, map[string]string{"group": "g"}, nil), protocol.RespSystemError, "")
	expect(t, sendBack(rc, phys, "bad group!", 1, 5, ""), protocol.RespSystemError, "illegal characters")
}

// TestSendDelayedMessage: a producer's DELAY message waits in the schedule
// topic and reaches its queue when due, once, also across a restart.
func TestSendDelayedMessage(t *testing.T) {
	dir := t.TempDir()
	clk := newFakeClock()
	b := startBrokerIn(t, dir, clk)
	rc := newRawClient(t, b.Addr())
	rc.createTopic("T", 2)
	resp := rc.call(protocol.ReqSendMessage, func() map[string]string {
		h := sendHeader("T", 1, map[string]string{"DELAY": "2", "UNIQ_KEY": "D1", "TAGS": "t"})
		return h.Encode()
	}(), []byte("later"))
	expect(t, resp, protocol.RespSuccess, "")
	sched := queueMsgs(t, b, due.ScheduleTopic, 1)
	if len(sched) != 1 || sched[0].Property("REAL_TOPIC") != "T" || sched[0].Property("REAL_QID") != "1" {
		t.Fatalf("schedule queue of level 2: %v", sched)
	}
	got := deliveredAt(t, b, clk, 2*time.Second, "T", 1)
	if len(got) != 1 || string(got[0].Body) != "later" || got[0].Property("DELAY") != "" || got[0].Tags() != "t" {
		t.Fatalf("delivered %v", got)
	}

	// One more, pending across a restart.
	expect(t, rc.call(protocol.ReqSendMessage, sendHeader("T", 1, map[string]string{"DELAY": "3", "UNIQ_KEY": "D2"}).Encode(), []byte("after restart")), protocol.RespSuccess, "")
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b = startBrokerIn(t, dir, clk)
	stepSchedule(t, b)
	if got := queueMsgs(t, b, "T", 1); len(got) != 1 {
		t.Fatalf("after restart, before due: %d messages", len(got))
	}
	clk.Advance(3 * time.Second)
	stepSchedule(t, b)
	got = queueMsgs(t, b, "T", 1)
	if len(got) != 2 || string(got[1].Body) != "after restart" {
		t.Fatalf("after restart: %d messages", len(got))
	}
	if p := b.DelayProgress(); p[2] != 1 || p[3] != 1 {
		t.Fatalf("progress %v", p)
	}
}

// TestDelayLoopDelivers: the broker's own loop delivers without a hand
// step once the clock has passed the due time and it is woken.
func TestDelayLoopDelivers(t *testing.T) {
	b, clk := delayBroker(t, t.TempDir())
	rc := newRawClient(t, b.Addr())
	rc.createTopic("T", 1)
	expect(t, rc.call(protocol.ReqSendMessage, sendHeader("T", 0, map[string]string{"DELAY": "1"}).Encode(), []byte("x")), protocol.RespSuccess, "")
	clk.Advance(time.Second)
	b.core.Due().Notify()
	testwait.For(t, testwait.Default, "the loop to deliver", func() bool { return b.Store().MaxOffset("T", 0) == 1 })
}

// TestSendToRetryTopic covers the official client's fallback: a plain
// send to %RETRY%<group> gets reconsume bookkeeping, is delayed by its
// DELAY, and goes to the DLQ once reconsumeTimes exceeds the maximum.
func TestSendToRetryTopic(t *testing.T) {
	b, _ := delayBroker(t, t.TempDir())
	rc := newRawClient(t, b.Addr())
	send := func(times, maxTimes int32, withMax bool) {
		t.Helper()
		h := sendHeader("%RETRY%g", 0, map[string]string{"DELAY": "4", "RETRY_TOPIC": "T", "UNIQ_KEY": fmt.Sprint("R", times)})
		h.ReconsumeTimes, h.MaxReconsumeTimes = times, maxTimes
		ext := h.Encode()
		if !withMax {
			delete(ext, "maxReconsumeTimes")
		}
		expect(t, rc.call(protocol.ReqSendMessage, ext, []byte("r")), protocol.RespSuccess, "")
	}
	send(1, 3, true)
	got := queueMsgs(t, b, due.ScheduleTopic, 3)
	if len(got) != 1 || got[0].ReconsumeTimes != 1 || got[0].Property("RECONSUME_TIME") != "1" ||
		got[0].Property("MAX_RECONSUME_TIMES") != "3" || got[0].Property("REAL_TOPIC") != "%RETRY%g" {
		t.Fatalf("retry send: %v", got)
	}
	send(3, 3, true) // not above the maximum yet
	if n := len(queueMsgs(t, b, due.ScheduleTopic, 3)); n != 2 {
		t.Fatalf("schedule holds %d", n)
	}
	send(4, 3, true)
	dead := queueMsgs(t, b, "%DLQ%g", 0)
	if len(dead) != 1 || dead[0].Property("DELAY") != "" || dead[0].ReconsumeTimes != 4 {
		t.Fatalf("DLQ after exceeding: %v", dead)
	}
	send(16, 0, false) // default maximum 16
	send(17, 0, false)
	if n := len(queueMsgs(t, b, "%DLQ%g", 0)); n != 2 {
		t.Fatalf("DLQ holds %d, want 2 (17 > default 16)", n)
	}
}

func TestDelayLevelConfig(t *testing.T) {
	cfg := config.Default()
	if cfg.MessageDelayLevel != due.DefaultLevels {
		t.Fatalf("default %q", cfg.MessageDelayLevel)
	}
	ignored, err := cfg.ApplyProperties(strings.NewReader("messageDelayLevel=1s 2s 1d\n"))
	if err != nil || len(ignored) != 0 || cfg.MessageDelayLevel != "1s 2s 1d" {
		t.Fatalf("ApplyProperties: %v %v %q", err, ignored, cfg.MessageDelayLevel)
	}
	if _, err := cfg.ApplyProperties(strings.NewReader("messageDelayLevel=1s fast\n")); !errors.Is(err, config.ErrBadConfig) {
		t.Fatalf("bad messageDelayLevel: %v", err)
	}
	if cfg.LockMaxLiveTime != 60*time.Second {
		t.Fatalf("default LockMaxLiveTime %v", cfg.LockMaxLiveTime)
	}
	if _, err := cfg.ApplyProperties(strings.NewReader("rocketmq.broker.rebalance.lockMaxLiveTime=3000\n")); err != nil || cfg.LockMaxLiveTime != 3*time.Second {
		t.Fatalf("lockMaxLiveTime: %v %v", err, cfg.LockMaxLiveTime)
	}
	if _, err := cfg.ApplyProperties(strings.NewReader("rocketmq.broker.rebalance.lockMaxLiveTime=-1\n")); !errors.Is(err, config.ErrBadConfig) {
		t.Fatalf("negative lockMaxLiveTime: %v", err)
	}
	cfg = testConfig(t, t.TempDir())
	cfg.MessageDelayLevel = "0s"
	if _, err := New(cfg); !errors.Is(err, config.ErrBadConfig) || !strings.Contains(err.Error(), "MessageDelayLevel") {
		t.Fatalf("New with bad levels: %v", err)
	}
}

// TestLockExpiryOnTheWire: a lock not renewed for more than 60 s goes to
// the next client that asks; a renewed one does not.
func TestLockExpiryOnTheWire(t *testing.T) {
	clk := newFakeClock()
	b := startBrokerIn(t, t.TempDir(), clk)
	short := startBrokerIn(t, t.TempDir(), clk, func(c *config.Config) { c.LockMaxLiveTime = 5 * time.Second })
	rc := newRawClient(t, b.Addr())
	q := []protocol.MessageQueue{{Topic: "T", BrokerName: "broker-a", QueueID: 0}}
	lock := func(client string) int { return len(lockOver(t, rc, "g", client, q)) }
	if lock("c1") != 1 {
		t.Fatal("c1 not granted")
	}
	clk.Advance(40 * time.Second)
	if lock("c1") != 1 || lock("c2") != 0 {
		t.Fatal("renewal")
	}
	clk.Advance(60 * time.Second)
	if lock("c2") != 0 {
		t.Fatal("granted at exactly 60 s")
	}
	clk.Advance(time.Millisecond)
	if lock("c2") != 1 || lock("c1") != 0 {
		t.Fatal("expired lock not handed over")
	}

	// LockMaxLiveTime configured to 5 s.
	rc = newRawClient(t, short.Addr())
	if lock("c1") != 1 {
		t.Fatal("c1 not granted")
	}
	clk.Advance(5 * time.Second)
	if lock("c2") != 0 {
		t.Fatal("granted at exactly 5 s")
	}
	clk.Advance(time.Millisecond)
	if lock("c2") != 1 {
		t.Fatal("lock not expired after LockMaxLiveTime")
	}
}
