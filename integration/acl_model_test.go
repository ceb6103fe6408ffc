package integration

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/acl/auth"
	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/client"
	ouradmin "github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/clitest"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/namesrv"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// The security trial's accounts (issue 37), on both models: an
// administrator (plain ACL's admin account, ACL 2.0's super user), "user"
// allowed to publish to topicAllowed and nothing else (plain: PUB|SUB on
// it, DENY elsewhere; ACL 2.0: a Normal user allowed Pub on it), and
// "nobody", an account with no rights at all. topicSecret holds messages
// none of them but the administrator may touch; groupVictims is another
// group's, online.
const (
	modelAdminAK, modelAdminSK = "holeAdmin", "holeAdminSecret1"
	modelUserAK, modelUserSK   = "mallory", "mallorySecret1"
	nobodyAK, nobodySK         = "nobody1", "nobodySecret1"
	// The account a broker of the ACL 2.0 model signs its own requests with
	// (innerClientAuthenticationCredentials), which its name server knows.
	modelInnerAK, modelInnerSK = "brokerInner", "brokerInnerSecret1"

	topicAllowed, topicSecret = "topicAllowed", "topicSecret"
	groupVictims              = "victims"
)

// aclModel is a cluster whose broker and name server check one model.
type aclModel struct {
	name              string // "plain" or "v2"
	c                 *cluster.Cluster
	admin, user, none acl.Credentials
	secretOffsets     []int64 // commit log offsets of the messages in topicSecret
}

// refused reports whether resp is the model's access-control refusal (not
// a handler's error): plain ACL's SYSTEM_ERROR with an AclException, ACL
// 2.0's NO_PERMISSION with one of its authentication or authorization
// remarks.
func (m *aclModel) refused(resp *protocol.Command) bool {
	if m.name == "plain" {
		return resp.Code == protocol.RespSystemError && strings.HasPrefix(resp.Remark, aclRemarkPrefix)
	}
	return resp.Code == protocol.RespNoPermission && (strings.Contains(resp.Remark, " has no permission to access ") ||
		strings.HasPrefix(resp.Remark, "User:") || resp.Remark == "username cannot be null." || resp.Remark == "check signature failed.")
}

// startModels starts a cluster of each model, with the accounts, both
// topics and three messages in topicSecret (sent by the administrator).
func startModels(t *testing.T) []*aclModel {
	t.Helper()
	return []*aclModel{startPlainModel(t), startV2Model(t)}
}

func startPlainModel(t *testing.T) *aclModel {
	t.Helper()
	yaml := fmt.Sprintf(`accounts:
  - {accessKey: %s, secretKey: %s, admin: true}
  - {accessKey: %s, secretKey: %s, defaultTopicPerm: DENY, defaultGroupPerm: DENY, topicPerms: [%s=PUB|SUB]}
  - {accessKey: %s, secretKey: %s, defaultTopicPerm: DENY, defaultGroupPerm: DENY}
`, modelAdminAK, modelAdminSK, modelUserAK, modelUserSK, topicAllowed, nobodyAK, nobodySK)
	// The name server checks the same file: the broker signs as the admin.
	c, _ := startACLCluster(t, yaml, yaml, cluster.Configure(func(_ int, cfg *config.Config) {
		cfg.Credentials = acl.Credentials{AccessKey: modelAdminAK, SecretKey: modelAdminSK}
	}))
	m := &aclModel{name: "plain", c: c,
		admin: acl.Credentials{AccessKey: modelAdminAK, SecretKey: modelAdminSK},
		user:  acl.Credentials{AccessKey: modelUserAK, SecretKey: modelUserSK},
		none:  acl.Credentials{AccessKey: nobodyAK, SecretKey: nobodySK}}
	m.seed(t)
	return m
}

func startV2Model(t *testing.T) *aclModel {
	t.Helper()
	root := protocol.UserInfo{Username: modelAdminAK, Password: modelAdminSK}
	inner := acl.Credentials{AccessKey: modelInnerAK, SecretKey: modelInnerSK}
	c := cluster.Start(t,
		cluster.ConfigureNamesrv(func(cfg *namesrv.Config) {
			cfg.Auth = auth.Config{AuthenticationEnabled: true, AuthorizationEnabled: true,
				InitUsers: []protocol.UserInfo{root}, InnerCredentials: inner}
		}),
		cluster.Configure(func(_ int, cfg *config.Config) {
			cfg.Auth.AuthenticationEnabled, cfg.Auth.AuthorizationEnabled = true, true
			cfg.Auth.InitUsers = []protocol.UserInfo{root}
			cfg.Auth.InnerCredentials = inner // the broker signs its registrations with it
		}))
	m := &aclModel{name: "v2", c: c,
		admin: acl.Credentials{AccessKey: modelAdminAK, SecretKey: modelAdminSK},
		user:  acl.Credentials{AccessKey: modelUserAK, SecretKey: modelUserSK},
		none:  acl.Credentials{AccessKey: nobodyAK, SecretKey: nobodySK}}
	a := aclAdmin(t, c, modelAdminAK, modelAdminSK)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, u := range []protocol.UserInfo{{Username: modelUserAK, Password: modelUserSK}, {Username: nobodyAK, Password: nobodySK}} {
		if _, err := a.CreateUser(ctx, ouradmin.Where{}, u); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.CreateACL(ctx, ouradmin.Where{}, protocol.ACLInfo{Subject: "User:" + modelUserAK, Policies: []protocol.PolicyInfo{{
		Entries: []protocol.PolicyEntryInfo{{Resource: "Topic:" + topicAllowed, Actions: []string{"Pub"}, Decision: "Allow"}}}}}); err != nil {
		t.Fatal(err)
	}
	m.seed(t)
	return m
}

// seed creates both topics and sends three messages to topicSecret as the
// administrator.
func (m *aclModel) seed(t *testing.T) {
	t.Helper()
	createTopicsAs(t, m.c, m.admin.AccessKey, m.admin.SecretKey, topicAllowed, topicSecret)
	p := rcProducerWith(t, m.c, func(cfg *client.ProducerConfig) { cfg.Client.Credentials = m.admin })
	for i := range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		res, err := p.Send(ctx, &client.Message{Topic: topicSecret, Body: []byte(fmt.Sprint("secret ", i))})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		_, off, err := message.ParseOffsetMsgID(res.OffsetMsgID)
		if err != nil {
			t.Fatal(err)
		}
		m.secretOffsets = append(m.secretOffsets, off)
	}
}

// wantRefused checks that resp is the model's access-control refusal.
func (m *aclModel) wantRefused(t *testing.T, what string, resp *protocol.Command) {
	t.Helper()
	if !m.refused(resp) {
		t.Errorf("%s: %s: answered %d %q, want an access-control refusal", m.name, what, resp.Code, resp.Remark)
	}
}

// onlineGroup registers groupVictims, subscribed to topicSecret, over a
// connection the administrator keeps open until the test ends.
func (m *aclModel) onlineGroup(t *testing.T) {
	t.Helper()
	cl := remoting.NewClient(remoting.ClientConfig{Interceptors: m.admin.Interceptor()})
	t.Cleanup(func() { _ = cl.Close() })
	hb, err := protocol.HeartbeatData{ClientID: "victim-1", ConsumerDataSet: []protocol.ConsumerData{{
		GroupName: groupVictims, ConsumeType: "CONSUME_PASSIVELY", MessageModel: "CLUSTERING", ConsumeFromWhere: "CONSUME_FROM_FIRST_OFFSET",
		SubscriptionDataSet: []protocol.SubscriptionData{{Topic: topicSecret, SubString: "*", ExpressionType: "TAG"}}}}}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if resp := clitest.Invoke(t, cl, m.c.BrokerAddr(0), protocol.NewRequest(protocol.ReqHeartBeat, nil, hb)); resp.Code != protocol.RespSuccess {
		t.Fatalf("%s: the victims' heartbeat: %d %q", m.name, resp.Code, resp.Remark)
	}
}

func pullExt(group, topic string) map[string]string {
	return map[string]string{"consumerGroup": group, "topic": topic, "queueId": "0", "queueOffset": "0",
		"maxMsgNums": "32", "sysFlag": "0", "commitOffset": "0", "suspendTimeoutMillis": "0", "subVersion": "0"}
}

// secretQueues is the queues of topicSecret on the model's broker.
func (m *aclModel) secretQueues() []protocol.MessageQueue {
	return []protocol.MessageQueue{{Topic: topicSecret, BrokerName: m.c.BrokerName(0), QueueID: 0},
		{Topic: topicSecret, BrokerName: m.c.BrokerName(0), QueueID: 1}}
}

// TestACLHolesClosed replays issue 37's security trial on both models: a
// normal account (allowed to publish to one topic) sends raw, correctly
// signed requests against a topic and group it was not granted. Each one
// is refused before its handler runs, and what it would have changed is
// unchanged; the administrator's same request is served, so the refusal
// is access control's and not the request's.
func TestACLHolesClosed(t *testing.T) {
	for _, m := range startModels(t) {
		t.Run(m.name, func(t *testing.T) {
			m.onlineGroup(t)
			b := m.c.BrokerAddr(0)
			core := m.c.Broker(0).Core()

			// LITE_PULL_MESSAGE of a forbidden topic with an online group:
			// no messages come back.
			lite := func() *protocol.Command {
				return protocol.NewRequest(protocol.ReqLitePullMessage, pullExt(groupVictims, topicSecret), nil)
			}
			resp := clitest.Call(t, b, m.user, lite())
			m.wantRefused(t, "LITE_PULL_MESSAGE", resp)
			if len(resp.Body) != 0 {
				t.Errorf("%s: the refused lite pull carried %d bytes", m.name, len(resp.Body))
			}
			if resp := clitest.Call(t, b, m.admin, lite()); resp.Code != protocol.RespSuccess || len(resp.Body) == 0 {
				t.Errorf("%s: the administrator's lite pull: %d %q", m.name, resp.Code, resp.Remark)
			}

			// SEND_REPLY_MESSAGE(_V2) into a forbidden topic: refused before
			// anything is stored.
			before := stored(m.c, topicSecret)
			h := protocol.SendMessageRequestHeader{ProducerGroup: "pg", Topic: topicSecret, DefaultTopic: "TBW102",
				DefaultTopicQueueNums: 4, BornTimestamp: time.Now().UnixMilli(), MaxReconsumeTimes: -1}
			for _, code := range []int16{protocol.ReqSendReplyMessage, protocol.ReqSendReplyMessageV2} {
				ext := h.Encode()
				if code == protocol.ReqSendReplyMessageV2 {
					ext = h.EncodeV2()
				}
				m.wantRefused(t, protocol.RequestCodeName(code), clitest.Call(t, b, m.user, protocol.NewRequest(code, ext, []byte("reply"))))
			}
			if n := stored(m.c, topicSecret); n != before {
				t.Errorf("%s: %s holds %d messages after the refused replies, had %d", m.name, topicSecret, n, before)
			}

			// VIEW_MESSAGE_BY_ID with no topic: the stored message's topic
			// decides.
			view := func() *protocol.Command {
				return protocol.NewRequest(protocol.ReqViewMessageByID, map[string]string{"offset": strconv.FormatInt(m.secretOffsets[0], 10)}, nil)
			}
			resp = clitest.Call(t, b, m.user, view())
			m.wantRefused(t, "VIEW_MESSAGE_BY_ID", resp)
			if len(resp.Body) != 0 {
				t.Errorf("%s: the refused view carried %d bytes", m.name, len(resp.Body))
			}
			if resp := clitest.Call(t, b, m.admin, view()); resp.Code != protocol.RespSuccess || len(resp.Body) == 0 {
				t.Errorf("%s: the administrator's view: %d %q", m.name, resp.Code, resp.Remark)
			}
			// Naming a topic it may use changes nothing: the message is
			// topicSecret's.
			named := view()
			named.ExtFields["topic"] = topicAllowed
			m.wantRefused(t, "VIEW_MESSAGE_BY_ID naming another topic", clitest.Call(t, b, m.user, named))

			// LOCK_BATCH_MQ and UNLOCK_BATCH_MQ of another group's queues.
			lockBody := protocol.LockBatchRequestBody{ConsumerGroup: groupVictims, ClientID: "mallory-1", MQSet: m.secretQueues()}.Encode()
			for _, code := range []int16{protocol.ReqLockBatchMQ, protocol.ReqUnlockBatchMQ} {
				m.wantRefused(t, protocol.RequestCodeName(code), clitest.Call(t, b, m.user, protocol.NewRequest(code, nil, lockBody)))
			}
			for _, mq := range m.secretQueues() {
				if owner, ok := m.c.Broker(0).LockOwner(groupVictims, mq); ok {
					t.Errorf("%s: queue %d locked by %s", m.name, mq.QueueID, owner)
				}
			}

			// CLONE_GROUP_OFFSET and INVOKE_BROKER_TO_RESET_OFFSET.
			commit := protocol.NewRequest(protocol.ReqUpdateConsumerOffset, map[string]string{
				"consumerGroup": groupVictims, "topic": topicSecret, "queueId": "0", "commitOffset": "1"}, nil)
			if resp := clitest.Call(t, b, m.admin, commit); resp.Code != protocol.RespSuccess {
				t.Fatalf("%s: the administrator's commit: %d %q", m.name, resp.Code, resp.Remark)
			}
			m.wantRefused(t, "CLONE_GROUP_OFFSET", clitest.Call(t, b, m.user, protocol.NewRequest(protocol.ReqCloneGroupOffset,
				map[string]string{"srcGroup": groupVictims, "destGroup": "mine", "topic": topicSecret, "offline": "true"}, nil)))
			m.wantRefused(t, "INVOKE_BROKER_TO_RESET_OFFSET", clitest.Call(t, b, m.user, protocol.NewRequest(protocol.ReqInvokeBrokerToResetOffset,
				map[string]string{"topic": topicSecret, "group": groupVictims, "timestamp": "0", "isForce": "true"}, nil)))
			if off, ok := core.ConsumerOffset(groupVictims, topicSecret, 0); !ok || off != 1 {
				t.Errorf("%s: the victims' offset is %d (%v), want the committed 1", m.name, off, ok)
			}
			if _, ok := core.ConsumerOffset("mine", topicSecret, 0); ok {
				t.Errorf("%s: the victims' offsets were cloned", m.name)
			}

			// The broker-wide listings: Get or List on the cluster.
			for _, code := range []int16{protocol.ReqGetBrokerConfig, protocol.ReqGetAllTopicConfig,
				protocol.ReqGetAllConsumerOffset, protocol.ReqGetBrokerRuntimeInfo} {
				m.wantRefused(t, protocol.RequestCodeName(code), clitest.Call(t, b, m.user, protocol.NewRequest(code, nil, nil)))
				if resp := clitest.Call(t, b, m.admin, protocol.NewRequest(code, nil, nil)); resp.Code != protocol.RespSuccess {
					t.Errorf("%s: the administrator's %s: %d %q", m.name, protocol.RequestCodeName(code), resp.Code, resp.Remark)
				}
			}
		})
	}
}

// TestACLNamesrvClosedToStrangers: on both models, the name server refuses
// what changes its routes unless the administrator or the brokers' own
// account signs it — an unsigned registration re-pointing the broker, a
// write-permission wipe, a route deletion, from a stranger or from the
// normal account — while the broker's own signed registration went
// through (its routes are there) and route queries stay open.
func TestACLNamesrvClosedToStrangers(t *testing.T) {
	for _, m := range startModels(t) {
		t.Run(m.name, func(t *testing.T) {
			ns := m.c.NamesrvAddr()
			bname := m.c.BrokerName(0)
			cluster := m.c.Broker(0).Config().ClusterName
			route := func() *protocol.TopicRouteData {
				t.Helper()
				resp := clitest.Call(t, ns, m.user, protocol.NewRequest(protocol.ReqGetRouteInfoByTopic, map[string]string{"topic": topicSecret}, nil))
				if resp.Code != protocol.RespSuccess {
					t.Fatalf("%s: route query: %d %q", m.name, resp.Code, resp.Remark)
				}
				r, err := protocol.DecodeTopicRouteData(resp.Body)
				if err != nil {
					t.Fatal(err)
				}
				return r
			}
			before := route()
			if len(before.BrokerDatas) != 1 || before.BrokerDatas[0].MasterAddr() != m.c.BrokerAddr(0) {
				t.Fatalf("%s: the broker's signed registration did not go through: %+v", m.name, before.BrokerDatas)
			}
			reg := protocol.RegisterBrokerRequestHeader{BrokerAddr: "10.9.9.9:10911", BrokerName: bname, ClusterName: cluster}
			rb := protocol.RegisterBrokerBody{TopicConfigSerializeWrapper: protocol.TopicConfigSerializeWrapper{
				TopicConfigTable: map[string]protocol.TopicConfig{topicSecret: {TopicName: topicSecret, ReadQueueNums: 2, WriteQueueNums: 2, Perm: 6}}}}
			body, err := rb.Encode()
			if err != nil {
				t.Fatal(err)
			}
			for _, creds := range []acl.Credentials{{}, m.user, m.none} {
				who := "unsigned"
				if !creds.Empty() {
					who = creds.AccessKey
				}
				for _, req := range []*protocol.Command{
					protocol.NewRequest(protocol.ReqRegisterBroker, reg.Encode(), body),
					protocol.NewRequest(protocol.ReqUnregisterBroker, protocol.UnregisterBrokerRequestHeader{
						ClusterName: cluster, BrokerAddr: m.c.BrokerAddr(0), BrokerName: bname}.Encode(), nil),
					protocol.NewRequest(protocol.ReqWipeWritePermOfBroker, map[string]string{"brokerName": bname}, nil),
					protocol.NewRequest(protocol.ReqDeleteTopicInNameSrv, map[string]string{"topic": topicSecret}, nil),
				} {
					m.wantRefused(t, who+" "+protocol.RequestCodeName(req.Code), clitest.Call(t, ns, creds, req))
				}
			}
			after := route()
			if len(after.BrokerDatas) != 1 || after.BrokerDatas[0].MasterAddr() != m.c.BrokerAddr(0) ||
				len(after.QueueDatas) != 1 || after.QueueDatas[0].Perm != before.QueueDatas[0].Perm {
				t.Errorf("%s: the routes changed: %+v %+v", m.name, after.BrokerDatas, after.QueueDatas)
			}
			// Route queries stay open: to any signed account with plain ACL
			// (its file holds every account), to anyone with ACL 2.0 (its
			// users are the brokers').
			resp := clitest.Call(t, ns, acl.Credentials{}, protocol.NewRequest(protocol.ReqGetRouteInfoByTopic, map[string]string{"topic": topicSecret}, nil))
			if open := resp.Code == protocol.RespSuccess; open != (m.name == "v2") {
				t.Errorf("%s: unsigned route query: %d %q", m.name, resp.Code, resp.Remark)
			}
			// The administrator may.
			if resp := clitest.Call(t, ns, m.admin, protocol.NewRequest(protocol.ReqWipeWritePermOfBroker, map[string]string{"brokerName": "no-such-broker"}, nil)); resp.Code != protocol.RespSuccess {
				t.Errorf("%s: the administrator's wipe: %d %q", m.name, resp.Code, resp.Remark)
			}
		})
	}
}

// TestACLEmptyFieldIsAbsent: an ext field with an empty value adds nothing
// to RocketMQ's signed content, so it can be slipped into a signed request
// unnoticed; with ACL on it counts as absent. A send signed with its topic
// under the long key "topic" and an empty "b" added after signing is
// decided on "topic" (refused: topicSecret), as a V2 send naming its topic
// under the long key alone is (plain ACL read "b" only and let it through
// to be stored); an empty field added to a permitted send leaves it
// permitted. Nothing refused is stored.
func TestACLEmptyFieldIsAbsent(t *testing.T) {
	for _, m := range startModels(t) {
		t.Run(m.name, func(t *testing.T) {
			b := m.c.BrokerAddr(0)
			h := protocol.SendMessageRequestHeader{ProducerGroup: "pg", DefaultTopic: "TBW102",
				DefaultTopicQueueNums: 4, BornTimestamp: time.Now().UnixMilli(), MaxReconsumeTimes: -1}
			// signed is a send signed by the user, then given extra fields.
			signed := func(ext map[string]string, extra map[string]string) *protocol.Command {
				req := protocol.NewRequest(protocol.ReqSendMessageV2, ext, []byte("body"))
				m.user.Sign(req)
				for k, v := range extra {
					req.ExtFields[k] = v
				}
				return req
			}
			long := func(topic string) map[string]string { h := h; h.Topic = topic; return h.Encode() }
			short := func(topic string) map[string]string { h := h; h.Topic = topic; return h.EncodeV2() }
			before := stored(m.c, topicSecret)
			m.wantRefused(t, "V2 send, long keys", clitest.Call(t, b, acl.Credentials{}, signed(long(topicSecret), nil)))
			m.wantRefused(t, "V2 send, long keys, empty b added", clitest.Call(t, b, acl.Credentials{}, signed(long(topicSecret), map[string]string{"b": ""})))
			if n := stored(m.c, topicSecret); n != before {
				t.Errorf("%s: %s holds %d messages, had %d", m.name, topicSecret, n, before)
			}
			allowedBefore := stored(m.c, topicAllowed)
			if resp := clitest.Call(t, b, acl.Credentials{}, signed(short(topicAllowed), map[string]string{"topic": "", "properties": ""})); resp.Code != protocol.RespSuccess {
				t.Errorf("%s: a permitted send with empty fields added: %d %q", m.name, resp.Code, resp.Remark)
			}
			if n := stored(m.c, topicAllowed); n != allowedBefore+1 {
				t.Errorf("%s: %s holds %d messages, want %d", m.name, topicAllowed, n, allowedBefore+1)
			}
		})
	}
}

// Requests any authenticated client may send, which default deny leaves
// open, and why.
var (
	// openEverywhere are open on both models.
	openEverywhere = map[string]string{
		"producer heartbeat":  "a producer's HEART_BEAT names no consumer group: it says only that the caller is there",
		"producer unregister": "a producer's UNREGISTER_CLIENT names no consumer group: it says only that the caller is gone",
	}
	// openNamesrv are the name server's route queries: open to any signed
	// account of plain_acl.yml, to anyone with ACL 2.0 (its users live in
	// the brokers' stores, which the name server cannot see).
	openNamesrv = map[int16]string{
		protocol.ReqGetRouteInfoByTopic:           "clients find a topic's brokers with it",
		protocol.ReqGetBrokerClusterInfo:          "clients and tools find the brokers with it",
		protocol.ReqGetAllTopicListFromNameServer: "tools list topics with it; it holds names only",
		protocol.ReqGetTopicsByCluster:            "tools list a cluster's topics with it; it holds names only",
	}
	// openPlain need Get alone on a topic or group: plain ACL has no read
	// right (its PUB and SUB are a topic's two uses), and, like Java's
	// PlainAccessResource, lets any signed account read a topic's or a
	// group's metadata and offsets. ACL 2.0 refuses them without Get.
	openPlain = map[int16]string{
		protocol.ReqGetMaxOffset: "", protocol.ReqGetMinOffset: "", protocol.ReqSearchOffsetByTimestamp: "",
		protocol.ReqGetEarliestMsgStoreTime: "", protocol.ReqGetTopicStatsInfo: "", protocol.ReqGetTopicConfig: "",
		protocol.ReqQueryTopicConsumeByWho: "", protocol.ReqGetConsumeStats: "", protocol.ReqGetConsumerConnectionList: "",
		protocol.ReqGetConsumerRunningInfo: "", protocol.ReqInvokeBrokerToGetConsumerStatus: "",
	}
)

// TestACLDefaultDeny sends every request code the broker and the name
// server serve (their registered handlers, walked) as an account with no
// rights, on both models, each naming topicSecret, groupVictims, a message
// of topicSecret and the cluster where it names any: each is refused by
// access control before its handler, but the few listed open above,
// which are let through (and then answered by their handler).
func TestACLDefaultDeny(t *testing.T) {
	for _, m := range startModels(t) {
		t.Run(m.name, func(t *testing.T) {
			cluster := m.c.Broker(0).Config().ClusterName
			off := strconv.FormatInt(m.secretOffsets[0], 10)
			// ext names every resource any request reads, under every key.
			ext := map[string]string{
				"topic": topicSecret, "b": topicSecret, "a": "pg", "consumerGroup": groupVictims, "group": groupVictims,
				"groupName": groupVictims, "srcGroup": groupVictims, "destGroup": groupVictims, "producerGroup": "pg",
				"offset": off, "commitLogOffset": off, "tranStateTableOffset": "0", "queueId": "0", "queueOffset": "0",
				"maxMsgNums": "1", "sysFlag": "0", "commitOffset": "0", "suspendTimeoutMillis": "0", "subVersion": "0",
				"clusterName": cluster, "cluster": cluster, "brokerName": m.c.BrokerName(0), "brokerAddr": m.c.BrokerAddr(0),
				"brokerId": "0", "timestamp": "0", "key": "k", "maxNum": "1", "beginTimestamp": "0", "endTimestamp": "0",
				"clientId": "c", "msgId": "x", "username": "u", "subject": "User:u", "readQueueNums": "1", "writeQueueNums": "1", "perm": "6",
			}
			consumerHB, err := protocol.HeartbeatData{ClientID: "c", ConsumerDataSet: []protocol.ConsumerData{{GroupName: groupVictims,
				SubscriptionDataSet: []protocol.SubscriptionData{{Topic: topicSecret, SubString: "*"}}}}}.Encode()
			if err != nil {
				t.Fatal(err)
			}
			bodies := map[int16][]byte{
				protocol.ReqHeartBeat:     consumerHB,
				protocol.ReqLockBatchMQ:   protocol.LockBatchRequestBody{ConsumerGroup: groupVictims, ClientID: "c", MQSet: m.secretQueues()}.Encode(),
				protocol.ReqUnlockBatchMQ: protocol.LockBatchRequestBody{ConsumerGroup: groupVictims, ClientID: "c", MQSet: m.secretQueues()}.Encode(),
			}
			for _, srv := range []struct {
				name  string
				addr  string
				codes []int16
				open  map[int16]string
			}{
				{"broker", m.c.BrokerAddr(0), m.c.Broker(0).Remoting().Server().Codes(), map[int16]string{}},
				{"namesrv", m.c.NamesrvAddr(), m.c.Namesrv().Codes(), openNamesrv},
			} {
				if len(srv.codes) < 10 {
					t.Fatalf("%s serves %d codes: the walk saw the wrong server", srv.name, len(srv.codes))
				}
				for _, code := range srv.codes {
					req := protocol.NewRequest(code, maps.Clone(ext), bodies[code])
					resp := clitest.Call(t, srv.addr, m.none, req)
					_, open := srv.open[code]
					if srv.name == "broker" && m.name == "plain" {
						_, open = openPlain[code]
					}
					what := fmt.Sprintf("%s %s (%d)", srv.name, protocol.RequestCodeName(code), code)
					switch {
					case open && m.refused(resp):
						t.Errorf("%s: %s is open, refused: %q", m.name, what, resp.Remark)
					case !open && !m.refused(resp):
						t.Errorf("%s: %s by an account with no rights: answered %d %q, want refused", m.name, what, resp.Code, resp.Remark)
					}
				}
			}
			// The open ones that name no consumer group.
			producerHB, err := protocol.HeartbeatData{ClientID: "c", ProducerDataSet: []protocol.ProducerData{{GroupName: "pg"}}}.Encode()
			if err != nil {
				t.Fatal(err)
			}
			for name, req := range map[string]*protocol.Command{
				"producer heartbeat":  protocol.NewRequest(protocol.ReqHeartBeat, nil, producerHB),
				"producer unregister": protocol.NewRequest(protocol.ReqUnregisterClient, map[string]string{"clientID": "c", "producerGroup": "pg"}, nil),
			} {
				if resp := clitest.Call(t, m.c.BrokerAddr(0), m.none, req); resp.Code != protocol.RespSuccess {
					t.Errorf("%s: %s (%s): %d %q", m.name, name, openEverywhere[name], resp.Code, resp.Remark)
				}
			}
			// Nothing the refused requests would have changed has changed.
			if n := stored(m.c, topicSecret); n != int64(len(m.secretOffsets)) {
				t.Errorf("%s: %s holds %d messages, want %d", m.name, topicSecret, n, len(m.secretOffsets))
			}
			if _, ok := m.c.Broker(0).Core().Topic(topicSecret); !ok {
				t.Errorf("%s: %s was deleted", m.name, topicSecret)
			}
		})
	}
}

// TestACLEndTransactionOnItsTopic: END_TRANSACTION names no topic (the
// official Go client's header has none), so access control decides on the
// half message it ends: Pub on its real topic. The account that may
// publish to topicAllowed commits its own transaction there; it may not
// commit the administrator's half message of topicSecret.
func TestACLEndTransactionOnItsTopic(t *testing.T) {
	for _, m := range startModels(t) {
		t.Run(m.name, func(t *testing.T) {
			b := m.c.BrokerAddr(0)
			// half sends a prepared message to topic as creds and returns
			// the END_TRANSACTION that commits it.
			half := func(creds acl.Credentials, topic string) *protocol.Command {
				t.Helper()
				h := protocol.SendMessageRequestHeader{ProducerGroup: "pg", Topic: topic, DefaultTopic: "TBW102", DefaultTopicQueueNums: 4,
					SysFlag: protocol.TransactionPrepared, BornTimestamp: time.Now().UnixMilli(), MaxReconsumeTimes: -1,
					Properties: message.MarshalProperties(map[string]string{message.PropertyTransactionPrepared: "true", "PGROUP": "pg", "UNIQ_KEY": "tx-" + topic})}
				resp := clitest.Call(t, b, creds, protocol.NewRequest(protocol.ReqSendMessageV2, h.EncodeV2(), []byte("half")))
				if resp.Code != protocol.RespSuccess {
					t.Fatalf("%s: half message to %s: %d %q", m.name, topic, resp.Code, resp.Remark)
				}
				_, off, err := message.ParseOffsetMsgID(resp.Ext("msgId"))
				if err != nil {
					t.Fatal(err)
				}
				return protocol.NewRequest(protocol.ReqEndTransaction, protocol.EndTransactionRequestHeader{ProducerGroup: "pg",
					TranStateTableOffset: mustInt64(t, resp.Ext("queueOffset")), CommitLogOffset: off,
					CommitOrRollback: protocol.TransactionCommit, MsgID: resp.Ext("msgId")}.Encode(), nil)
			}
			secret := half(m.admin, topicSecret)
			before := stored(m.c, topicSecret)
			m.wantRefused(t, "END_TRANSACTION of another's half message", clitest.Call(t, b, m.user, secret))
			// Naming a topic it may publish to changes nothing.
			secret.ExtFields["topic"] = topicAllowed
			m.wantRefused(t, "END_TRANSACTION naming another topic", clitest.Call(t, b, m.user, secret))
			if n := stored(m.c, topicSecret); n != before {
				t.Errorf("%s: %s holds %d messages after the refused commits, had %d", m.name, topicSecret, n, before)
			}
			own := half(m.user, topicAllowed)
			allowed := stored(m.c, topicAllowed)
			if resp := clitest.Call(t, b, m.user, own); resp.Code != protocol.RespSuccess {
				t.Fatalf("%s: committing its own transaction: %d %q", m.name, resp.Code, resp.Remark)
			}
			if n := stored(m.c, topicAllowed); n != allowed+1 {
				t.Errorf("%s: %s holds %d messages after the commit, want %d", m.name, topicAllowed, n, allowed+1)
			}
		})
	}
}

func mustInt64(t *testing.T, s string) int64 {
	t.Helper()
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestACLRemarkClipsCredentials: a refusal echoes no more than a short
// prefix of the access key a request names, whatever its length (a 64 KiB
// one was echoed whole), on both models, at the broker and the name
// server.
func TestACLRemarkClipsCredentials(t *testing.T) {
	long := strings.Repeat("K", 64<<10)
	for _, m := range startModels(t) {
		t.Run(m.name, func(t *testing.T) {
			for _, addr := range []string{m.c.BrokerAddr(0), m.c.NamesrvAddr()} {
				req := protocol.NewRequest(protocol.ReqUpdateAndCreateTopic, map[string]string{"topic": topicSecret}, nil)
				if addr == m.c.NamesrvAddr() {
					req = protocol.NewRequest(protocol.ReqWipeWritePermOfBroker, map[string]string{"brokerName": "b"}, nil)
				}
				resp := clitest.Call(t, addr, acl.Credentials{AccessKey: long, SecretKey: "whatever"}, req)
				m.wantRefused(t, "a 64 KiB access key", resp)
				if len(resp.Remark) > 256 || !strings.Contains(resp.Remark, "KKKK") {
					t.Errorf("%s: %s: a remark of %d bytes: %.300q", m.name, addr, len(resp.Remark), resp.Remark)
				}
			}
		})
	}
}
