package auth

import (
	"strings"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// Need is one resource a request needs and the actions, any one of which
// an entry must grant (Java's DefaultAuthorizationContext).
type Need struct {
	Resource Resource
	Actions  Action
}

const retryPrefix = "%RETRY%"

func topicNeed(name string, a Action) Need {
	return Need{Resource{Type: Topic, Name: name, Pattern: Literal}, a}
}

// groupNeed names a group, from its retry topic too (Java Resource.ofGroup).
func groupNeed(name string, a Action) Need {
	name = strings.TrimPrefix(name, retryPrefix)
	return Need{Resource{Type: Group, Name: name, Pattern: Literal}, a}
}

// fieldNeeds is what the request codes Java checks by their header's
// annotations need: the ext fields naming a topic and a group, and the
// actions (RocketMQAction / RocketMQResource).
var fieldNeeds = map[int16]struct {
	topic, group string
	actions      Action
}{
	protocol.ReqGetMaxOffset:                    {"topic", "", Get},
	protocol.ReqGetMinOffset:                    {"topic", "", Get},
	protocol.ReqGetEarliestMsgStoreTime:         {"topic", "", Get},
	protocol.ReqSearchOffsetByTimestamp:         {"topic", "", Get},
	protocol.ReqViewMessageByID:                 {"topic", "", Get},
	protocol.ReqUpdateAndCreateTopic:            {"topic", "", Create},
	protocol.ReqDeleteTopicInBroker:             {"topic", "", Delete},
	protocol.ReqGetTopicStatsInfo:               {"topic", "", Get},
	protocol.ReqGetTopicConfig:                  {"topic", "", Get},
	protocol.ReqQueryTopicConsumeByWho:          {"topic", "", Get},
	protocol.ReqGetConsumeStats:                 {"topic", "consumerGroup", Get},
	protocol.ReqGetConsumerConnectionList:       {"", "consumerGroup", Get},
	protocol.ReqGetConsumerRunningInfo:          {"", "consumerGroup", Get},
	protocol.ReqConsumeMessageDirectly:          {"topic", "consumerGroup", Sub},
	protocol.ReqInvokeBrokerToResetOffset:       {"topic", "group", Update},
	protocol.ReqInvokeBrokerToGetConsumerStatus: {"topic", "group", Get},
	protocol.ReqDeleteSubscriptionGroup:         {"", "groupName", Delete},
	protocol.ReqCloneGroupOffset:                {"topic", "destGroup", Update},
	protocol.ReqQueryConsumeTimeSpan:            {"topic", "group", Get},
	protocol.ReqGetSubscriptionGroupConfig:      {"", "group", Get},
}

// clusterNeeds are the codes that need an action on the cluster: Java's
// cluster-wide ones (RocketMQAction resource CLUSTER, the AUTH_* admin
// codes among them), and the broker-changing ones Java's 5.3 builder
// leaves unchecked (no header class), which here need Update on the
// cluster as ACL 1.0 made them admin-only.
var clusterNeeds = map[int16]Action{
	protocol.ReqAuthCreateUser: Update, protocol.ReqAuthUpdateUser: Update, protocol.ReqAuthDeleteUser: Update,
	protocol.ReqAuthGetUser: Get, protocol.ReqAuthListUser: Get,
	protocol.ReqAuthCreateACL: Update, protocol.ReqAuthUpdateACL: Update, protocol.ReqAuthDeleteACL: Update,
	protocol.ReqAuthGetACL: Get, protocol.ReqAuthListACL: Get,
	protocol.ReqGetProducerConnectionList: Get,
	protocol.ReqRegisterBroker:            Update, protocol.ReqUnregisterBroker: Update,
	protocol.ReqWipeWritePermOfBroker: Update, protocol.ReqAddWritePermOfBroker: Update,
	protocol.ReqPutKVConfig: Update, protocol.ReqDeleteKVConfig: Update, protocol.ReqGetKVConfig: Get,
	protocol.ReqDeleteTopicInNameSrv: Update, protocol.ReqRegisterTopicInNameSrv: Update,
	protocol.ReqQueryDataVersion: Get,
	// Not checked by Java 5.3's builder; admin-only here.
	protocol.ReqUpdateBrokerConfig:               Update,
	protocol.ReqUpdateAndCreateSubscriptionGroup: Update,
	protocol.ReqUpdateAndCreateStaticTopic:       Update,
	protocol.ReqUpdateAndCreateACLConfig:         Update,
	protocol.ReqDeleteACLConfig:                  Update,
}

// Needs returns what req needs, as Java's DefaultAuthorizationContextBuilder
// reads it; cluster is the broker's cluster name. Codes it gives no
// context need nothing. Where Java reads a field its header does not have
// or names a group as a topic (SEND_MESSAGE to a retry topic, the offset
// queries), the group is read from the retry topic and named a group. A
// heartbeat body that does not decode is an error.
func Needs(req *protocol.Command, cluster string) ([]Need, error) {
	f := acl.Collect(req)
	defer f.Release()
	ns, err := appendNeeds(nil, req, f, cluster)
	for i := range ns {
		ns[i].Resource.Name = strings.Clone(ns[i].Resource.Name) // off f's views
	}
	return ns, err
}

// appendNeeds appends what req needs to ns, its ext fields read from f
// (so resource names alias f): a check passes an array on its stack, so
// the common requests allocate nothing for it.
func appendNeeds(ns []Need, req *protocol.Command, f acl.Fields, cluster string) ([]Need, error) {
	ext := f.View
	switch req.Code {
	case protocol.ReqGetRouteInfoByTopic:
		return append(ns, topicNeed(ext("topic"), Pub|Sub|Get)), nil
	case protocol.ReqSendMessage, protocol.ReqSendMessageV2, protocol.ReqSendBatchMessage:
		t := ext("topic")
		if req.Code != protocol.ReqSendMessage {
			t = ext("b")
		}
		if strings.HasPrefix(t, retryPrefix) {
			return append(ns, groupNeed(t, Sub)), nil
		}
		return append(ns, topicNeed(t, Pub)), nil
	case protocol.ReqEndTransaction:
		return append(ns, topicNeed(ext("topic"), Pub)), nil
	case protocol.ReqConsumerSendMsgBack:
		return append(ns, groupNeed(ext("group"), Sub)), nil
	case protocol.ReqPullMessage, protocol.ReqLitePullMessage:
		return appendTopicAndGroup(ns, ext("topic"), ext("consumerGroup"), Sub), nil
	case protocol.ReqQueryMessage:
		return append(ns, topicNeed(ext("topic"), Sub|Get)), nil
	case protocol.ReqHeartBeat:
		hb, err := protocol.DecodeHeartbeatData(req.Body)
		if err != nil {
			return nil, err
		}
		for _, cd := range hb.ConsumerDataSet {
			ns = append(ns, groupNeed(cd.GroupName, Sub))
			for _, sd := range cd.SubscriptionDataSet {
				if !strings.HasPrefix(sd.Topic, retryPrefix) {
					ns = append(ns, topicNeed(sd.Topic, Sub))
				}
			}
		}
		return ns, nil
	case protocol.ReqUnregisterClient:
		// A producer unregisters without a consumer group: nothing to check
		// (Java would check a group named null and refuse it).
		if g := ext("consumerGroup"); g != "" {
			return append(ns, groupNeed(g, Pub|Sub)), nil
		}
		return ns, nil
	case protocol.ReqGetConsumerListByGroup:
		return append(ns, groupNeed(ext("consumerGroup"), Sub|Get)), nil
	case protocol.ReqQueryConsumerOffset:
		return appendTopicAndGroup(ns, ext("topic"), ext("consumerGroup"), Sub|Get), nil
	case protocol.ReqUpdateConsumerOffset:
		return appendTopicAndGroup(ns, ext("topic"), ext("consumerGroup"), Sub|Update), nil
	}
	if a, ok := clusterNeeds[req.Code]; ok {
		return append(ns, Need{Resource{Type: Cluster, Name: cluster, Pattern: Literal}, a}), nil
	}
	need, ok := fieldNeeds[req.Code]
	if !ok {
		return ns, nil
	}
	if need.topic != "" {
		if t, ok := f.Lookup(need.topic); ok {
			if strings.HasPrefix(t, retryPrefix) {
				ns = append(ns, groupNeed(t, need.actions))
			} else {
				ns = append(ns, topicNeed(t, need.actions))
			}
		}
	}
	if need.group != "" {
		if g, ok := f.Lookup(need.group); ok {
			ns = append(ns, groupNeed(g, need.actions))
		}
	}
	return ns, nil
}

// appendTopicAndGroup appends a topic (unless a retry topic) and a group
// needing a.
func appendTopicAndGroup(ns []Need, topic, group string, a Action) []Need {
	if !strings.HasPrefix(topic, retryPrefix) {
		ns = append(ns, topicNeed(topic, a))
	}
	return append(ns, groupNeed(group, a))
}
