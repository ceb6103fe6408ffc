package broker

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// storedMessages decodes every message of a queue.
func storedMessages(t testing.TB, b *Broker, topic string, q int32) []*protocol.MessageExt {
	t.Helper()
	var out []*protocol.MessageExt
	for off := b.Store().MinOffset(topic, q); off < b.Store().MaxOffset(topic, q); off++ {
		e, err := b.Store().QueueEntry(topic, q, off)
		if err != nil {
			t.Fatalf("queue entry %s/%d@%d: %v", topic, q, off, err)
		}
		rec, err := b.Store().ReadRecord(e.PhysOffset)
		if err != nil {
			t.Fatal(err)
		}
		m, _, err := message.DecodeStoredMessage(rec, false)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// sendHalf sends a transaction's half message as the official client does
// (PREPARED sysFlag, TRAN_MSG and PGROUP) and returns the response header.
func (rc *rawClient) sendHalf(topic string, q int32, group string, born time.Time, props map[string]string, body string) protocol.SendMessageResponseHeader {
	rc.t.Helper()
	all := map[string]string{protocol.PropertyTransactionPrepared: "true", protocol.PropertyProducerGroup: group}
	for k, v := range props {
		all[k] = v
	}
	h := sendHeader(topic, q, all)
	h.ProducerGroup = group
	h.SysFlag = protocol.SysFlagTransactionPrep
	h.BornTimestamp = born.UnixMilli()
	resp := rc.call(protocol.ReqSendMessage, h.Encode(), []byte(body))
	expect(rc.t, resp, protocol.RespSuccess, "")
	var out protocol.SendMessageResponseHeader
	if err := out.Decode(resp.Fields()); err != nil {
		rc.t.Fatal(err)
	}
	return out
}

// endHeader is the END_TRANSACTION header the official client builds from
// a send result.
func endHeader(t testing.TB, group string, sent protocol.SendMessageResponseHeader, state int32) protocol.EndTransactionRequestHeader {
	t.Helper()
	_, phys, err := message.ParseOffsetMsgID(sent.MsgID)
	if err != nil {
		t.Fatal(err)
	}
	return protocol.EndTransactionRequestHeader{
		ProducerGroup: group, TranStateTableOffset: sent.QueueOffset, CommitLogOffset: phys,
		CommitOrRollback: state, MsgID: sent.TransactionID, TransactionID: sent.TransactionID,
	}
}

func (rc *rawClient) endTx(h protocol.EndTransactionRequestHeader) *protocol.Command {
	rc.t.Helper()
	return rc.call(protocol.ReqEndTransaction, h.Encode(), nil)
}

func TestTransactionHalfInvisibleUntilCommit(t *testing.T) {
	b, rc := withTopic(t, "Tx", 4)
	props := map[string]string{protocol.PropertyTags: "TagT", protocol.PropertyKeys: "k1 k2", "user": "v"}
	sent := rc.sendHalf("Tx", 1, "pg", time.Now(), props, "payload")
	if sent.QueueID != 1 || sent.QueueOffset != 0 || sent.TransactionID == "" {
		t.Fatalf("send response %+v", sent)
	}

	halves := storedMessages(t, b, "RMQ_SYS_TRANS_HALF_TOPIC", 0)
	if len(halves) != 1 {
		t.Fatalf("%d half messages, want 1", len(halves))
	}
	h := halves[0]
	if h.Property(protocol.PropertyRealTopic) != "Tx" || h.Property(protocol.PropertyRealQueueID) != "1" ||
		h.Property(protocol.PropertyProducerGroup) != "pg" || h.SysFlag&protocol.SysFlagTransactionMask != 0 || h.OffsetMsgID != sent.MsgID {
		t.Fatalf("half message %+v", h)
	}
	for q := int32(0); q < 4; q++ {
		if n := b.Store().MaxOffset("Tx", q); n != 0 {
			t.Fatalf("real queue %d has %d messages before commit", q, n)
		}
	}
	if recs, _ := b.Store().QueryByKey("Tx", "k1", 8, 0, 0); len(recs) != 0 {
		t.Fatalf("half message found by key in the real topic")
	}

	expect(t, rc.endTx(endHeader(t, "pg", sent, protocol.TransactionCommit)), protocol.RespSuccess, "")
	// The same commit again (a check's answer after the producer's own)
	// stores nothing more; a rollback now is refused.
	expect(t, rc.endTx(endHeader(t, "pg", sent, protocol.TransactionCommit)), protocol.RespSuccess, "")
	expect(t, rc.endTx(endHeader(t, "pg", sent, protocol.TransactionRollback)), protocol.RespSystemError, "already ended")

	got := storedMessages(t, b, "Tx", 1)
	if len(got) != 1 {
		t.Fatalf("%d committed messages, want 1", len(got))
	}
	m := got[0]
	if string(m.Body) != "payload" || m.Tags() != "TagT" || m.Property(protocol.PropertyKeys) != "k1 k2" || m.Property("user") != "v" ||
		m.UniqKey() != sent.TransactionID || m.Property(protocol.PropertyProducerGroup) != "pg" ||
		m.Property(protocol.PropertyRealTopic) != "" || m.Property(protocol.PropertyRealQueueID) != "" || m.Property("RUNNEL_TRAN_ORIGIN") != "" ||
		m.SysFlag&protocol.SysFlagTransactionMask != protocol.SysFlagTransactionComm || m.PreparedTransactionOffset != h.CommitLogOffset {
		t.Fatalf("committed message %+v", m)
	}
	if recs, _ := b.Store().QueryByKey("Tx", "k2", 8, 0, 0); len(recs) != 1 {
		t.Fatalf("committed message found %d times by key, want 1", len(recs))
	}
	ops := storedMessages(t, b, "RMQ_SYS_TRANS_OP_HALF_TOPIC", 0)
	if len(ops) != 1 || ops[0].Tags() != "d" || string(ops[0].Body) != "0" {
		t.Fatalf("op messages %+v", ops)
	}
	// Consumers get it like any message, once.
	ph := pullHeader("cg", "Tx", 1, 0, 32, protocol.PullFlagSubscription)
	ph.Subscription = "TagT"
	resp := rc.call(protocol.ReqPullMessage, ph.Encode(), nil)
	expect(t, resp, protocol.RespSuccess, "FOUND")
	if pulled, err := message.DecodeMessages(resp.Body); err != nil || len(pulled) != 1 || string(pulled[0].Body) != "payload" {
		t.Fatalf("pulled %d messages: %v", len(pulled), err)
	}
}

func TestTransactionRollbackStoresNothing(t *testing.T) {
	b, rc := withTopic(t, "Tx", 1)
	sent := rc.sendHalf("Tx", 0, "pg", time.Now(), nil, "no")
	expect(t, rc.endTx(endHeader(t, "pg", sent, protocol.TransactionRollback)), protocol.RespSuccess, "")
	expect(t, rc.endTx(endHeader(t, "pg", sent, protocol.TransactionRollback)), protocol.RespSuccess, "")
	expect(t, rc.endTx(endHeader(t, "pg", sent, protocol.TransactionCommit)), protocol.RespSystemError, "already ended: rollback")
	if n := b.Store().MaxOffset("Tx", 0); n != 0 {
		t.Fatalf("%d messages in the real queue after rollback", n)
	}
	if ops := storedMessages(t, b, "RMQ_SYS_TRANS_OP_HALF_TOPIC", 0); len(ops) != 1 || ops[0].Property("RUNNEL_TRAN_END") != "rollback" {
		t.Fatalf("ops %+v", ops)
	}

	// UNKNOW (0) leaves the transaction open: no answer, nothing stored,
	// and a commit still works.
	sent2 := rc.sendHalf("Tx", 0, "pg", time.Now(), nil, "later")
	unknown := protocol.NewRequest(protocol.ReqEndTransaction, endHeader(t, "pg", sent2, protocol.TransactionNotType).Encode(), nil)
	if err := rc.cl.InvokeOneway(context.Background(), rc.addr, unknown); err != nil {
		t.Fatal(err)
	}
	expect(t, rc.endTx(endHeader(t, "pg", sent2, protocol.TransactionCommit)), protocol.RespSuccess, "")
	if got := storedMessages(t, b, "Tx", 0); len(got) != 1 || string(got[0].Body) != "later" {
		t.Fatalf("real queue %+v", got)
	}
}

func TestEndTransactionRefusals(t *testing.T) {
	b, rc := withTopic(t, "Tx", 1)
	plain := rc.send("Tx", 0, "", "plain")
	var ph protocol.SendMessageResponseHeader
	if err := ph.Decode(plain.Fields()); err != nil {
		t.Fatal(err)
	}
	sent := rc.sendHalf("Tx", 0, "pg", time.Now(), nil, "x")
	commit := func(mod func(*protocol.EndTransactionRequestHeader)) *protocol.Command {
		h := endHeader(t, "pg", sent, protocol.TransactionCommit)
		mod(&h)
		return rc.endTx(h)
	}
	expect(t, commit(func(h *protocol.EndTransactionRequestHeader) { h.ProducerGroup = "other" }), protocol.RespSystemError, "producer group wrong")
	expect(t, commit(func(h *protocol.EndTransactionRequestHeader) { h.TranStateTableOffset = 5 }), protocol.RespSystemError, "state table offset wrong")
	expect(t, commit(func(h *protocol.EndTransactionRequestHeader) { h.CommitLogOffset = 1 << 40 }), protocol.RespSystemError, "Find prepared transaction message failed")
	expect(t, commit(func(h *protocol.EndTransactionRequestHeader) {
		_, h.CommitLogOffset, _ = message.ParseOffsetMsgID(ph.MsgID) // a normal message
	}), protocol.RespSystemError, "not a half message")
	ext := endHeader(t, "pg", sent, protocol.TransactionCommit).Encode()
	delete(ext, "commitLogOffset")
	expect(t, rc.call(protocol.ReqEndTransaction, ext, nil), protocol.RespSystemError, "commitLogOffset")
	if n := b.Store().MaxOffset("Tx", 0); n != 1 {
		t.Fatalf("real queue has %d messages after refused commits, want the plain one", n)
	}
	expect(t, commit(func(*protocol.EndTransactionRequestHeader) {}), protocol.RespSuccess, "")
	if n := b.Store().MaxOffset("Tx", 0); n != 2 {
		t.Fatalf("real queue has %d messages, want 2", n)
	}
}

func TestTransactionConcurrentCommitsStoreOnce(t *testing.T) {
	b, rc := withTopic(t, "Tx", 1)
	sent := rc.sendHalf("Tx", 0, "pg", time.Now(), nil, "once")
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := endHeader(t, "pg", sent, protocol.TransactionCommit)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			resp, err := rc.cl.Invoke(ctx, rc.addr, protocol.NewRequest(protocol.ReqEndTransaction, h.Encode(), nil))
			if err != nil || resp.Code != protocol.RespSuccess {
				t.Errorf("commit: %v %v", resp, err)
			}
		}()
	}
	wg.Wait()
	if n := b.Store().MaxOffset("Tx", 0); n != 1 {
		t.Fatalf("%d copies after concurrent commits, want 1", n)
	}
}

func TestTransactionCommitAfterRestart(t *testing.T) {
	dir := t.TempDir()
	open := func() *Broker { return startBrokerAt(t, dir, nil) }
	b := open()
	rc := newRawClient(t, b.Addr())
	rc.createTopic("Tx", 2)
	sent := rc.sendHalf("Tx", 1, "pg", time.Now(), nil, "durable")
	rolled := rc.sendHalf("Tx", 1, "pg", time.Now(), nil, "gone")
	expect(t, rc.endTx(endHeader(t, "pg", rolled, protocol.TransactionRollback)), protocol.RespSuccess, "")
	if err := b.Abort(); err != nil {
		t.Fatal(err)
	}

	b = open()
	rc2 := newRawClient(t, b.Addr())
	if n := b.Store().MaxOffset("Tx", 1); n != 0 {
		t.Fatalf("real queue has %d messages before commit", n)
	}
	expect(t, rc2.endTx(endHeader(t, "pg", sent, protocol.TransactionCommit)), protocol.RespSuccess, "")
	expect(t, rc2.endTx(endHeader(t, "pg", rolled, protocol.TransactionCommit)), protocol.RespSystemError, "already ended")
	if got := storedMessages(t, b, "Tx", 1); len(got) != 1 || string(got[0].Body) != "durable" {
		t.Fatalf("after restart and commit: %+v", got)
	}
}

func TestSendTransactionBatchRefused(t *testing.T) {
	_, rc := withClient(t)
	h := sendHeader("Tx", 0, nil)
	h.Batch = true
	h.SysFlag = protocol.SysFlagTransactionPrep
	resp := rc.call(protocol.ReqSendBatchMessage, h.EncodeV2(), mustBatch(t, []*protocol.Message{{Body: []byte("x")}}))
	expect(t, resp, protocol.RespMessageIllegal, "transaction")
}

func TestTransactionConfig(t *testing.T) {
	d := config.Default()
	if d.TransactionTimeout != 6*time.Second || d.TransactionCheckMax != 15 || d.TransactionCheckInterval != time.Minute {
		t.Fatalf("defaults %v %d %v, want Java's 6 s, 15, 60 s", d.TransactionTimeout, d.TransactionCheckMax, d.TransactionCheckInterval)
	}
	cfg := config.Default()
	conf := "transactionTimeOut=3000\ntransactionCheckMax=5\ntransactionCheckInterval=1500\n"
	if ignored, err := cfg.ApplyProperties(strings.NewReader(conf)); err != nil || len(ignored) != 0 {
		t.Fatalf("ApplyProperties: %v, ignored %v", err, ignored)
	}
	if cfg.TransactionTimeout != 3*time.Second || cfg.TransactionCheckMax != 5 || cfg.TransactionCheckInterval != 1500*time.Millisecond {
		t.Fatalf("config %v %d %v", cfg.TransactionTimeout, cfg.TransactionCheckMax, cfg.TransactionCheckInterval)
	}
	for _, bad := range []string{"transactionTimeOut=-1", "transactionCheckMax=x", "transactionCheckInterval=0"} {
		c := config.Default()
		if _, err := c.ApplyProperties(strings.NewReader(bad)); !errors.Is(err, config.ErrBadConfig) {
			t.Errorf("%q: %v, want config.ErrBadConfig", bad, err)
		}
	}
	c := config.Default()
	c.StoreDir = "/tmp/x"
	c.TransactionCheckInterval = -time.Second
	if err := c.Validate(); !errors.Is(err, config.ErrBadConfig) {
		t.Errorf("negative TransactionCheckInterval: %v", err)
	}
}

// TestRetrySendIsNotHalf: a consumer's fallback re-send of a committed
// transactional message to %RETRY% keeps TRAN_MSG but is a retry, not a
// new transaction.
func TestRetrySendIsNotHalf(t *testing.T) {
	b, rc := withClient(t)
	h := sendHeader("%RETRY%g", 0, map[string]string{protocol.PropertyTransactionPrepared: "true", protocol.PropertyProducerGroup: "pg"})
	expect(t, rc.call(protocol.ReqSendMessage, h.Encode(), []byte("again")), protocol.RespSuccess, "")
	if n := b.Store().MaxOffset("%RETRY%g", 0); n != 1 {
		t.Fatalf("retry topic has %d messages, want 1", n)
	}
	if n := b.Store().MaxOffset("RMQ_SYS_TRANS_HALF_TOPIC", 0); n != 0 {
		t.Fatalf("half queue has %d messages", n)
	}
}
