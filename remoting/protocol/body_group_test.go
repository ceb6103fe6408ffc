package protocol

import (
	"encoding/json"
	"testing"

	"github.com/runnelmq/runnel/groupconf"
)

// javaGroupBody is UPDATE_AND_CREATE_SUBSCRIPTIONGROUP's body as Java's
// mqadmin updateSubGroup sends it (fastjson of SubscriptionGroupConfig),
// with the fields Runnel does not keep.
const javaGroupBody = `{"brokerId":0,"consumeBroadcastEnable":false,"consumeEnable":false,"consumeFromMinEnable":true,` +
	`"consumeMessageOrderly":false,"consumeTimeoutMinute":20,"groupName":"g1","groupRetryPolicy":{"type":"CUSTOMIZED"},` +
	`"groupSysFlag":0,"notifyConsumerIdsChangedEnable":true,"retryMaxTimes":3,"retryQueueNums":1,` +
	`"subscriptionDataSet":[],"whichBrokerWhenConsumeSlowly":1,"attributes":{}}`

// TestSubscriptionGroupConfigWire pins the wire form: Java's field names
// both ways, and Java's defaults for what a body leaves out.
func TestSubscriptionGroupConfigWire(t *testing.T) {
	g := groupconf.New("")
	if err := json.Unmarshal([]byte(javaGroupBody), &g); err != nil {
		t.Fatal(err)
	}
	want := SubscriptionGroupConfig{GroupName: "g1", ConsumeEnable: false, ConsumeFromMinEnable: true, ConsumeBroadcastEnable: false,
		RetryQueueNums: 1, RetryMaxTimes: 3, BrokerID: 0, WhichBrokerWhenConsumeSlowly: 1,
		NotifyConsumerIdsChangedEnable: true, ConsumeTimeoutMinute: 20}
	if g != want {
		t.Fatalf("decoded %+v\nwant    %+v", g, want)
	}

	partial := groupconf.New("")
	if err := json.Unmarshal([]byte(`{"groupName":"g2","retryMaxTimes":5}`), &partial); err != nil {
		t.Fatal(err)
	}
	def := groupconf.New("g2")
	def.RetryMaxTimes = 5
	if partial != def {
		t.Fatalf("partial body decoded %+v, want defaults %+v", partial, def)
	}
	if d := groupconf.New("x"); !d.ConsumeEnable || !d.ConsumeFromMinEnable || !d.ConsumeBroadcastEnable ||
		d.RetryQueueNums != 1 || d.RetryMaxTimes != 16 || d.BrokerID != MasterID || d.WhichBrokerWhenConsumeSlowly != 1 ||
		!d.NotifyConsumerIdsChangedEnable || d.ConsumeTimeoutMinute != 15 || d.GroupSysFlag != 0 {
		t.Fatalf("defaults %+v are not Java's", d)
	}

	b, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(b, &fields); err != nil {
		t.Fatal(err)
	}
	names := []string{"groupName", "consumeEnable", "consumeFromMinEnable", "consumeBroadcastEnable", "retryQueueNums",
		"retryMaxTimes", "brokerId", "whichBrokerWhenConsumeSlowly", "notifyConsumerIdsChangedEnable", "groupSysFlag",
		"consumeTimeoutMinute"}
	if len(fields) != len(names) {
		t.Fatalf("encoded %s: %d fields, want %d", b, len(fields), len(names))
	}
	for _, n := range names {
		if _, ok := fields[n]; !ok {
			t.Errorf("encoded %s lacks %q", b, n)
		}
	}
}
