package admin

import (
	"context"
	"testing"

	"github.com/runnelmq/runnel/remoting/protocol"
)

func TestGroupSettingsKeepRocketMQ5Fields(t *testing.T) {
	b := startFake(t)
	b.reply(protocol.ReqGetAllSubscriptionGroupConfig, protocol.RespSuccess, nil, []byte(`{"subscriptionGroupTable":{
		"fifo":{"groupName":"fifo","consumeEnable":false,"retryMaxTimes":3,"consumeMessageOrderly":true,
		        "groupRetryPolicy":{"type":"EXPONENTIAL","exponentialRetryPolicy":{"initial":1000,"max":60000,"multiplier":2}}},
		"plain":{"groupName":"plain","consumeEnable":true,"retryMaxTimes":16}}}`))
	a := newAdmin(t, "127.0.0.1:1")
	n := Node{Name: "broker-a", Addr: b.addr()}
	s, found, err := a.GroupSettings(context.Background(), n, "fifo")
	if err != nil || !found || s.ConsumeEnable || s.RetryMaxTimes != 3 || s.ConsumeMessageOrderly == nil || !*s.ConsumeMessageOrderly ||
		len(s.RetryPolicy) == 0 || s.RetryQueueNums != 1 {
		t.Fatalf("fifo: %+v %v %v", s, found, err)
	}
	s, found, err = a.GroupSettings(context.Background(), n, "plain")
	if err != nil || !found || s.ConsumeMessageOrderly != nil || len(s.RetryPolicy) != 0 || !s.ConsumeEnable {
		t.Fatalf("plain: %+v %v %v", s, found, err)
	}
	if s, found, err := a.GroupSettings(context.Background(), n, "nobody"); err != nil || found || s.RetryMaxTimes != 16 || s.GroupName != "nobody" {
		t.Fatalf("unknown group: %+v %v %v", s, found, err)
	}
}
