package admin

import "strings"

// systemTopics are RocketMQ's fixed system topics (TopicValidator's list,
// and the ones its brokers create for schedules, transactions, traces
// and POP).
var systemTopics = map[string]bool{
	"TBW102": true, "SCHEDULE_TOPIC_XXXX": true, "OFFSET_MOVED_EVENT": true, "SELF_TEST_TOPIC": true,
	"BenchmarkTest": true, "RMQ_SYS_TRANS_HALF_TOPIC": true, "RMQ_SYS_TRACE_TOPIC": true,
	"RMQ_SYS_TRANS_OP_HALF_TOPIC": true, "TRANS_CHECK_MAX_TIME_TOPIC": true, "rmq_sys_REVIVE_LOG": true,
}

// IsSystemTopic reports whether topic is a system topic of RocketMQ's (or
// Runnel's), or a consumer group's %RETRY% or %DLQ% topic: what a list of
// the users' topics leaves out. Topics named after a cluster or broker
// group are system topics too; ClusterTopics names them.
func IsSystemTopic(topic string) bool {
	return systemTopics[topic] || strings.HasPrefix(topic, RetryGroupTopicPrefix) || strings.HasPrefix(topic, DLQTopicPrefix) ||
		strings.HasPrefix(topic, "rmq_sys_") || strings.HasPrefix(topic, "RMQ_SYS_")
}

// ClusterTopics are the topics brokers register named after themselves:
// each cluster's and broker group's name, and <cluster>_REPLY_TOPIC.
func ClusterTopics(brokers []Broker) map[string]bool {
	names := map[string]bool{}
	for _, b := range brokers {
		names[b.Cluster], names[b.Name], names[b.Cluster+"_REPLY_TOPIC"] = true, true, true
	}
	return names
}

// IsSystemGroup reports whether group is one RocketMQ's tools and brokers
// use for themselves (TOOLS_CONSUMER, CID_RMQ_SYS_*, ...).
func IsSystemGroup(group string) bool {
	switch group {
	case ToolsConsumerGroup, "FILTERSRV_CONSUMER", "__MONITOR_CONSUMER", "CLIENT_INNER_PRODUCER", "SELF_TEST_P_GROUP",
		"SELF_TEST_C_GROUP", "CID_ONS-HTTP-PROXY", "CID_ONSAPI_PERMISSION", "CID_ONSAPI_OWNER", "CID_ONSAPI_PULL",
		"CID_RMQ_SYS_TRANS", "CID_SYS_RMQ_TRANS":
		return true
	}
	return strings.HasPrefix(group, "CID_RMQ_SYS_")
}
