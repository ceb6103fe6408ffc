package acl

import (
	"strings"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// Perm is a set of RocketMQ ACL permission bits (Java's Permission).
type Perm byte

// The permission bits. Deny overrides every other bit.
const (
	Deny Perm = 1 << iota
	Any
	Pub
	Sub
)

// ParsePerm reads "DENY", "PUB", "SUB", "PUB|SUB" or "SUB|PUB"; anything
// else is Deny, as Java's parsePermFromString has it. ok is false for a
// string that is none of them.
func ParsePerm(s string) (p Perm, ok bool) {
	switch strings.TrimSpace(s) {
	case "PUB":
		return Pub, true
	case "SUB":
		return Sub, true
	case "PUB|SUB", "SUB|PUB":
		return Pub | Sub, true
	case "DENY":
		return Deny, true
	}
	return Deny, false
}

// grants reports whether owned allows needed (Java's checkPermission).
func (owned Perm) grants(needed Perm) bool {
	if owned&Deny != 0 {
		return false
	}
	if needed&Any != 0 {
		return owned&(Pub|Sub) != 0
	}
	return needed&owned != 0
}

const (
	retryPrefix = "%RETRY%"
	traceTopic  = "RMQ_SYS_TRACE_TOPIC"
)

// Resource is a topic, or a consumer group as its retry topic
// ("%RETRY%" + group), and the permission a request needs on it.
type Resource struct {
	Name string
	Perm Perm
}

// IsGroup reports whether r names a consumer group.
func (r Resource) IsGroup() bool { return strings.HasPrefix(r.Name, retryPrefix) }

// String is "topic:T" or "group:G", as Java's remarks print a resource.
func (r Resource) String() string {
	if g, ok := strings.CutPrefix(r.Name, retryPrefix); ok {
		return "group:" + g
	}
	return "topic:" + r.Name
}

// Resources returns what req needs, as Java's PlainAccessResource.parse
// reads it: SEND → PUB on its topic (SUB on a retry topic), PULL → SUB on
// the topic and the group, heartbeat → SUB on every consumer group and
// subscribed topic, offsets, send-back, consumer lists and unregistration
// → SUB on the group. Other codes need no resource (admin codes are
// checked apart). A heartbeat body that does not decode is an error.
func Resources(req *protocol.Command) ([]Resource, error) {
	f := collect(req)
	defer f.release()
	rs, err := appendResources(nil, req, f)
	for i := range rs {
		rs[i].Name = strings.Clone(rs[i].Name) // off f's views
	}
	return rs, err
}

// appendResources appends what req needs to dst, its ext fields read from
// f (so resource names alias f): a check passes an array on its stack, so
// the common requests allocate nothing for it.
func appendResources(dst []Resource, req *protocol.Command, f *extFields) ([]Resource, error) {
	rs, ext := dst, f.view
	switch req.Code {
	case protocol.ReqSendMessage, protocol.ReqSendMessageV2, protocol.ReqSendBatchMessage:
		key := "topic"
		if req.Code != protocol.ReqSendMessage {
			key = "b"
		}
		t := ext(key)
		if strings.HasPrefix(t, retryPrefix) {
			rs = addResource(rs, t, Sub)
		} else {
			rs = addResource(rs, t, Pub)
		}
	case protocol.ReqConsumerSendMsgBack:
		rs = addGroup(rs, ext("group"))
	case protocol.ReqPullMessage:
		rs = addResource(rs, ext("topic"), Sub)
		rs = addGroup(rs, ext("consumerGroup"))
	case protocol.ReqQueryMessage:
		rs = addResource(rs, ext("topic"), Sub)
	case protocol.ReqHeartBeat:
		hb, err := protocol.DecodeHeartbeatData(req.Body)
		if err != nil {
			return nil, err
		}
		for _, cd := range hb.ConsumerDataSet {
			rs = addGroup(rs, cd.GroupName)
			for _, sd := range cd.SubscriptionDataSet {
				rs = addResource(rs, sd.Topic, Sub)
			}
		}
	case protocol.ReqUnregisterClient, protocol.ReqGetConsumerListByGroup:
		rs = addGroup(rs, ext("consumerGroup"))
	case protocol.ReqUpdateConsumerOffset:
		rs = addGroup(rs, ext("consumerGroup"))
		rs = addResource(rs, ext("topic"), Sub)
	}
	return rs, nil
}

// addResource appends name (skipped when empty, as Java skips a null)
// needing p, merging with an earlier need of the same resource.
func addResource(rs []Resource, name string, p Perm) []Resource {
	if name == "" {
		return rs
	}
	for i := range rs {
		if rs[i].Name == name {
			rs[i].Perm |= p
			return rs
		}
	}
	return append(rs, Resource{name, p})
}

func addGroup(rs []Resource, group string) []Resource {
	if group == "" {
		return rs
	}
	return addResource(rs, retryPrefix+group, Sub)
}

// BrokerAdminCodes are the request codes only an admin account may send
// to a broker: Java's Permission.ADMIN_CODE.
var BrokerAdminCodes = []int16{
	protocol.ReqUpdateAndCreateTopic,
	protocol.ReqUpdateBrokerConfig,
	protocol.ReqDeleteTopicInBroker,
	protocol.ReqUpdateAndCreateSubscriptionGroup,
	protocol.ReqDeleteSubscriptionGroup,
	protocol.ReqUpdateAndCreateStaticTopic,
	protocol.ReqUpdateAndCreateACLConfig,
	protocol.ReqDeleteACLConfig,
	protocol.ReqGetBrokerClusterACLInfo,
	// ACL 2.0's user and rule management: not in Java's 4.x list (it
	// predates them), admin-only here so a plain-ACL account cannot grant
	// itself ACL 2.0 rights.
	protocol.ReqAuthCreateUser, protocol.ReqAuthUpdateUser, protocol.ReqAuthDeleteUser,
	protocol.ReqAuthGetUser, protocol.ReqAuthListUser, protocol.ReqAuthCreateACL,
	protocol.ReqAuthUpdateACL, protocol.ReqAuthDeleteACL, protocol.ReqAuthGetACL, protocol.ReqAuthListACL,
}

// NamesrvAdminCodes are the request codes only an admin account may send
// to a name server. Java's name server checks nothing; these are the ones
// that change what it serves, broker registration included, so a normal
// account cannot put a broker of its own into the routes. A broker talking
// to a name server with ACL therefore signs with an admin account.
var NamesrvAdminCodes = []int16{
	protocol.ReqPutKVConfig,
	protocol.ReqDeleteKVConfig,
	protocol.ReqRegisterBroker,
	protocol.ReqUnregisterBroker,
	protocol.ReqDeleteTopicInNameSrv,
	protocol.ReqRegisterTopicInNameSrv,
	protocol.ReqUpdateNamesrvConfig,
	protocol.ReqWipeWritePermOfBroker,
	protocol.ReqAddWritePermOfBroker,
}
