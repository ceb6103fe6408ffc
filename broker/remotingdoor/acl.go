package remotingdoor

import (
	"strconv"
	"strings"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/broker/due"
	"github.com/runnelmq/runnel/broker/transaction"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// What each request code the broker serves needs, in ACL 2.0's actions and
// resources (package acl decides them, for plain ACL and ACL 2.0 alike).
// The rights follow RocketMQ 5.3's DefaultAuthorizationContextBuilder;
// where it checks nothing, this table says what the request reads or
// changes. Every code registerHandlers serves has an entry
// (TestEveryHandlerIsMapped); a code without one needs an administrator.
//
// Open to any authenticated account (no entry's need): a producer's
// heartbeat and a producer's UNREGISTER_CLIENT, which only say the caller
// itself is there or gone.
//
// Plain ACL (plain_acl.yml) reads the same needs as Java's
// PlainAccessResource reads requests (acl's plainNeed): Pub is PUB, Sub is
// SUB; a need of Get alone on a topic or group (its metadata, its offsets)
// is open to any signed account, as in Java, since plain ACL has no read
// right; what needs Create, Update, Delete or List, or anything of the
// cluster, is an admin request. The codes Java's PlainAccessResource
// forgot, which it let any signed account send: LITE_PULL_MESSAGE,
// SEND_REPLY_MESSAGE(_V2), VIEW_MESSAGE_BY_ID, LOCK_BATCH_MQ and
// UNLOCK_BATCH_MQ, QUERY_CONSUMER_OFFSET, END_TRANSACTION,
// CONSUME_MESSAGE_DIRECTLY (SUB or PUB as above), CLONE_GROUP_OFFSET,
// INVOKE_BROKER_TO_RESET_OFFSET, GET_BROKER_CONFIG, GET_ALL_TOPIC_CONFIG,
// GET_ALL_CONSUMER_OFFSET,
// GET_BROKER_RUNTIME_INFO, GET_ALL_SUBSCRIPTIONGROUP_CONFIG and
// GET_PRODUCER_CONNECTION_LIST (admin requests), and ACL 2.0's AUTH_*
// (admin requests: a plain account must not grant itself ACL 2.0 rights).

// aclCodes is the door's table.
func (d *Door) aclCodes() acl.Codes {
	cluster := func(a acl.Action) acl.NeedsFunc {
		need := acl.ClusterNeed(d.cluster, a)
		return func(dst []acl.Need, _ *protocol.Command, _ acl.Fields) ([]acl.Need, error) {
			return append(dst, need), nil
		}
	}
	return acl.Codes{
		protocol.ReqSendMessage:             sendNeeds,
		protocol.ReqSendMessageV2:           sendNeeds,
		protocol.ReqSendBatchMessage:        sendNeeds,
		protocol.ReqSendReplyMessage:        sendNeeds, // checked before the core stores the reply
		protocol.ReqSendReplyMessageV2:      sendNeeds,
		protocol.ReqEndTransaction:          d.endTransactionNeeds,
		protocol.ReqRecallMessage:           named(acl.Pub, topic("topic")),
		protocol.ReqConsumerSendMsgBack:     named(acl.Sub, group("group")),
		protocol.ReqPullMessage:             named(acl.Sub, topic("topic"), group("consumerGroup")),
		protocol.ReqLitePullMessage:         named(acl.Sub, topic("topic"), group("consumerGroup")),
		protocol.ReqQueryConsumerOffset:     named(acl.Sub|acl.Get, topic("topic"), group("consumerGroup")),
		protocol.ReqUpdateConsumerOffset:    named(acl.Sub|acl.Update, topic("topic"), group("consumerGroup")),
		protocol.ReqGetMaxOffset:            named(acl.Get, topic("topic")),
		protocol.ReqGetMinOffset:            named(acl.Get, topic("topic")),
		protocol.ReqSearchOffsetByTimestamp: named(acl.Get, topic("topic")),
		protocol.ReqGetEarliestMsgStoreTime: named(acl.Get, topic("topic")),
		protocol.ReqHeartBeat:               heartbeatNeeds,
		protocol.ReqUnregisterClient:        named(acl.Pub|acl.Sub, group("consumerGroup").optional()),
		protocol.ReqGetConsumerListByGroup:  named(acl.Sub|acl.Get, group("consumerGroup")),
		protocol.ReqLockBatchMQ:             lockNeeds,
		protocol.ReqUnlockBatchMQ:           lockNeeds,
		protocol.ReqQueryMessage:            named(acl.Sub|acl.Get, topic("topic")),
		protocol.ReqViewMessageByID:         d.viewMessageNeeds,
		// RocketMQ 5's POP: Sub on the topic and the group, as Java's
		// builder has them.
		protocol.ReqPopMessage:                 named(acl.Sub, topic("topic"), group("consumerGroup")),
		protocol.ReqNotification:               named(acl.Sub, topic("topic"), group("consumerGroup")),
		protocol.ReqAckMessage:                 popAckNeeds,
		protocol.ReqChangeMessageInvisibleTime: popAckNeeds,
		protocol.ReqBatchAckMessage:            batchAckNeeds,

		protocol.ReqUpdateAndCreateTopic:            named(acl.Create, topic("topic")),
		protocol.ReqDeleteTopicInBroker:             named(acl.Delete, topic("topic")),
		protocol.ReqGetTopicStatsInfo:               named(acl.Get, topic("topic")),
		protocol.ReqGetTopicConfig:                  named(acl.Get, topic("topic")),
		protocol.ReqQueryTopicConsumeByWho:          named(acl.Get, topic("topic")),
		protocol.ReqGetConsumeStats:                 named(acl.Get, topic("topic").optional(), group("consumerGroup")),
		protocol.ReqGetConsumerConnectionList:       named(acl.Get, group("consumerGroup")),
		protocol.ReqGetConsumerRunningInfo:          named(acl.Get, group("consumerGroup")),
		protocol.ReqConsumeMessageDirectly:          named(acl.Sub, topic("topic").optional(), group("consumerGroup")),
		protocol.ReqInvokeBrokerToGetConsumerStatus: named(acl.Get, topic("topic"), group("group")),
		protocol.ReqInvokeBrokerToResetOffset:       named(acl.Update, topic("topic"), group("group")),
		protocol.ReqCloneGroupOffset:                cloneOffsetNeeds,
		protocol.ReqDeleteSubscriptionGroup:         named(acl.Delete, group("groupName")),

		protocol.ReqGetBrokerConfig:                  cluster(acl.Get),
		protocol.ReqGetBrokerRuntimeInfo:             cluster(acl.Get),
		protocol.ReqGetAllTopicConfig:                cluster(acl.List),
		protocol.ReqGetAllConsumerOffset:             cluster(acl.List),
		protocol.ReqGetAllSubscriptionGroupConfig:    cluster(acl.List),
		protocol.ReqGetProducerConnectionList:        cluster(acl.Get),
		protocol.ReqUpdateBrokerConfig:               cluster(acl.Update),
		protocol.ReqUpdateAndCreateSubscriptionGroup: cluster(acl.Update),

		protocol.ReqAuthCreateUser: cluster(acl.Update), protocol.ReqAuthUpdateUser: cluster(acl.Update),
		protocol.ReqAuthDeleteUser: cluster(acl.Update), protocol.ReqAuthGetUser: cluster(acl.Get),
		protocol.ReqAuthListUser: cluster(acl.Get), protocol.ReqAuthCreateACL: cluster(acl.Update),
		protocol.ReqAuthUpdateACL: cluster(acl.Update), protocol.ReqAuthDeleteACL: cluster(acl.Update),
		protocol.ReqAuthGetACL: cluster(acl.Get), protocol.ReqAuthListACL: cluster(acl.Get),
	}
}

// field is an ext field that names a topic or a group.
type field struct {
	key     string
	group   bool
	mayOmit bool // the request may leave it out: then it names nothing
}

func topic(key string) field { return field{key: key} }
func group(key string) field { return field{key: key, group: true} }

func (f field) optional() field {
	f.mayOmit = true
	return f
}

// named is what a request needs whose header names its topic and group:
// a on each. A field left out (or empty: acl.Fields.Lookup) that is not
// optional still needs a, on the resource of no name, which no literal
// rule grants.
func named(a acl.Action, fields ...field) acl.NeedsFunc {
	return func(dst []acl.Need, _ *protocol.Command, f acl.Fields) ([]acl.Need, error) {
		for _, fd := range fields {
			v, ok := f.Lookup(fd.key)
			switch {
			case !ok && fd.mayOmit:
			case fd.group:
				dst = acl.AppendNeed(dst, acl.GroupNeed(v, a))
			default:
				dst = acl.AppendNeed(dst, acl.TopicNeed(v, a))
			}
		}
		return dst, nil
	}
}

// sendNeeds: Pub on the topic a send (or a reply) names; a send to a retry
// topic (a consumer's send-back by a send) needs Sub on its group, as Java
// has it. The topic is read where the header's decoder reads it: a V2 code
// whose ext fields carry no "b" is read in the long-key form.
func sendNeeds(dst []acl.Need, req *protocol.Command, f acl.Fields) ([]acl.Need, error) {
	t, ok := "", false
	if protocol.IsSendV2Code(req.Code) {
		t, ok = f.Lookup("b")
	}
	if !ok {
		t = f.View("topic")
	}
	if strings.HasPrefix(t, acl.RetryPrefix) {
		return append(dst, acl.GroupNeed(t, acl.Sub)), nil
	}
	return append(dst, acl.TopicNeed(t, acl.Pub)), nil
}

// popAckNeeds: ACK_MESSAGE and CHANGE_MESSAGE_INVISIBLETIME need Sub on
// the group and on the topic; a Java client names a message that came
// back through the group's retry topic by that topic, which is its
// group's (as a send to a retry topic is).
func popAckNeeds(dst []acl.Need, _ *protocol.Command, f acl.Fields) ([]acl.Need, error) {
	dst = acl.AppendNeed(dst, acl.GroupNeed(f.View("consumerGroup"), acl.Sub))
	if t := f.View("topic"); !strings.HasPrefix(t, acl.RetryPrefix) {
		dst = acl.AppendNeed(dst, acl.TopicNeed(t, acl.Sub))
	}
	return dst, nil
}

// batchAckNeeds: Sub on the group and the topic of every acknowledgement
// in a BATCH_ACK_MESSAGE body.
func batchAckNeeds(dst []acl.Need, req *protocol.Command, _ acl.Fields) ([]acl.Need, error) {
	body, err := protocol.DecodeBatchAckBody(req.Body)
	if err != nil {
		return dst, err
	}
	for _, a := range body.Acks {
		dst = acl.AppendNeed(dst, acl.GroupNeed(a.ConsumerGroup, acl.Sub))
		dst = acl.AppendNeed(dst, acl.TopicNeed(a.Topic, acl.Sub))
	}
	return dst, nil
}

// heartbeatNeeds: Sub on every consumer group and every topic it
// subscribes (a retry topic is its group's). A producer's heartbeat needs
// nothing but the account: it says only that the caller is there.
func heartbeatNeeds(dst []acl.Need, req *protocol.Command, _ acl.Fields) ([]acl.Need, error) {
	hb, err := protocol.DecodeHeartbeatData(req.Body)
	if err != nil {
		return dst, err
	}
	for _, cd := range hb.ConsumerDataSet {
		dst = acl.AppendNeed(dst, acl.GroupNeed(cd.GroupName, acl.Sub))
		for _, sd := range cd.SubscriptionDataSet {
			dst = acl.AppendNeed(dst, acl.TopicNeed(sd.Topic, acl.Sub))
		}
	}
	return dst, nil
}

// lockNeeds: LOCK_BATCH_MQ and UNLOCK_BATCH_MQ lock (unlock) a group's
// queues for orderly consumption: Sub on the group and on every topic of
// the queues, as consuming them would need.
func lockNeeds(dst []acl.Need, req *protocol.Command, _ acl.Fields) ([]acl.Need, error) {
	body, err := protocol.DecodeLockBatchRequestBody(req.Body)
	if err != nil {
		return dst, err
	}
	dst = acl.AppendNeed(dst, acl.GroupNeed(body.ConsumerGroup, acl.Sub))
	for _, mq := range body.MQSet {
		dst = acl.AppendNeed(dst, acl.TopicNeed(mq.Topic, acl.Sub))
	}
	return dst, nil
}

// cloneOffsetNeeds: CLONE_GROUP_OFFSET reads srcGroup's offsets (Get) and
// writes destGroup's (Update) on topic, or on every topic srcGroup has
// offsets of when it names none (Update on every topic).
func cloneOffsetNeeds(dst []acl.Need, _ *protocol.Command, f acl.Fields) ([]acl.Need, error) {
	dst = acl.AppendNeed(dst, acl.GroupNeed(f.View("srcGroup"), acl.Get))
	dst = acl.AppendNeed(dst, acl.GroupNeed(f.View("destGroup"), acl.Update))
	if t, ok := f.Lookup("topic"); ok {
		return acl.AppendNeed(dst, acl.TopicNeed(t, acl.Update)), nil
	}
	return append(dst, acl.Need{Resource: acl.Resource{Type: acl.Topic, Pattern: acl.AnyName}, Actions: acl.Update}), nil
}

// viewMessageNeeds: VIEW_MESSAGE_BY_ID returns the stored message at an
// offset, whatever topic the request names (it may name none): Sub or Get
// on the topic the stored message belongs to (a read of messages, as
// QUERY_MESSAGE's; Java asks Get, and plain ACL, which has no Get, SUB). No message there needs an
// administrator, so a refusal never tells an offset that holds a message
// from one that does not.
func (d *Door) viewMessageNeeds(dst []acl.Need, _ *protocol.Command, f acl.Fields) ([]acl.Need, error) {
	return d.storedTopicNeed(dst, f.View("offset"), acl.Sub|acl.Get), nil
}

// endTransactionNeeds: END_TRANSACTION commits or rolls back the half
// message at commitLogOffset: Pub on its real topic, whatever topic the
// request names (the official Go client names none).
func (d *Door) endTransactionNeeds(dst []acl.Need, _ *protocol.Command, f acl.Fields) ([]acl.Need, error) {
	return d.storedTopicNeed(dst, f.View("commitLogOffset"), acl.Pub), nil
}

// storedTopicNeed appends a on the topic of the message stored at the
// commit log offset off: its real one when it waits in a system topic (a
// half message, a delayed or timed one). No message there, or an offset
// that does not parse, needs an administrator.
func (d *Door) storedTopicNeed(dst []acl.Need, off string, a acl.Action) []acl.Need {
	offset, err := strconv.ParseInt(off, 10, 64)
	if err != nil {
		return append(dst, acl.AdminNeed(d.cluster))
	}
	rec, err := d.core.ViewMessage(offset)
	if err != nil {
		return append(dst, acl.AdminNeed(d.cluster))
	}
	stored, ok := message.StoredTopic(rec)
	if !ok {
		return append(dst, acl.AdminNeed(d.cluster))
	}
	topic := string(stored)
	if holdsForAnother(topic) {
		if m, _, err := message.DecodeStoredMessage(rec, false); err == nil && m.Property(message.PropertyRealTopic) != "" {
			topic = m.Property(message.PropertyRealTopic)
		}
	}
	return append(dst, acl.TopicNeed(topic, a))
}

// holdsForAnother reports whether topic is a system topic a message waits
// in for its real one (REAL_TOPIC): transactions' half messages, delay
// levels', timers'.
func holdsForAnother(topic string) bool {
	return topic == transaction.HalfTopic || strings.HasPrefix(topic, due.ScheduleTopic) || topic == due.TimerTopic
}
