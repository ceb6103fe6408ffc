// Package groupconf owns the one type of a consumer group's configuration
// (RocketMQ's SubscriptionGroupConfig): the broker's group table holds it,
// the store persists it (store/meta keys and encodes it), and
// UPDATE_AND_CREATE_SUBSCRIPTIONGROUP and GET_ALL_SUBSCRIPTIONGROUP_CONFIG
// bodies carry it (remoting/protocol names it SubscriptionGroupConfig). It
// imports nothing of the module, so the store need not import the wire to
// keep a group, nor the wire the store to send one.
//
// The JSON field names are Java's, which both the wire and the stored
// record use; the field order is the stored record's (JSON readers take
// any order, and two versions replaying one raft log must write the same
// bytes). Java's ints are Go ints here, as in package topicconf; the store
// refuses a number beyond 32 bits.
package groupconf

// Config is a consumer group's configuration (Java SubscriptionGroupConfig;
// its retry policy, subscription set and attributes are not kept). Decode a body over New, so absent fields keep Java's
// defaults.
type Config struct {
	GroupName string `json:"groupName"`
	// ConsumeEnable false refuses the group's pulls (NO_PERMISSION).
	ConsumeEnable        bool `json:"consumeEnable"`
	ConsumeFromMinEnable bool `json:"consumeFromMinEnable"`
	// ConsumeBroadcastEnable false refuses the pulls of a broadcasting
	// consumer of the group.
	ConsumeBroadcastEnable         bool `json:"consumeBroadcastEnable"`
	NotifyConsumerIdsChangedEnable bool `json:"notifyConsumerIdsChangedEnable"`
	// RetryQueueNums is the queue count the group's %RETRY% topic is
	// created with.
	RetryQueueNums int `json:"retryQueueNums"`
	// RetryMaxTimes is how often a message is reconsumed before it goes
	// to the group's %DLQ%, when the consumer does not say.
	RetryMaxTimes                int   `json:"retryMaxTimes"`
	BrokerID                     int64 `json:"brokerId"`
	WhichBrokerWhenConsumeSlowly int64 `json:"whichBrokerWhenConsumeSlowly"`
	GroupSysFlag                 int   `json:"groupSysFlag"`
	ConsumeTimeoutMinute         int   `json:"consumeTimeoutMinute"`
	// ConsumeMessageOrderly makes the group a FIFO group for RocketMQ 5's
	// consumers (POP and gRPC): one batch of a queue in flight at a time,
	// in order. Omitted when false, so a config stored before it existed
	// encodes to the same bytes.
	ConsumeMessageOrderly bool `json:"consumeMessageOrderly,omitempty"`
}

// New returns the config of a group nobody configured: Java
// SubscriptionGroupConfig's field defaults (brokerId 0, the master;
// whichBrokerWhenConsumeSlowly 1, the first slave).
func New(group string) Config {
	return Config{
		GroupName: group, ConsumeEnable: true, ConsumeFromMinEnable: true, ConsumeBroadcastEnable: true,
		NotifyConsumerIdsChangedEnable: true, RetryQueueNums: 1, RetryMaxTimes: 16, WhichBrokerWhenConsumeSlowly: 1,
		ConsumeTimeoutMinute: 15,
	}
}

// Message models of a consumer group (RocketMQ MessageModel): a clustering
// group shares a topic's queues among its members; each member of a
// broadcasting group reads all of them.
const (
	Clustering   = "CLUSTERING"
	Broadcasting = "BROADCASTING"
)
