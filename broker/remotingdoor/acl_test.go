package remotingdoor

import (
	"strings"
	"testing"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// tableDoor is a door with its handlers registered and no core: enough to
// read its table (whose entries reach the core only for the requests that
// look a stored message up).
func tableDoor(t *testing.T) *Door {
	t.Helper()
	srv, err := remoting.NewServer(remoting.ServerConfig{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	d := &Door{cluster: "C", srv: srv}
	d.registerHandlers()
	return d
}

// needsOf lists what codes says req needs, as "Topic:t Sub, Group:g Sub";
// a request the table does not map, or one it cannot read, fails the test.
func needsOf(t *testing.T, codes acl.Codes, name string, req *protocol.Command) string {
	t.Helper()
	fn := codes[req.Code]
	if fn == nil {
		t.Fatalf("%s: code %d not mapped", name, req.Code)
	}
	f := acl.Collect(req)
	defer f.Release()
	ns, err := fn(nil, req, f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = n.String()
	}
	return strings.Join(parts, ", ")
}

// TestEveryHandlerIsMapped walks every request code the door serves: each
// must have an entry in its access-control table, so that none is served
// with ACL on without a decision on what it needs (default deny would
// refuse it to everyone but an administrator, by accident). The table has
// no entry for a code the door does not serve either.
func TestEveryHandlerIsMapped(t *testing.T) {
	d := tableDoor(t)
	codes := d.aclCodes()
	served := map[int16]bool{}
	for _, code := range d.srv.Codes() {
		served[code] = true
		if codes[code] == nil {
			t.Errorf("request code %d (%s) is served but has no access-control mapping", code, protocol.RequestCodeName(code))
		}
	}
	if len(served) < 40 {
		t.Fatalf("only %d codes served: the walk saw the wrong server", len(served))
	}
	for code := range codes {
		if !served[code] {
			t.Errorf("request code %d (%s) is mapped but not served", code, protocol.RequestCodeName(code))
		}
	}
}

// TestNeeds checks what the requests clients send most need, as Java's
// DefaultAuthorizationContextBuilder reads them (moved here from
// acl/auth with the table; GET_BROKER_RUNTIME_INFO now needs Get on the
// cluster, issue 37).
func TestNeeds(t *testing.T) {
	hb, err := protocol.HeartbeatData{ClientID: "c", ConsumerDataSet: []protocol.ConsumerData{{GroupName: "g",
		SubscriptionDataSet: []protocol.SubscriptionData{{Topic: "t"}, {Topic: "%RETRY%g"}}}}}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	lock := protocol.LockBatchRequestBody{ConsumerGroup: "g", ClientID: "c", MQSet: []protocol.MessageQueue{
		{Topic: "t", BrokerName: "b", QueueID: 0}, {Topic: "t", BrokerName: "b", QueueID: 1}, {Topic: "u", BrokerName: "b"}}}.Encode()
	codes := tableDoor(t).aclCodes()
	for _, tc := range []struct {
		name string
		req  *protocol.Command
		want string
	}{
		{"send v2", protocol.NewRequest(protocol.ReqSendMessageV2, map[string]string{"b": "t"}, nil), "Topic:t Pub"},
		{"send v2 in the long-key form", protocol.NewRequest(protocol.ReqSendMessageV2, map[string]string{"topic": "t"}, nil), "Topic:t Pub"},
		{"send to a retry topic", protocol.NewRequest(protocol.ReqSendMessage, map[string]string{"topic": "%RETRY%g"}, nil), "Group:g Sub"},
		{"reply v2", protocol.NewRequest(protocol.ReqSendReplyMessageV2, map[string]string{"b": "t"}, nil), "Topic:t Pub"},
		{"pull", protocol.NewRequest(protocol.ReqPullMessage, map[string]string{"topic": "t", "consumerGroup": "g"}, nil), "Topic:t Sub, Group:g Sub"},
		{"lite pull", protocol.NewRequest(protocol.ReqLitePullMessage, map[string]string{"topic": "t", "consumerGroup": "g"}, nil), "Topic:t Sub, Group:g Sub"},
		{"pull a retry topic", protocol.NewRequest(protocol.ReqPullMessage, map[string]string{"topic": "%RETRY%g", "consumerGroup": "g"}, nil), "Group:g Sub"},
		{"pull another group's retry topic", protocol.NewRequest(protocol.ReqPullMessage, map[string]string{"topic": "%RETRY%h", "consumerGroup": "g"}, nil), "Group:h Sub, Group:g Sub"},
		{"heartbeat", protocol.NewRequest(protocol.ReqHeartBeat, nil, hb), "Group:g Sub, Topic:t Sub"},
		{"lock", protocol.NewRequest(protocol.ReqLockBatchMQ, nil, lock), "Group:g Sub, Topic:t Sub, Topic:u Sub"},
		{"unlock", protocol.NewRequest(protocol.ReqUnlockBatchMQ, nil, lock), "Group:g Sub, Topic:t Sub, Topic:u Sub"},
		{"commit offset", protocol.NewRequest(protocol.ReqUpdateConsumerOffset, map[string]string{"topic": "t", "consumerGroup": "g"}, nil), "Topic:t Sub,Update, Group:g Sub,Update"},
		{"create topic", protocol.NewRequest(protocol.ReqUpdateAndCreateTopic, map[string]string{"topic": "t"}, nil), "Topic:t Create"},
		{"delete group", protocol.NewRequest(protocol.ReqDeleteSubscriptionGroup, map[string]string{"groupName": "g"}, nil), "Group:g Delete"},
		{"reset offset", protocol.NewRequest(protocol.ReqInvokeBrokerToResetOffset, map[string]string{"topic": "t", "group": "g"}, nil), "Topic:t Update, Group:g Update"},
		{"clone offsets", protocol.NewRequest(protocol.ReqCloneGroupOffset, map[string]string{"srcGroup": "s", "destGroup": "d", "topic": "t"}, nil), "Group:s Get, Group:d Update, Topic:t Update"},
		{"clone offsets of every topic", protocol.NewRequest(protocol.ReqCloneGroupOffset, map[string]string{"srcGroup": "s", "destGroup": "d"}, nil), "Group:s Get, Group:d Update, Topic:* Update"},
		{"consume stats of a group", protocol.NewRequest(protocol.ReqGetConsumeStats, map[string]string{"consumerGroup": "g"}, nil), "Group:g Get"},
		{"broker config", protocol.NewRequest(protocol.ReqUpdateBrokerConfig, nil, nil), "Cluster:C Update"},
		{"list users", protocol.NewRequest(protocol.ReqAuthListUser, nil, nil), "Cluster:C Get"},
		{"runtime info", protocol.NewRequest(protocol.ReqGetBrokerRuntimeInfo, nil, nil), "Cluster:C Get"},
		{"all topic configs", protocol.NewRequest(protocol.ReqGetAllTopicConfig, nil, nil), "Cluster:C List"},
		{"producer unregister", protocol.NewRequest(protocol.ReqUnregisterClient, map[string]string{"producerGroup": "p"}, nil), ""},
		// A field whose value is empty is absent: it adds nothing to the
		// signed content, so anyone can add one to a signed request.
		{"producer unregister, an empty group added", protocol.NewRequest(protocol.ReqUnregisterClient, map[string]string{"producerGroup": "p", "consumerGroup": ""}, nil), ""},
		{"consumer unregister", protocol.NewRequest(protocol.ReqUnregisterClient, map[string]string{"consumerGroup": "g"}, nil), "Group:g Pub,Sub"},
	} {
		if got := needsOf(t, codes, tc.name, tc.req); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	for _, code := range []int16{protocol.ReqHeartBeat, protocol.ReqLockBatchMQ} {
		req := protocol.NewRequest(code, nil, []byte("{"))
		if _, err := codes[code](nil, req, acl.Collect(req)); err == nil {
			t.Errorf("code %d: a body that does not decode was read", code)
		}
	}
}

// TestPlainDecidesTheDoorsNeeds checks plain ACL on the door's needs, the
// cases of acl's TestCheck that read a request body (moved here with the
// table), and a body that does not decode: it needs an administrator.
func TestPlainDecidesTheDoorsNeeds(t *testing.T) {
	tb, err := acl.ParsePlain([]byte(`accounts:
  - {accessKey: RocketMQ, secretKey: "12345678", defaultTopicPerm: DENY, defaultGroupPerm: SUB,
     topicPerms: [topicA=DENY, topicB=PUB|SUB, topicC=SUB], groupPerms: [groupA=DENY, groupB=PUB|SUB]}
  - {accessKey: rocketmq2, secretKey: "12345678", admin: true}
`))
	if err != nil {
		t.Fatal(err)
	}
	cp := acl.NewCheckpoint(acl.Guard{tb}, tableDoor(t).aclCodes(), "C")
	heartbeat := func(group string) []byte {
		hb, _ := protocol.HeartbeatData{ClientID: "c", ConsumerDataSet: []protocol.ConsumerData{{
			GroupName: group, SubscriptionDataSet: []protocol.SubscriptionData{{Topic: "topicC"}}}}}.Encode()
		return hb
	}
	signed := func(ak string, code int16, ext map[string]string, body []byte) *protocol.Command {
		req := protocol.NewRequest(code, ext, body)
		if req.ExtFields == nil {
			req.ExtFields = map[string]string{}
		}
		acl.Credentials{AccessKey: ak, SecretKey: "12345678"}.Sign(req)
		return req
	}
	const local = "127.0.0.1:50000"
	for _, tc := range []struct {
		name string
		req  *protocol.Command
		want string // "" passes
	}{
		{"heartbeat denied group", signed("RocketMQ", protocol.ReqHeartBeat, nil, heartbeat("groupA")), "No permission for group:groupA"},
		{"heartbeat granted", signed("RocketMQ", protocol.ReqHeartBeat, nil, heartbeat("groupB")), ""},
		{"heartbeat garbage", signed("RocketMQ", protocol.ReqHeartBeat, nil, []byte("{")),
			"Need admin permission for request code=34, but accessKey=RocketMQ is not"},
		{"heartbeat garbage from the admin", signed("rocketmq2", protocol.ReqHeartBeat, nil, []byte("{")), ""},
		{"a code the door does not serve", signed("RocketMQ", 9999, nil, nil),
			"Need admin permission for request code=9999, but accessKey=RocketMQ is not"},
		{"runtime info", signed("RocketMQ", protocol.ReqGetBrokerRuntimeInfo, nil, nil),
			"Need admin permission for request code=28, but accessKey=RocketMQ is not"},
		{"offsets of a denied topic: plain ACL has no read right", signed("RocketMQ", protocol.ReqGetMaxOffset, map[string]string{"topic": "topicA"}, nil), ""},
		{"lite pull denied topic", signed("RocketMQ", protocol.ReqLitePullMessage, map[string]string{"topic": "topicA", "consumerGroup": "groupB"}, nil),
			"No permission for topic:topicA"},
		{"v2 send in the long-key form", signed("RocketMQ", protocol.ReqSendMessageV2, map[string]string{"topic": "topicA"}, nil),
			"No permission for topic:topicA"},
	} {
		err := cp.Check(local, tc.req)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.want != "" && (err == nil || err.(*acl.Error).Msg != tc.want):
			t.Errorf("%s: %v, want refusal %q", tc.name, err, tc.want)
		}
	}
}
