package broker

import (
	"context"
	"testing"
	"time"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/internal/testwait"

	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// txProducer is a raw client registered as a producer of a group; it
// records the CHECK_TRANSACTION_STATE requests it gets.
type txProducer struct {
	*rawClient
	checks chan *protocol.Command
}

func newTxProducer(t testing.TB, addr, group string) *txProducer {
	t.Helper()
	p := &txProducer{rawClient: newRawClient(t, addr), checks: make(chan *protocol.Command, 16)}
	p.cl.Handle(protocol.ReqCheckTransactionState, func(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
		select {
		case p.checks <- req:
		default: // a test that lets checks pile up does not read them all
		}
		return nil
	})
	body, err := protocol.HeartbeatData{ClientID: "tx-producer@" + group, ProducerDataSet: []protocol.ProducerData{{GroupName: group}}}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	expect(t, p.call(protocol.ReqHeartBeat, nil, body), protocol.RespSuccess, "")
	return p
}

// nextCheck returns the next check request, failing the test if none comes.
func (p *txProducer) nextCheck() *protocol.Command {
	p.t.Helper()
	select {
	case req := <-p.checks:
		return req
	case <-time.After(10 * time.Second):
		p.t.Fatal("no CHECK_TRANSACTION_STATE received")
		return nil
	}
}

// noCheck asserts no check request is waiting (checks are sent before
// CheckTransactions returns, but arrive asynchronously: callers only use it
// where a wrongly sent check would also show in the pass's result).
func (p *txProducer) noCheck() {
	p.t.Helper()
	select {
	case req := <-p.checks:
		p.t.Fatalf("unexpected check %v", req.Fields())
	default:
	}
}

// answer sends the END_TRANSACTION the official client sends for a check:
// oneway, fromTransactionCheck, the header's offsets.
func (p *txProducer) answer(group string, check *protocol.Command, state int32) {
	p.t.Helper()
	var ch protocol.CheckTransactionStateRequestHeader
	if err := ch.Decode(check.Fields()); err != nil {
		p.t.Fatal(err)
	}
	h := protocol.EndTransactionRequestHeader{
		ProducerGroup: group, TranStateTableOffset: ch.TranStateTableOffset, CommitLogOffset: ch.CommitLogOffset,
		CommitOrRollback: state, FromTransactionCheck: true, MsgID: ch.MsgID, TransactionID: ch.TransactionID,
	}
	if err := p.cl.InvokeOneway(context.Background(), p.addr, protocol.NewRequest(protocol.ReqEndTransaction, h.Encode(), nil)); err != nil {
		p.t.Fatal(err)
	}
}

func checkPass(t testing.TB, b *Broker) TxCheckResult {
	t.Helper()
	res, err := b.CheckTransactions()
	if err != nil {
		t.Fatalf("CheckTransactions: %v", err)
	}
	return res
}

func TestTransactionCheckAsksProducerAndCommits(t *testing.T) {
	clk := newFakeClock()
	b := startBroker(t, func(c *config.Config) { c.Now = clk.Now })
	p := newTxProducer(t, b.Addr(), "pg")
	p.createTopic("Tx", 2)
	sent := p.sendHalf("Tx", 1, "pg", clk.Now(), map[string]string{protocol.PropertyTags: "T"}, "checked")

	// Younger than TransactionTimeout: left alone.
	clk.Advance(5 * time.Second)
	if res := checkPass(t, b); res.Checked != 0 || res.Progress != 0 {
		t.Fatalf("young half: %+v", res)
	}
	clk.Advance(2 * time.Second)
	if res := checkPass(t, b); res.Checked != 1 || res.Sent != 1 || res.Progress != 1 {
		t.Fatalf("first check: %+v", res)
	}
	check := p.nextCheck()
	var ch protocol.CheckTransactionStateRequestHeader
	if err := ch.Decode(check.Fields()); err != nil {
		t.Fatal(err)
	}
	msgs, err := message.DecodeMessages(check.Body)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("check body: %d messages, %v", len(msgs), err)
	}
	m := msgs[0]
	// The check names the renewed copy, at the end of the half queue, and
	// carries the message as the producer sent it.
	if ch.TranStateTableOffset != 1 || ch.MsgID != sent.TransactionID || ch.TransactionID != sent.TransactionID ||
		ch.OffsetMsgID == sent.MsgID || m.OffsetMsgID != ch.OffsetMsgID || m.CommitLogOffset != ch.CommitLogOffset {
		t.Fatalf("check header %+v, message %+v", ch, m)
	}
	if m.Topic != "Tx" || m.QueueID != 1 || string(m.Body) != "checked" || m.Tags() != "T" || m.UniqKey() != sent.TransactionID ||
		m.Property(protocol.PropertyProducerGroup) != "pg" || m.Property(protocol.PropertyTransactionCheckTimes) != "1" {
		t.Fatalf("check message %+v", m)
	}

	p.answer("pg", check, protocol.TransactionCommit)
	testwait.For(t, testwait.Default, "the checked message committed", func() bool { return b.Store().MaxOffset("Tx", 1) == 1 })
	// The producer's own commit arriving late, with the first copy's
	// offsets, finds the transaction ended.
	expect(t, p.endTx(endHeader(t, "pg", sent, protocol.TransactionCommit)), protocol.RespSuccess, "")
	if n := b.Store().MaxOffset("Tx", 1); n != 1 {
		t.Fatalf("%d copies, want 1", n)
	}
	clk.Advance(time.Minute)
	if res := checkPass(t, b); res.Checked != 0 || res.Ended != 1 || res.Progress != 2 {
		t.Fatalf("after commit: %+v", res)
	}
	p.noCheck()
}

func TestTransactionCheckAnsweredRollback(t *testing.T) {
	clk := newFakeClock()
	b := startBroker(t, func(c *config.Config) { c.Now = clk.Now })
	p := newTxProducer(t, b.Addr(), "pg")
	p.createTopic("Tx", 1)
	p.sendHalf("Tx", 0, "pg", clk.Now(), nil, "never")
	clk.Advance(10 * time.Second)
	checkPass(t, b)
	p.answer("pg", p.nextCheck(), protocol.TransactionRollback)
	testwait.For(t, testwait.Default, "the rollback op", func() bool { return b.Store().MaxOffset("RMQ_SYS_TRANS_OP_HALF_TOPIC", 0) == 1 })
	if n := b.Store().MaxOffset("Tx", 0); n != 0 {
		t.Fatalf("%d messages after a rollback", n)
	}
	clk.Advance(time.Minute)
	if res := checkPass(t, b); res.Checked != 0 || res.Ended != 1 {
		t.Fatalf("after rollback: %+v", res)
	}
}

func TestTransactionCheckMaxDiscards(t *testing.T) {
	clk := newFakeClock()
	b, rc := withTopicConfig(t, "Tx", 1, func(c *config.Config) { c.Now = clk.Now; c.TransactionCheckMax = 2 })
	rc.sendHalf("Tx", 0, "pg", clk.Now(), nil, "orphan")
	// No producer of "pg" is online: checks are counted all the same.
	for i := range 2 {
		clk.Advance(time.Minute)
		if res := checkPass(t, b); res.Checked != 1 || res.Sent != 0 {
			t.Fatalf("check %d: %+v", i+1, res)
		}
	}
	clk.Advance(time.Minute)
	if res := checkPass(t, b); res.Discarded != 1 || res.Checked != 0 || res.Progress != 3 {
		t.Fatalf("after the last check: %+v", res)
	}
	discarded := storedMessages(t, b, "TRANS_CHECK_MAX_TIME_TOPIC", 0)
	if len(discarded) != 1 || string(discarded[0].Body) != "orphan" || discarded[0].Property(protocol.PropertyRealTopic) != "Tx" {
		t.Fatalf("discarded %+v", discarded)
	}
	// A late commit of the last copy is refused; nothing reaches Tx.
	last := storedMessages(t, b, "RMQ_SYS_TRANS_HALF_TOPIC", 0)[2]
	h := protocol.EndTransactionRequestHeader{ProducerGroup: "pg", TranStateTableOffset: last.QueueOffset,
		CommitLogOffset: last.CommitLogOffset, CommitOrRollback: protocol.TransactionCommit, MsgID: last.UniqKey()}
	expect(t, rc.endTx(h), protocol.RespSystemError, "already ended: discard")
	if n := b.Store().MaxOffset("Tx", 0); n != 0 {
		t.Fatalf("%d messages in Tx", n)
	}
	clk.Advance(time.Minute)
	if res := checkPass(t, b); res != (TxCheckResult{Progress: 3}) {
		t.Fatalf("after discard: %+v", res)
	}
}

func TestTransactionCheckImmunityDefersWithoutBlocking(t *testing.T) {
	clk := newFakeClock()
	b := startBroker(t, func(c *config.Config) { c.Now = clk.Now })
	p := newTxProducer(t, b.Addr(), "pg")
	p.createTopic("Tx", 1)
	p.sendHalf("Tx", 0, "pg", clk.Now(), map[string]string{protocol.PropertyCheckImmunityTimeInSecs: "60"}, "immune")
	p.sendHalf("Tx", 0, "pg", clk.Now(), nil, "plain")
	clk.Advance(10 * time.Second)
	if res := checkPass(t, b); res.Deferred != 1 || res.Checked != 1 || res.Progress != 2 {
		t.Fatalf("first pass: %+v", res)
	}
	if m, _ := message.DecodeMessages(p.nextCheck().Body); string(m[0].Body) != "plain" {
		t.Fatalf("checked %q first, want the plain half", m[0].Body)
	}
	clk.Advance(time.Minute)
	res := checkPass(t, b)
	if res.Checked != 2 || res.Sent != 2 {
		t.Fatalf("second pass: %+v", res)
	}
}

func TestTransactionCheckSurvivesRestart(t *testing.T) {
	clk := newFakeClock()
	dir := t.TempDir()
	open := func() *Broker { return startBrokerAt(t, dir, func(c *config.Config) { c.Now = clk.Now }) }
	b := open()
	rc := newRawClient(t, b.Addr())
	rc.createTopic("Tx", 1)
	sent := rc.sendHalf("Tx", 0, "pg", clk.Now(), nil, "survivor")
	clk.Advance(time.Minute)
	if res := checkPass(t, b); res.Checked != 1 || res.Progress != 1 {
		t.Fatalf("before restart: %+v", res)
	}
	if err := b.Abort(); err != nil { // the progress is written by the pass itself
		t.Fatal(err)
	}

	b = open()
	if off, ok := b.ConsumerOffset("CID_SYS_RMQ_TRANS", "RMQ_SYS_TRANS_HALF_TOPIC", 0); !ok || off != 1 {
		t.Fatalf("check progress after restart %d %v, want 1", off, ok)
	}
	p := newTxProducer(t, b.Addr(), "pg")
	clk.Advance(time.Minute)
	if res := checkPass(t, b); res.Checked != 1 || res.Sent != 1 || res.Progress != 2 {
		t.Fatalf("after restart: %+v", res)
	}
	check := p.nextCheck()
	if m, _ := message.DecodeMessages(check.Body); m[0].Property(protocol.PropertyTransactionCheckTimes) != "2" {
		t.Fatalf("check times %q, want 2", m[0].Property(protocol.PropertyTransactionCheckTimes))
	}
	p.answer("pg", check, protocol.TransactionCommit)
	testwait.For(t, testwait.Default, "the commit", func() bool { return b.Store().MaxOffset("Tx", 0) == 1 })
	// Every older copy of the transaction is ended with it.
	expect(t, p.endTx(endHeader(t, "pg", sent, protocol.TransactionCommit)), protocol.RespSuccess, "")
	if got := storedMessages(t, b, "Tx", 0); len(got) != 1 || string(got[0].Body) != "survivor" {
		t.Fatalf("Tx %+v", got)
	}
}

// TestTransactionCheckLoopRuns shows the loop itself checks on its
// interval (a short one, with the real clock).
func TestTransactionCheckLoopRuns(t *testing.T) {
	b := startBroker(t, func(c *config.Config) {
		c.TransactionCheckInterval = 10 * time.Millisecond
		c.TransactionTimeout = time.Millisecond
	})
	p := newTxProducer(t, b.Addr(), "pg")
	p.createTopic("Tx", 1)
	p.sendHalf("Tx", 0, "pg", time.Now().Add(-time.Second), nil, "loop")
	p.answer("pg", p.nextCheck(), protocol.TransactionCommit)
	testwait.For(t, testwait.Default, "the commit", func() bool { return b.Store().MaxOffset("Tx", 0) == 1 })
}
