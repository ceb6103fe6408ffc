package admin

import (
	"context"
	"errors"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// stored encodes a message as a broker stores it, on the broker at addr.
func stored(t *testing.T, addr string, phys, storeTime int64, topic, keys, uniq, body string) []byte {
	t.Helper()
	host := netip.MustParseAddrPort(addr)
	m := &protocol.MessageExt{
		Message:         protocol.Message{Topic: topic, Body: []byte(body), Properties: map[string]string{}},
		CommitLogOffset: phys, StoreTimestamp: storeTime, BornTimestamp: storeTime - 1,
		StoreHost: host, BornHost: netip.MustParseAddrPort("10.1.1.1:5555"),
	}
	if keys != "" {
		m.Properties[protocol.PropertyKeys] = keys
	}
	if uniq != "" {
		m.Properties[protocol.PropertyUniqClientMessageIDKey] = uniq
	}
	b, err := message.AppendStoredMessage(nil, m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestQueryMessageByOffsetID(t *testing.T) {
	ns, ba, _ := twoBrokers(t)
	rec := stored(t, ba.addr(), 4096, 1000, "T", "k1", "UNIQ1", "hello")
	ba.reply(protocol.ReqViewMessageByID, protocol.RespSuccess, nil, rec)
	a := newAdmin(t, ns.addr())
	id := message.OffsetMsgID(netip.MustParseAddrPort(ba.addr()), 4096)
	m, err := a.QueryMessageByID(context.Background(), id, "")
	if err != nil {
		t.Fatal(err)
	}
	if string(m.Body) != "hello" || m.OffsetMsgID != id || m.MsgID != "UNIQ1" || m.Topic != "T" {
		t.Fatalf("message %+v", m)
	}
	got := ba.requests(protocol.ReqViewMessageByID)
	if len(got) != 1 || !reflect.DeepEqual(got[0].Ext, map[string]string{"offset": "4096"}) {
		t.Fatalf("request %+v", got)
	}

	// The broker does not have it: the error names the broker.
	ba.reply(protocol.ReqViewMessageByID, protocol.RespSystemError, nil, nil)
	if _, err := a.QueryMessageByID(context.Background(), id, ""); err == nil || !strings.Contains(err.Error(), ba.addr()) {
		t.Fatalf("err %v", err)
	}
	if _, err := a.QueryMessageByID(context.Background(), "zz", ""); !errors.Is(err, message.ErrBadMessageID) {
		t.Fatalf("bad id: %v", err)
	}
}

func TestQueryMessageByClientID(t *testing.T) {
	ns, ba, bb := twoBrokers(t)
	ns.reply(protocol.ReqGetRouteInfoByTopic, protocol.RespSuccess, nil,
		routeBody("C", 1, map[string]string{"broker-a": ba.addr(), "broker-b": bb.addr()}))
	// A client id parses as an offsetMsgId too, to an address no broker
	// has: 0A000001 = 10.0.0.1, port 0x00001234.
	const uniq = "0A0000010000123400000000000000AB"
	ba.reply(protocol.ReqQueryMessage, protocol.RespQueryNotFound, nil, nil)
	bb.reply(protocol.ReqQueryMessage, protocol.RespSuccess, nil, append(
		stored(t, bb.addr(), 10, 2000, "T", "", "OTHER", "collision"),
		stored(t, bb.addr(), 20, 1000, "T", "", uniq, "mine")...))
	a := newAdmin(t, ns.addr())
	m, err := a.QueryMessageByID(context.Background(), uniq, "T")
	if err != nil {
		t.Fatal(err)
	}
	if string(m.Body) != "mine" {
		t.Fatalf("got %q", m.Body)
	}
	got := bb.requests(protocol.ReqQueryMessage)
	want := map[string]string{"topic": "T", "key": uniq, "maxNum": "32", "beginTimestamp": "0",
		"endTimestamp": "9223372036854775807", "_UNIQUE_KEY_QUERY": "true"}
	if len(got) != 1 || !reflect.DeepEqual(got[0].Ext, want) {
		t.Fatalf("request %+v\nwant %v", got, want)
	}
	if n := len(ba.requests(protocol.ReqViewMessageByID)) + len(bb.requests(protocol.ReqViewMessageByID)); n != 0 {
		t.Fatalf("%d VIEW_MESSAGE_BY_ID sent for an id of no known broker", n)
	}

	bb.reply(protocol.ReqQueryMessage, protocol.RespQueryNotFound, nil, nil)
	if _, err := a.QueryMessageByID(context.Background(), uniq, "T"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("err %v, want ErrNotFound", err)
	}
}

func TestQueryMessageByKey(t *testing.T) {
	ns, ba, bb := twoBrokers(t)
	ns.reply(protocol.ReqGetRouteInfoByTopic, protocol.RespSuccess, nil,
		routeBody("C", 1, map[string]string{"broker-a": ba.addr(), "broker-b": bb.addr()}))
	ba.reply(protocol.ReqQueryMessage, protocol.RespSuccess, nil, append(
		stored(t, ba.addr(), 0, 3000, "T", "k other", "U1", "a-late"),
		stored(t, ba.addr(), 100, 2000, "T", "kk", "U2", "hash collision")...))
	bb.reply(protocol.ReqQueryMessage, protocol.RespSuccess, nil, stored(t, bb.addr(), 0, 1000, "T", "k", "U3", "b-early"))
	a := newAdmin(t, ns.addr())
	begin, end := time.UnixMilli(500), time.UnixMilli(5000)
	msgs, err := a.QueryMessageByKey(context.Background(), KeyQuery{Topic: "T", Key: "k", Begin: begin, End: end})
	if err != nil {
		t.Fatal(err)
	}
	var bodies []string
	for _, m := range msgs {
		bodies = append(bodies, string(m.Body))
	}
	if !reflect.DeepEqual(bodies, []string{"b-early", "a-late"}) {
		t.Fatalf("bodies %q", bodies)
	}
	want := map[string]string{"topic": "T", "key": "k", "maxNum": "64", "beginTimestamp": "500", "endTimestamp": "5000"}
	if got := ba.requests(protocol.ReqQueryMessage); len(got) != 1 || !reflect.DeepEqual(got[0].Ext, want) {
		t.Fatalf("request %+v\nwant %v", got, want)
	}

	msgs, err = a.QueryMessageByKey(context.Background(), KeyQuery{Topic: "T", Key: "k", Max: 1})
	if err != nil || len(msgs) != 1 || string(msgs[0].Body) != "b-early" {
		t.Fatalf("max 1: %v %v", msgs, err)
	}
	if _, err := a.QueryMessageByKey(context.Background(), KeyQuery{Topic: "T", Key: "k", Begin: end, End: begin}); !errors.Is(err, ErrBadArgument) {
		t.Fatalf("begin after end: %v", err)
	}
	ba.reply(protocol.ReqQueryMessage, protocol.RespSuccess, nil, []byte{0, 0, 0, 9, 1})
	if _, err := a.QueryMessageByKey(context.Background(), KeyQuery{Topic: "T", Key: "k"}); !errors.Is(err, message.ErrMalformedMessage) {
		t.Fatalf("malformed body: %v", err)
	}
}
