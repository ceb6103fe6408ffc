package protocol

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/admin"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/apache/rocketmq-client-go/v2/rlog"
)

// These tests drive the official Go client against a fake peer built on
// this package's codec: the frames we decode are the client's own bytes, and
// the client's success proves it decodes what we encode.

func init() { rlog.SetLogLevel("fatal") }

var instanceSeq atomic.Int64

// uniqueInstance names a client instance; instances with the same name share
// one client and its connections across tests.
func uniqueInstance(t *testing.T) string {
	return fmt.Sprintf("%s-%d-%d", t.Name(), os.Getpid(), instanceSeq.Add(1))
}

// routeBody is a GET_ROUTEINFO_BY_TOPIC body pointing every queue at addr.
func routeBody(addr string) []byte {
	return []byte(`{"queueDatas":[{"brokerName":"b1","readQueueNums":1,"writeQueueNums":1,"perm":6,"topicSysFlag":0}],` +
		`"brokerDatas":[{"cluster":"c1","brokerName":"b1","brokerAddrs":{"0":"` + addr + `"}}]}`)
}

// assertClientRequest checks the header fields every official-client request has.
func assertClientRequest(t *testing.T, f captured, code int16) {
	t.Helper()
	c := f.cmd
	if c.Code != code || c.Language != "GO" || c.Version != 317 || c.Flag != 0 || c.Opaque <= 0 || c.Remark != "" {
		t.Errorf("request header = %v lang=%q version=%d, want code %d GO 317 flag 0", c, c.Language, c.Version, code)
	}
	if c.SerializeType != SerializeJSON || f.raw[0] != SerializeJSON {
		t.Errorf("serialize type %d, want JSON", c.SerializeType)
	}
	assertReencodes(t, f.raw, c)
	saveCorpus(t, "official-"+RequestCodeName(code), withPrefix(f.raw))
}

// assertReencodes checks decode(encode(decode(raw))) == decode(raw).
func assertReencodes(t *testing.T, raw []byte, c *Command) {
	t.Helper()
	out, err := EncodeFrame(c)
	if err != nil {
		t.Fatalf("encode %v: %v", c, err)
	}
	again, err := DecodeFrame(out[4:])
	if err != nil {
		t.Fatalf("decode own encoding of %q: %v", raw, err)
	}
	if !commandsEqual(c, again) {
		t.Errorf("round trip changed the command:\n %v\n %v", c, again)
	}
}

func TestOfficialAdminFetchAllTopicList(t *testing.T) {
	topics := []string{"A", "ümlaut", `quo"te`, "tab\there"}
	peer := startFakePeer(t, func(req *Command) *Command {
		if req.Code != ReqGetAllTopicListFromNameServer {
			return NewResponse(req, RespRequestCodeNotSupported, "no")
		}
		body := `{"topicList":["A","ümlaut","quo\"te","tab\there"]}`
		r := okResponse(req, nil, []byte(body))
		r.Remark = "ok \"quoted\" \u00e9\u4e2d\U0001F600 \x01\n"
		return r
	})
	adm, err := admin.NewAdmin(admin.WithResolver(primitive.NewPassthroughResolver([]string{peer.addr})))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, err := adm.FetchAllTopicList(ctx)
	if err != nil {
		t.Fatalf("official admin could not read our response: %v", err)
	}
	if strings.Join(list.TopicList, "|") != strings.Join(topics, "|") {
		t.Errorf("topic list = %q, want %q", list.TopicList, topics)
	}
	f := peer.waitFor(ReqGetAllTopicListFromNameServer, time.Second)
	assertClientRequest(t, f, ReqGetAllTopicListFromNameServer)
	if len(f.cmd.ExtFields) != 0 || len(f.cmd.Body) != 0 {
		t.Errorf("ext %v body %q, want none", f.cmd.ExtFields, f.cmd.Body)
	}
}

func TestOfficialAdminCreateTopic(t *testing.T) {
	peer := startFakePeer(t, func(req *Command) *Command { return okResponse(req, nil, nil) })
	adm, err := admin.NewAdmin(admin.WithResolver(primitive.NewPassthroughResolver([]string{peer.addr})))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = adm.CreateTopic(ctx, admin.WithTopicCreate("T-create"), admin.WithBrokerAddrCreate(peer.addr),
		admin.WithReadQueueNums(3), admin.WithWriteQueueNums(5), admin.WithOrder(true))
	if err != nil {
		t.Fatal(err)
	}
	f := peer.waitFor(ReqUpdateAndCreateTopic, time.Second)
	assertClientRequest(t, f, ReqUpdateAndCreateTopic)
	var h CreateTopicRequestHeader
	if err := h.Decode(f.cmd.ExtFields); err != nil {
		t.Fatal(err)
	}
	want := CreateTopicRequestHeader{Topic: "T-create", DefaultTopic: "defaultTopic", ReadQueueNums: 3,
		WriteQueueNums: 5, Perm: 6, TopicFilterType: "SINGLE_TAG", TopicSysFlag: 0, Order: true}
	if h != want {
		t.Errorf("decoded %+v, want %+v", h, want)
	}
	// Our encoder produces exactly the client's ext.
	if got := h.Encode(); !mapsEqual(got, f.cmd.ExtFields) {
		t.Errorf("Encode = %v, client sent %v", got, f.cmd.ExtFields)
	}
}

func TestOfficialProducerSend(t *testing.T) {
	var addr string
	var sends atomic.Int32
	peer := startFakePeer(t, func(req *Command) *Command {
		switch req.Code {
		case ReqGetRouteInfoByTopic:
			return okResponse(req, nil, routeBody(addr))
		case ReqSendMessage, ReqSendBatchMessage:
			n := sends.Add(1)
			if n == 3 {
				return NewResponse(req, RespMessageIllegal, "bad \"msg\" é\x01\n中")
			}
			resp := SendMessageResponseHeader{MsgID: "7F000001000051AF00000000000003E8", QueueID: 0,
				QueueOffset: 41 + int64(n), TransactionID: "tx", MsgRegion: "R1", TraceOn: "false"}
			return okResponse(req, resp.Encode(), nil)
		}
		return okResponse(req, nil, nil)
	})
	addr = peer.addr
	p, err := producer.NewDefaultProducer(
		producer.WithNsResolver(primitive.NewPassthroughResolver([]string{peer.addr})),
		producer.WithInstanceName(uniqueInstance(t)), producer.WithGroupName("pg1"), producer.WithRetry(0),
		producer.WithSendMsgTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// Single send: SEND_MESSAGE with long keys.
	msg := primitive.NewMessage("T1", []byte("hello")).WithTag("TagA").WithKeys([]string{"k1"})
	res, err := p.SendSync(ctx, msg)
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	if res.OffsetMsgID != "7F000001000051AF00000000000003E8" || res.QueueOffset != 42 ||
		res.TransactionID != "tx" || res.RegionID != "R1" || res.TraceOn {
		t.Errorf("client read our send response as %+v", res)
	}
	route := peer.waitFor(ReqGetRouteInfoByTopic, time.Second)
	assertClientRequest(t, route, ReqGetRouteInfoByTopic)
	if route.cmd.ExtFields["topic"] != "T1" {
		t.Errorf("route ext %v", route.cmd.ExtFields)
	}
	f := peer.waitFor(ReqSendMessage, time.Second)
	assertClientRequest(t, f, ReqSendMessage)
	h, err := DecodeSendMessageHeader(f.cmd.Code, f.cmd.ExtFields)
	if err != nil {
		t.Fatal(err)
	}
	if h.ProducerGroup != "pg1" || h.Topic != "T1" || h.DefaultTopic != "TBW102" || h.DefaultTopicQueueNums != 4 ||
		h.QueueID != 0 || h.SysFlag != 0 || h.BornTimestamp <= 0 || h.Flag != 0 || h.Batch || h.UnitMode ||
		h.BrokerName != "b1" || !strings.Contains(h.Properties, "TAGS\x01TagA\x02") {
		t.Errorf("send header %+v", h)
	}
	if string(f.cmd.Body) != "hello" {
		t.Errorf("body %q", f.cmd.Body)
	}
	if got := h.Encode(); !mapsEqual(got, f.cmd.ExtFields) {
		t.Errorf("Encode = %v, client sent %v", got, f.cmd.ExtFields)
	}

	// Batch: SEND_BATCH_MESSAGE with the short keys.
	m1 := primitive.NewMessage("T1", []byte("a")).WithTag("TagA")
	m2 := primitive.NewMessage("T1", []byte("b")).WithTag("TagB")
	if _, err := p.SendSync(ctx, m1, m2); err != nil {
		t.Fatalf("batch send: %v", err)
	}
	bf := peer.waitFor(ReqSendBatchMessage, time.Second)
	assertClientRequest(t, bf, ReqSendBatchMessage)
	if _, long := bf.cmd.ExtFields["topic"]; long || bf.cmd.ExtFields["b"] != "T1" {
		t.Fatalf("batch ext is not the short form: %v", bf.cmd.ExtFields)
	}
	bh, err := DecodeSendMessageHeader(bf.cmd.Code, bf.cmd.ExtFields)
	if err != nil {
		t.Fatal(err)
	}
	if bh.Topic != "T1" || bh.ProducerGroup != "pg1" || !bh.Batch || bh.DefaultTopic != "TBW102" ||
		bh.DefaultTopicQueueNums != 4 || bh.BrokerName != "b1" || bh.Properties != "" {
		t.Errorf("batch header %+v", bh)
	}
	if got := bh.EncodeV2(); !mapsEqual(got, bf.cmd.ExtFields) {
		t.Errorf("EncodeV2 = %v, client sent %v", got, bf.cmd.ExtFields)
	}

	// An error response: the client must see our remark byte for byte.
	_, err = p.SendSync(ctx, primitive.NewMessage("T1", []byte("x")))
	want := "CODE: 13, DESC: bad \"msg\" é\x01\n中"
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
}

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
			if err := ph.Decode(req.ExtFields); err != nil {
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
		consumer.WithInstance(uniqueInstance(t)), consumer.WithGroupName("g-orderly"),
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
	isT2 := func(c *Command) bool { return c.ExtFields["topic"] == "T2" }
	qf := peer.waitForMatch(ReqQueryConsumerOffset, 10*time.Second, isT2)
	assertClientRequest(t, qf, ReqQueryConsumerOffset)
	var qh QueryConsumerOffsetRequestHeader
	if err := qh.Decode(qf.cmd.ExtFields); err != nil || qh.ConsumerGroup != "g-orderly" || qh.Topic != "T2" || qh.BrokerName != "b1" {
		t.Errorf("query offset %+v %v", qh, err)
	}

	pf := peer.waitForMatch(ReqPullMessage, 10*time.Second, isT2)
	assertClientRequest(t, pf, ReqPullMessage)
	var ph PullMessageRequestHeader
	if err := ph.Decode(pf.cmd.ExtFields); err != nil {
		t.Fatal(err)
	}
	// The pull starts at the offset we answered, which shows the client read
	// our QUERY_CONSUMER_OFFSET response header.
	if ph.ConsumerGroup != "g-orderly" || ph.Topic != "T2" || ph.QueueID != 0 || ph.QueueOffset != 5 ||
		ph.MaxMsgNums != 32 || !PullHasSuspend(ph.SysFlag) || PullHasSubscription(ph.SysFlag) ||
		ph.SuspendTimeoutMillis != 20000 || ph.ExpressionType != "TAG" || ph.BrokerName != "b1" {
		t.Errorf("pull header %+v", ph)
	}
	if got := ph.Encode(); !mapsEqual(got, pf.cmd.ExtFields) {
		t.Errorf("Encode = %v, client sent %v", got, pf.cmd.ExtFields)
	}
	if got := qh.Encode(); !mapsEqual(got, qf.cmd.ExtFields) {
		t.Errorf("Encode = %v, client sent %v", got, qf.cmd.ExtFields)
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
	if err := oh.Decode(of.cmd.ExtFields); err != nil || oh.ConsumerGroup != "g-orderly" || oh.CommitOffset != 5 || oh.BrokerName != "b1" {
		t.Errorf("update offset %+v %v", oh, err)
	}
	if got := oh.Encode(); !mapsEqual(got, of.cmd.ExtFields) {
		t.Errorf("Encode = %v, client sent %v", got, of.cmd.ExtFields)
	}
	for _, f := range peer.all() {
		assertReencodes(t, f.raw, f.cmd)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func sameSet[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		found := false
		for _, y := range b {
			if x == y {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// TestOfficialReadsBinaryResponse answers in the ROCKETMQ binary header, as
// a Java broker configured for it would; the official client decodes both.
func TestOfficialReadsBinaryResponse(t *testing.T) {
	peer := startFakePeer(t, func(req *Command) *Command {
		r := okResponse(req, map[string]string{"k": "v"}, []byte(`{"topicList":["B1","B2"]}`))
		r.Remark = "bin ü"
		r.SerializeType = SerializeRocketMQ
		return r
	})
	adm, err := admin.NewAdmin(admin.WithResolver(primitive.NewPassthroughResolver([]string{peer.addr})))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, err := adm.FetchAllTopicList(ctx)
	if err != nil {
		t.Fatalf("official admin could not read our binary response: %v", err)
	}
	if strings.Join(list.TopicList, ",") != "B1,B2" {
		t.Errorf("topic list %q", list.TopicList)
	}
}
