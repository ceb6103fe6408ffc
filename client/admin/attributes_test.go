package admin

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/runnelmq/runnel/remoting/protocol"
)

func TestParseAttributes(t *testing.T) {
	for in, want := range map[string]map[string]string{
		"":                               {},
		"+message.type=FIFO":             {"+message.type": "FIFO"},
		"+a=b, +c=d,-e":                  {"+a": "b", "+c": "d", "-e": ""},
		"+reserve.time=3600,-queue.type": {"+reserve.time": "3600", "-queue.type": ""},
	} {
		got, err := ParseAttributes(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ParseAttributes(%q) = %v, %v; want %v", in, got, err, want)
		}
		if in != "" && FormatAttributes(got) != FormatAttributes(want) {
			t.Errorf("FormatAttributes(%v) = %q", got, FormatAttributes(got))
		}
	}
	for _, bad := range []string{"message.type=FIFO", "+message.type", "-a=b", "+=x", "+a=", "+a=1,+a=2", "a"} {
		if _, err := ParseAttributes(bad); !errors.Is(err, ErrBadArgument) {
			t.Errorf("ParseAttributes(%q) = %v, want ErrBadArgument", bad, err)
		}
	}
	if got := FormatAttributes(map[string]string{"+b": "2", "-c": "", "+a": "1"}); got != "+a=1,+b=2,-c" {
		t.Errorf("FormatAttributes: %q", got)
	}
}

func TestCheckTopicAttributes(t *testing.T) {
	for _, ok := range []string{"+message.type=FIFO", "+message.type=TRANSACTION", "+queue.type=BatchCQ", "+reserve.time=-1", "-cleanup.policy"} {
		a, _ := ParseAttributes(ok)
		if err := CheckTopicAttributes(a); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"+message.type=LIFO", "+color=red", "+reserve.time=-2", "+reserve.time=soon", "-colour"} {
		a, _ := ParseAttributes(bad)
		if err := CheckTopicAttributes(a); !errors.Is(err, ErrBadArgument) {
			t.Errorf("%s: %v, want ErrBadArgument", bad, err)
		}
	}
}

// A topic's attributes go in UPDATE_AND_CREATE_TOPIC's attributes header
// field, as Java's admin sends them; removing one from a new topic is
// refused before anything is sent.
func TestCreateTopicSendsAttributes(t *testing.T) {
	ns, ba, bb := twoBrokersCreatingTopics(t)
	a := newAdmin(t, ns.addr())
	attrs, _ := ParseAttributes("+message.type=FIFO")
	if _, err := a.CreateTopic(context.Background(), TopicSpec{Topic: "fifo", Attributes: attrs}); err != nil {
		t.Fatal(err)
	}
	for _, b := range []*fakeNode{ba, bb} {
		got := b.requests(protocol.ReqUpdateAndCreateTopic)
		var h protocol.CreateTopicRequestHeader
		if len(got) != 1 || h.Decode(got[0].Ext) != nil || h.Attributes != "+message.type=FIFO" {
			t.Fatalf("broker got %+v", got)
		}
	}
	del, _ := ParseAttributes("-message.type")
	if _, err := a.CreateTopic(context.Background(), TopicSpec{Topic: "fifo2", Attributes: del}); !errors.Is(err, ErrBadArgument) {
		t.Fatalf("removing an attribute of a new topic: %v", err)
	}
}

func TestParseRetryPolicy(t *testing.T) {
	for _, ok := range []string{`{"type":"EXPONENTIAL","exponentialRetryPolicy":{"initial":5000,"max":7200000,"multiplier":2}}`,
		`{"type":"CUSTOMIZED","customizedRetryPolicy":{"next":[1000,5000]}}`, `{}`} {
		raw, err := ParseRetryPolicy(ok)
		if err != nil || !json.Valid(raw) {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{`EXPONENTIAL`, `{"type":"LINEAR"}`, `[1,2]`} {
		if _, err := ParseRetryPolicy(bad); !errors.Is(err, ErrBadArgument) {
			t.Errorf("%s: %v, want ErrBadArgument", bad, err)
		}
	}
}

// UpdateGroupSettings sends RocketMQ 5's group fields in the body as a
// Java broker reads them, and keeps what a broker reports of them (a
// read-modify-write leaves a Java broker's orderly flag alone).
func TestUpdateGroupSettingsBody(t *testing.T) {
	ns, ba, _ := twoBrokers(t)
	ba.reply(protocol.ReqGetAllSubscriptionGroupConfig, protocol.RespSuccess, nil,
		[]byte(`{"subscriptionGroupTable":{"g":{"groupName":"g","consumeEnable":true,"consumeMessageOrderly":true,"retryMaxTimes":5}}}`))
	ba.reply(protocol.ReqUpdateAndCreateSubscriptionGroup, protocol.RespSuccess, nil, nil)
	a := newAdmin(t, ns.addr())
	policy, _ := ParseRetryPolicy(`{"type":"CUSTOMIZED","customizedRetryPolicy":{"next":[1000]}}`)
	attrs, _ := ParseAttributes("+x=y")
	if _, err := a.UpdateGroupSettings(context.Background(), "g", "", []string{"broker-a"}, func(g *GroupSettings) {
		g.RetryMaxTimes, g.GroupRetryPolicy, g.Attributes = 3, policy, attrs
	}); err != nil {
		t.Fatal(err)
	}
	got := ba.requests(protocol.ReqUpdateAndCreateSubscriptionGroup)
	var body map[string]any
	if len(got) != 1 || json.Unmarshal(got[0].Body, &body) != nil {
		t.Fatalf("broker got %+v", got)
	}
	rp, _ := body["groupRetryPolicy"].(map[string]any)
	at, _ := body["attributes"].(map[string]any)
	if body["consumeMessageOrderly"] != true || body["retryMaxTimes"] != 3.0 || rp["type"] != "CUSTOMIZED" || at["+x"] != "y" || body["groupName"] != "g" {
		t.Fatalf("body %s", got[0].Body)
	}
}
