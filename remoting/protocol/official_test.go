package protocol

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/admin"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/apache/rocketmq-client-go/v2/rlog"

	"github.com/runnelmq/runnel/internal/official"
)

// These tests drive the official Go client against a fake peer built on
// this package's codec: the frames we decode are the client's own bytes, and
// the client's success proves it decodes what we encode.

func init() { rlog.SetLogLevel("fatal") }

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
	if again := roundTrip(t, c); !commandsEqual(c, again) {
		t.Errorf("round trip changed the command of %q:\n %v\n %v", raw, c, again)
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
	list, err := official.TopicList(t, peer.addr)
	if err != nil {
		t.Fatalf("official admin could not read our response: %v", err)
	}
	if strings.Join(list, "|") != strings.Join(topics, "|") {
		t.Errorf("topic list = %q, want %q", list, topics)
	}
	f := peer.waitFor(ReqGetAllTopicListFromNameServer, time.Second)
	assertClientRequest(t, f, ReqGetAllTopicListFromNameServer)
	if len(f.cmd.Fields()) != 0 || len(f.cmd.Body) != 0 {
		t.Errorf("ext %v body %q, want none", f.cmd.Fields(), f.cmd.Body)
	}
}

func TestOfficialAdminCreateTopic(t *testing.T) {
	peer := startFakePeer(t, func(req *Command) *Command { return okResponse(req, nil, nil) })
	adm := official.Admin(t, peer.addr)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := adm.CreateTopic(ctx, admin.WithTopicCreate("T-create"), admin.WithBrokerAddrCreate(peer.addr),
		admin.WithReadQueueNums(3), admin.WithWriteQueueNums(5), admin.WithOrder(true))
	if err != nil {
		t.Fatal(err)
	}
	f := peer.waitFor(ReqUpdateAndCreateTopic, time.Second)
	assertClientRequest(t, f, ReqUpdateAndCreateTopic)
	var h CreateTopicRequestHeader
	if err := h.Decode(f.cmd.Fields()); err != nil {
		t.Fatal(err)
	}
	want := CreateTopicRequestHeader{Topic: "T-create", DefaultTopic: "defaultTopic", ReadQueueNums: 3,
		WriteQueueNums: 5, Perm: 6, TopicFilterType: "SINGLE_TAG", TopicSysFlag: 0, Order: true}
	if h != want {
		t.Errorf("decoded %+v, want %+v", h, want)
	}
	// Our encoder produces exactly the client's ext.
	if got := h.Encode(); !mapsEqual(got, f.cmd.Fields()) {
		t.Errorf("Encode = %v, client sent %v", got, f.cmd.Fields())
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
	p := official.Producer(t, peer.addr, producer.WithGroupName("pg1"), producer.WithRetry(0),
		producer.WithSendMsgTimeout(10*time.Second))
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
	if route.cmd.Fields()["topic"] != "T1" {
		t.Errorf("route ext %v", route.cmd.Fields())
	}
	f := peer.waitFor(ReqSendMessage, time.Second)
	assertClientRequest(t, f, ReqSendMessage)
	h, err := DecodeSendMessageHeader(f.cmd.Code, f.cmd.Fields())
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
	if got := h.Encode(); !mapsEqual(got, f.cmd.Fields()) {
		t.Errorf("Encode = %v, client sent %v", got, f.cmd.Fields())
	}

	// Batch: SEND_BATCH_MESSAGE with the short keys.
	m1 := primitive.NewMessage("T1", []byte("a")).WithTag("TagA")
	m2 := primitive.NewMessage("T1", []byte("b")).WithTag("TagB")
	if _, err := p.SendSync(ctx, m1, m2); err != nil {
		t.Fatalf("batch send: %v", err)
	}
	bf := peer.waitFor(ReqSendBatchMessage, time.Second)
	assertClientRequest(t, bf, ReqSendBatchMessage)
	if _, long := bf.cmd.Fields()["topic"]; long || bf.cmd.Fields()["b"] != "T1" {
		t.Fatalf("batch ext is not the short form: %v", bf.cmd.Fields())
	}
	bh, err := DecodeSendMessageHeader(bf.cmd.Code, bf.cmd.Fields())
	if err != nil {
		t.Fatal(err)
	}
	if bh.Topic != "T1" || bh.ProducerGroup != "pg1" || !bh.Batch || bh.DefaultTopic != "TBW102" ||
		bh.DefaultTopicQueueNums != 4 || bh.BrokerName != "b1" || bh.Properties != "" {
		t.Errorf("batch header %+v", bh)
	}
	if got := bh.EncodeV2(); !mapsEqual(got, bf.cmd.Fields()) {
		t.Errorf("EncodeV2 = %v, client sent %v", got, bf.cmd.Fields())
	}

	// An error response: the client must see our remark byte for byte.
	_, err = p.SendSync(ctx, primitive.NewMessage("T1", []byte("x")))
	want := "CODE: 13, DESC: bad \"msg\" é\x01\n中"
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
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
	list, err := official.TopicList(t, peer.addr)
	if err != nil {
		t.Fatalf("official admin could not read our binary response: %v", err)
	}
	if strings.Join(list, ",") != "B1,B2" {
		t.Errorf("topic list %q", list)
	}
}
