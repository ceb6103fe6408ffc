package protocol

// SubscriptionGroupConfig is a consumer group's configuration, the body of
// UPDATE_AND_CREATE_SUBSCRIPTIONGROUP and an entry of
// GET_ALL_SUBSCRIPTIONGROUP_CONFIG's subscriptionGroupTable (Java
// SubscriptionGroupConfig; its consumeMessageOrderly, retry policy,
// subscription set and attributes are not kept here). Decode it over
// DefaultSubscriptionGroupConfig, so absent fields keep Java's defaults.
type SubscriptionGroupConfig struct {
	GroupName string `json:"groupName"`
	// ConsumeEnable false refuses the group's pulls (NO_PERMISSION).
	ConsumeEnable        bool `json:"consumeEnable"`
	ConsumeFromMinEnable bool `json:"consumeFromMinEnable"`
	// ConsumeBroadcastEnable false refuses the pulls of a broadcasting
	// consumer of the group.
	ConsumeBroadcastEnable bool `json:"consumeBroadcastEnable"`
	// RetryQueueNums is the queue count the group's %RETRY% topic is
	// created with.
	RetryQueueNums int `json:"retryQueueNums"`
	// RetryMaxTimes is how often a message is reconsumed before it goes
	// to the group's %DLQ%, when the consumer does not say.
	RetryMaxTimes                  int   `json:"retryMaxTimes"`
	BrokerID                       int64 `json:"brokerId"`
	WhichBrokerWhenConsumeSlowly   int64 `json:"whichBrokerWhenConsumeSlowly"`
	NotifyConsumerIdsChangedEnable bool  `json:"notifyConsumerIdsChangedEnable"`
	GroupSysFlag                   int   `json:"groupSysFlag"`
	ConsumeTimeoutMinute           int   `json:"consumeTimeoutMinute"`
}

// DefaultSubscriptionGroupConfig is the config of a group nobody
// configured: Java SubscriptionGroupConfig's field defaults.
func DefaultSubscriptionGroupConfig(group string) SubscriptionGroupConfig {
	return SubscriptionGroupConfig{
		GroupName: group, ConsumeEnable: true, ConsumeFromMinEnable: true, ConsumeBroadcastEnable: true,
		RetryQueueNums: 1, RetryMaxTimes: 16, BrokerID: MasterID, WhichBrokerWhenConsumeSlowly: 1,
		NotifyConsumerIdsChangedEnable: true, ConsumeTimeoutMinute: 15,
	}
}

// SubscriptionGroupWrapper is GET_ALL_SUBSCRIPTIONGROUP_CONFIG's body
// (Java SubscriptionGroupWrapper, without its forbidden table).
type SubscriptionGroupWrapper struct {
	SubscriptionGroupTable map[string]SubscriptionGroupConfig `json:"subscriptionGroupTable"`
	DataVersion            DataVersion                        `json:"dataVersion"`
}
