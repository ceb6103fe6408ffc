package broker

import (
	"encoding/json"
	"testing"

	"github.com/runnelmq/runnel/groupconf"
	"github.com/runnelmq/runnel/remoting/protocol"
)

func updateGroup(rc *rawClient, body string) *protocol.Command {
	rc.t.Helper()
	return rc.call(protocol.ReqUpdateAndCreateSubscriptionGroup, nil, []byte(body))
}

func allGroups(t *testing.T, rc *rawClient) map[string]protocol.SubscriptionGroupConfig {
	t.Helper()
	resp := rc.call(protocol.ReqGetAllSubscriptionGroupConfig, nil, nil)
	expect(t, resp, protocol.RespSuccess, "")
	var w protocol.SubscriptionGroupWrapper
	if err := json.Unmarshal(resp.Body, &w); err != nil {
		t.Fatal(err)
	}
	return w.SubscriptionGroupTable
}

func pull(rc *rawClient, group, topic string) *protocol.Command {
	rc.t.Helper()
	h := pullHeader(group, topic, 0, 0, 32, protocol.BuildPullSysFlag(false, false, true, false))
	h.SuspendTimeoutMillis = 0
	return rc.call(protocol.ReqPullMessage, h.Encode(), nil)
}

// TestSubscriptionGroupConfig: UPDATE_AND_CREATE_SUBSCRIPTIONGROUP stores
// a group's config over Java's defaults; GET_ALL lists it; consumeEnable
// false refuses the group's pulls with Java's answer and true lets them
// through; the config survives a restart; DELETE_SUBSCRIPTIONGROUP removes
// it; bad bodies and names are refused.
func TestSubscriptionGroupConfig(t *testing.T) {
	dir := t.TempDir()
	b := startBrokerAt(t, dir, nil)
	rc := newRawClient(t, b.Addr())
	rc.createTopic("GC", 1)
	expect(t, rc.send("GC", 0, "", "m"), protocol.RespSuccess, "")

	expect(t, updateGroup(rc, `{"groupName":"off","consumeEnable":false,"retryMaxTimes":3}`), protocol.RespSuccess, "")
	g := allGroups(t, rc)["off"]
	want := groupconf.New("off")
	want.ConsumeEnable, want.RetryMaxTimes = false, 3
	if g != want {
		t.Fatalf("stored config %+v, want %+v", g, want)
	}
	expect(t, pull(rc, "off", "GC"), protocol.RespNoPermission, "subscription group no permission, off")
	expect(t, pull(rc, "other", "GC"), protocol.RespSuccess, "")

	// A restart keeps it.
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b = startBrokerAt(t, dir, nil)
	rc = newRawClient(t, b.Addr())
	if g := allGroups(t, rc)["off"]; g != want {
		t.Fatalf("config after restart %+v, want %+v", g, want)
	}
	expect(t, pull(rc, "off", "GC"), protocol.RespNoPermission, "subscription group no permission")

	expect(t, updateGroup(rc, `{"groupName":"off","consumeEnable":true}`), protocol.RespSuccess, "")
	expect(t, pull(rc, "off", "GC"), protocol.RespSuccess, "")

	expect(t, updateGroup(rc, `{"groupName":"bad group"}`), protocol.RespInvalidParameter, "illegal characters")
	expect(t, updateGroup(rc, `{"groupName":"g","retryQueueNums":-1}`), protocol.RespInvalidParameter, "retryQueueNums -1")
	// Java's ints: the stored record once cut these to 32 bits.
	expect(t, updateGroup(rc, `{"groupName":"g","consumeTimeoutMinute":4294967311}`), protocol.RespInvalidParameter, "consumeTimeoutMinute 4294967311")
	expect(t, updateGroup(rc, `{"groupName":"g","groupSysFlag":-4294967296}`), protocol.RespInvalidParameter, "groupSysFlag -4294967296")
	expect(t, updateGroup(rc, `not json`), protocol.RespInvalidParameter, "not a SubscriptionGroupConfig")
	expect(t, updateGroup(rc, ``), protocol.RespInvalidParameter, "no SubscriptionGroupConfig")

	expect(t, rc.call(protocol.ReqDeleteSubscriptionGroup,
		protocol.DeleteSubscriptionGroupRequestHeader{GroupName: "off"}.Encode(), nil), protocol.RespSuccess, "")
	if _, ok := allGroups(t, rc)["off"]; ok {
		t.Fatal("the deleted group is still listed")
	}
	if _, configured := b.Core().GroupConfig("off"); configured {
		t.Fatal("the deleted group's config is still stored")
	}
}

// TestGroupRetryMaxTimes: a send-back that does not say how many times
// to retry takes the group's retryMaxTimes: 0 sends the message straight
// to the group's %DLQ%, while a group with the default (16) gets a retry.
func TestGroupRetryMaxTimes(t *testing.T) {
	b, _ := delayBroker(t, t.TempDir())
	rc := newRawClient(t, b.Addr())
	rc.createTopic("T", 1)
	phys, offID := sendProps(t, rc, "T", map[string]string{"UNIQ_KEY": "U1"}, "payload")

	expect(t, updateGroup(rc, `{"groupName":"strict","retryMaxTimes":0}`), protocol.RespSuccess, "")
	expect(t, sendBack(rc, phys, "strict", 0, -1, offID), protocol.RespSuccess, "")
	if got := queueMsgs(t, b, "%DLQ%strict", 0); len(got) != 1 || string(got[0].Body) != "payload" {
		t.Fatalf("%%DLQ%%strict holds %d messages, want the one sent back", len(got))
	}
	if _, ok := b.Core().Topic("%RETRY%strict"); !ok {
		t.Fatal("no retry topic for strict") // created before the limit is checked, as Java
	}

	expect(t, sendBack(rc, phys, "lenient", 0, -1, offID), protocol.RespSuccess, "")
	if _, ok := b.Core().Topic("%DLQ%lenient"); ok {
		t.Fatal("a group with the default retryMaxTimes went to the DLQ at once")
	}
	// The consumer's own limit still wins when it gives one.
	expect(t, sendBack(rc, phys, "strict", 0, 16, offID), protocol.RespSuccess, "")
	if got := queueMsgs(t, b, "%DLQ%strict", 0); len(got) != 1 {
		t.Fatalf("%%DLQ%%strict holds %d messages after a send-back with maxReconsumeTimes 16", len(got))
	}

	// retryQueueNums sizes a new retry topic.
	expect(t, updateGroup(rc, `{"groupName":"wide","retryQueueNums":3}`), protocol.RespSuccess, "")
	expect(t, rc.heartbeat("c1", "wide", protocol.BuildSubscriptionData("T", "*")), protocol.RespSuccess, "")
	if tc, ok := b.Core().Topic("%RETRY%wide"); !ok || tc.WriteQueueNums != 3 {
		t.Fatalf("retry topic of wide: %+v %v, want 3 queues", tc, ok)
	}
}

// TestGroupBroadcastDisabled: consumeBroadcastEnable false refuses the
// pulls of a broadcasting member, not of a clustering one.
func TestGroupBroadcastDisabled(t *testing.T) {
	_, rc := withTopic(t, "BC", 1)
	expect(t, updateGroup(rc, `{"groupName":"bc","consumeBroadcastEnable":false}`), protocol.RespSuccess, "")
	expect(t, rc.heartbeat("c1", "bc", protocol.BuildSubscriptionData("BC", "*")), protocol.RespSuccess, "")
	expect(t, pull(rc, "bc", "BC"), protocol.RespPullNotFound, "") // allowed: nothing there
	hb := protocol.HeartbeatData{ClientID: "c1", ConsumerDataSet: []protocol.ConsumerData{{
		GroupName: "bc", ConsumeType: protocol.ConsumePassively, MessageModel: "BroadCasting",
		ConsumeFromWhere: protocol.ConsumeFromFirstOffset, SubscriptionDataSet: []protocol.SubscriptionData{protocol.BuildSubscriptionData("BC", "*")},
	}}}
	body, err := hb.Encode()
	if err != nil {
		t.Fatal(err)
	}
	expect(t, rc.call(protocol.ReqHeartBeat, nil, body), protocol.RespSuccess, "")
	expect(t, pull(rc, "bc", "BC"), protocol.RespNoPermission, "the consumer group[bc] can not consume by broadcast way")
}
