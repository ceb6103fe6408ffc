//go:build !race

// The official client's push consumer reports data races inside itself under
// -race (its rebalance against its own offset store and pull paths), so this
// test runs in the test command's race-free pass, where a race of theirs
// cannot fail CI for a reason that is not ours.

package protocol

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/runnelmq/runnel/internal/official"
)

func TestOfficialOrderlyConsumer(t *testing.T) {
	var addr string
	var mu sync.Mutex
	var clientIDs []string
	peer := startFakePeer(t, func(req *Command) *Command {
		switch req.Code {
		case ReqGetRouteInfoByTopic:
			return okResponse(req, nil, routeBody(addr))
		case ReqHeartBeat:
			hb, err := DecodeHeartbeatData(req.Body)
			if err != nil {
				t.Errorf("heartbeat: %v", err)
				return NewResponse(req, RespSystemError, err.Error())
			}
			mu.Lock()
			if len(clientIDs) == 0 {
				clientIDs = append(clientIDs, hb.ClientID)
			}
			mu.Unlock()
			return okResponse(req, nil, nil)
		case ReqGetConsumerListByGroup:
			mu.Lock()
			body := GetConsumerListByGroupResponseBody{ConsumerIDList: append([]string(nil), clientIDs...)}
			mu.Unlock()
			return okResponse(req, nil, body.Encode())
		case ReqQueryConsumerOffset:
			return okResponse(req, QueryConsumerOffsetResponseHeader{Offset: 5}.Encode(), nil)
		case ReqLockBatchMQ, ReqUnlockBatchMQ:
			b, err := DecodeLockBatchRequestBody(req.Body)
			if err != nil {
				t.Errorf("lock body: %v", err)
				return NewResponse(req, RespSystemError, err.Error())
			}
			return okResponse(req, nil, LockBatchResponseBody{LockOKMQSet: b.MQSet}.Encode())
		case ReqPullMessage:
			// Hold briefly so the client does not spin, then "no new message".
			time.Sleep(100 * time.Millisecond)
			var ph PullMessageRequestHeader
			if err := ph.Decode(req.Fields()); err != nil {
				t.Errorf("pull: %v", err)
			}
			r := NewResponse(req, RespPullNotFound, "")
			r.ExtFields = PullMessageResponseHeader{NextBeginOffset: ph.QueueOffset, MaxOffset: ph.QueueOffset}.Encode()
			return r
		}
		return okResponse(req, nil, nil)
	})
	addr = peer.addr
	c, err := consumer.NewPushConsumer(
		consumer.WithNsResolver(primitive.NewPassthroughResolver([]string{peer.addr})),
		consumer.WithInstance(official.Instance("c")), consumer.WithGroupName("g-orderly"),
		consumer.WithConsumerOrder(true), consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
	if err != nil {
		t.Fatal(err)
	}
	err = c.Subscribe("T2", consumer.MessageSelector{Type: consumer.TAG, Expression: "TagA || TagB"},
		func(context.Context, ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
			return consumer.ConsumeSuccess, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}

	// The heartbeat body as the client writes it.
	hbf := peer.waitFor(ReqHeartBeat, 10*time.Second)
	assertClientRequest(t, hbf, ReqHeartBeat)
	hb, err := DecodeHeartbeatData(hbf.cmd.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(hb.ClientID, "@") || len(hb.ConsumerDataSet) != 1 {
		t.Fatalf("heartbeat %+v", hb)
	}
	cd := hb.ConsumerDataSet[0]
	if cd.GroupName != "g-orderly" || cd.ConsumeType != ConsumePassively || cd.MessageModel != MessageModelClustering ||
		cd.ConsumeFromWhere != ConsumeFromFirstOffset {
		t.Errorf("consumer data %+v", cd)
	}
	var sub *SubscriptionData
	for i := range cd.SubscriptionDataSet {
		if cd.SubscriptionDataSet[i].Topic == "T2" {
			sub = &cd.SubscriptionDataSet[i]
		}
	}
	if sub == nil {
		t.Fatalf("no T2 subscription in %+v", cd.SubscriptionDataSet)
	}
	tags, codes := ParseSubExpression(sub.SubString)
	if sub.SubString != "TagA || TagB" || !sameSet(sub.TagsSet, tags) || !sameSet(sub.CodeSet, codes) ||
		sub.SubVersion == 0 || !sub.IsTagType() {
		t.Errorf("subscription %+v; our parse gives %v %v", sub, tags, codes)
	}

	// Rebalance read our consumer list, then locked the queue: the lock
	// body is the client's, and the pull that follows proves the client
	// read our lock response (it does not pull an unlocked orderly queue).
	assertClientRequest(t, peer.waitFor(ReqGetConsumerListByGroup, 10*time.Second), ReqGetConsumerListByGroup)
	lf := peer.waitForMatch(ReqLockBatchMQ, 10*time.Second, func(c *Command) bool {
		return bytes.Contains(c.Body, []byte(`"topic":"T2"`))
	})
	assertClientRequest(t, lf, ReqLockBatchMQ)
	lb, err := DecodeLockBatchRequestBody(lf.cmd.Body)
	if err != nil {
		t.Fatal(err)
	}
	wantMQ := MessageQueue{Topic: "T2", BrokerName: "b1", QueueID: 0}
	if lb.ConsumerGroup != "g-orderly" || lb.ClientID != hb.ClientID || len(lb.MQSet) != 1 || lb.MQSet[0] != wantMQ {
		t.Errorf("lock body %+v", lb)
	}
	isT2 := func(c *Command) bool { return c.Fields()["topic"] == "T2" }
	qf := peer.waitForMatch(ReqQueryConsumerOffset, 10*time.Second, isT2)
	assertClientRequest(t, qf, ReqQueryConsumerOffset)
	var qh QueryConsumerOffsetRequestHeader
	if err := qh.Decode(qf.cmd.Fields()); err != nil || qh.ConsumerGroup != "g-orderly" || qh.Topic != "T2" || qh.BrokerName != "b1" {
		t.Errorf("query offset %+v %v", qh, err)
	}

	pf := peer.waitForMatch(ReqPullMessage, 10*time.Second, isT2)
	assertClientRequest(t, pf, ReqPullMessage)
	var ph PullMessageRequestHeader
	if err := ph.Decode(pf.cmd.Fields()); err != nil {
		t.Fatal(err)
	}
	// The pull starts at the offset we answered, which shows the client read
	// our QUERY_CONSUMER_OFFSET response header.
	if ph.ConsumerGroup != "g-orderly" || ph.Topic != "T2" || ph.QueueID != 0 || ph.QueueOffset != 5 ||
		ph.MaxMsgNums != 32 || !PullHasSuspend(ph.SysFlag) || PullHasSubscription(ph.SysFlag) ||
		ph.SuspendTimeoutMillis != 20000 || ph.ExpressionType != "TAG" || ph.BrokerName != "b1" {
		t.Errorf("pull header %+v", ph)
	}
	if got := ph.Encode(); !mapsEqual(got, pf.cmd.Fields()) {
		t.Errorf("Encode = %v, client sent %v", got, pf.cmd.Fields())
	}
	if got := qh.Encode(); !mapsEqual(got, qf.cmd.Fields()) {
		t.Errorf("Encode = %v, client sent %v", got, qf.cmd.Fields())
	}
	if err := c.Shutdown(); err != nil {
		t.Error(err)
	}
	// Shutdown unlocks the queue and persists its offset.
	uf := peer.waitForMatch(ReqUnlockBatchMQ, 5*time.Second, func(c *Command) bool {
		return bytes.Contains(c.Body, []byte(`"topic":"T2"`))
	})
	assertClientRequest(t, uf, ReqUnlockBatchMQ)
	if ub, err := DecodeLockBatchRequestBody(uf.cmd.Body); err != nil || ub.ClientID != hb.ClientID || !slices.Contains(ub.MQSet, wantMQ) {
		t.Errorf("unlock body %+v %v", ub, err)
	}
	of := peer.waitForMatch(ReqUpdateConsumerOffset, 5*time.Second, isT2)
	assertClientRequest(t, of, ReqUpdateConsumerOffset)
	var oh UpdateConsumerOffsetRequestHeader
	if err := oh.Decode(of.cmd.Fields()); err != nil || oh.ConsumerGroup != "g-orderly" || oh.CommitOffset != 5 || oh.BrokerName != "b1" {
		t.Errorf("update offset %+v %v", oh, err)
	}
	if got := oh.Encode(); !mapsEqual(got, of.cmd.Fields()) {
		t.Errorf("Encode = %v, client sent %v", got, of.cmd.Fields())
	}
	for _, f := range peer.all() {
		assertReencodes(t, f.raw, f.cmd)
	}
}
