package main

import (
	"fmt"
	"strings"
)

// mqadminCommands are the mqadmin commands runnelctl answers to: each
// with the options RocketMQ's tools module gives it (the letter, the long
// name, whether it takes a value, and its description, as its
// buildCommandlineOptions declares them), and the runnelctl command line
// it runs. Options runnelctl cannot honour are refused with the reason;
// the few it takes without effect say why in their note.
var mqadminCommands = []*mqCmd{
	{
		name: "clusterList", desc: "List cluster infos", path: []string{"cluster", "list"},
		opts: []mqOpt{
			{short: "m", long: "moreStats", desc: "Print more stats", note: "accepted: cluster list always shows each node's role and state"},
			{short: "i", long: "interval", arg: true, desc: "specify intervals numbers, it is in seconds"},
			{short: "c", long: "clusterName", arg: true, desc: "which cluster"},
		},
		every:   "interval",
		example: "clusterList -c DefaultCluster",
		to: func(v mqValues) ([][]string, error) {
			c := cmdLine{"cluster", "list"}
			c.opt(v, "clusterName", "cluster")
			return one(c), nil
		},
	},
	{
		name: "brokerStatus", desc: "Fetch broker runtime status data", path: []string{"broker", "status"},
		opts: []mqOpt{
			{short: "b", long: "brokerAddr", arg: true, desc: "Broker address"},
			{short: "c", long: "clusterName", arg: true, desc: "which cluster"},
		},
		oneOf:   [][]string{{"brokerAddr", "clusterName"}},
		example: "brokerStatus -b 127.0.0.1:10911",
		to:      brokerLine("broker", "status"),
	},
	{
		name: "getBrokerConfig", desc: "Get broker config by cluster or special broker", path: []string{"broker", "config"},
		opts: []mqOpt{
			{short: "b", long: "brokerAddr", arg: true, desc: "get which broker"},
			{short: "c", long: "clusterName", arg: true, desc: "get which cluster"},
		},
		oneOf:   [][]string{{"brokerAddr", "clusterName"}},
		example: "getBrokerConfig -c DefaultCluster",
		to:      brokerLine("broker", "config"),
	},
	{
		name: "updateBrokerConfig", desc: "Update broker's config", path: []string{"broker", "update-config"},
		opts: []mqOpt{
			{short: "b", long: "brokerAddr", arg: true, desc: "update which broker"},
			{short: "c", long: "clusterName", arg: true, desc: "update which cluster"},
			{short: "a", long: "updateAllBroker", arg: true, desc: "update all brokers include slave"},
			{short: "k", long: "key", arg: true, desc: "config key", required: true},
			{short: "v", long: "value", arg: true, desc: "config value", required: true},
		},
		oneOf:   [][]string{{"brokerAddr", "clusterName"}},
		example: "updateBrokerConfig -c DefaultCluster -k maxMessageSize -v 1048576",
		to: func(v mqValues) ([][]string, error) {
			c := cmdLine{"broker", "update-config", "--key=" + v.str("key"), "--value=" + v.str("value")}
			c.opt(v, "brokerAddr", "broker")
			c.opt(v, "clusterName", "cluster")
			if v.has("updateAllBroker") {
				all, err := v.boolean("updateAllBroker")
				if err != nil {
					return nil, err
				}
				if all && v.has("clusterName") {
					c = append(c, "--slaves")
				}
			}
			return one(c), nil
		},
	},
	writePermCmd("wipeWritePerm", "Wipe write perm of broker in all name server you defined in the -n param", "wipe-write-perm"),
	writePermCmd("addWritePerm", "Add write perm of broker in all name server you defined in the -n param", "add-write-perm"),
	{
		name: "updateSubGroup", desc: "Update or create subscription group", path: []string{"group", "update"},
		opts: []mqOpt{
			{short: "b", long: "brokerAddr", arg: true, desc: "create subscription group to which broker"},
			{short: "c", long: "clusterName", arg: true, desc: "create subscription group to which cluster"},
			{short: "g", long: "groupName", arg: true, desc: "consumer group name", required: true},
			{short: "s", long: "consumeEnable", arg: true, desc: "consume enable"},
			{short: "m", long: "consumeFromMinEnable", arg: true, desc: "from min offset"},
			{short: "d", long: "consumeBroadcastEnable", arg: true, desc: "broadcast"},
			{short: "o", long: "consumeMessageOrderly", arg: true, desc: "consume message orderly"},
			{short: "q", long: "retryQueueNums", arg: true, desc: "retry queue nums"},
			{short: "r", long: "retryMaxTimes", arg: true, desc: "retry max times"},
			{short: "p", long: "groupRetryPolicy", arg: true, desc: "the json string of retry policy ( exp: " +
				`{"type":"EXPONENTIAL","exponentialRetryPolicy":{"initial":5000,"max":7200000,"multiplier":2}} ` +
				`{"type":"CUSTOMIZED","customizedRetryPolicy":{"next":[1000,5000,10000]}} )`},
			{short: "i", long: "brokerId", arg: true, desc: "consumer from which broker id"},
			{short: "w", long: "whichBrokerWhenConsumeSlowly", arg: true, desc: "which broker id when consume slowly"},
			{short: "a", long: "notifyConsumerIdsChanged", arg: true, desc: "notify consumerId changed"},
			{long: "attributes", arg: true, desc: "attribute(+a=b,+c=d,-e)"},
		},
		example: "updateSubGroup -c DefaultCluster -g billing -o true -s false -r 3",
		to: func(v mqValues) ([][]string, error) {
			c := cmdLine{"group", "update", "--group=" + v.str("groupName")}
			c.opt(v, "brokerAddr", "broker")
			c.opt(v, "clusterName", "cluster")
			for _, o := range [][2]string{{"consumeEnable", "consume-enable"}, {"consumeFromMinEnable", "consume-from-min"},
				{"consumeBroadcastEnable", "consume-broadcast"}, {"consumeMessageOrderly", "consume-orderly"}, {"notifyConsumerIdsChanged", "notify-ids-changed"}} {
				if err := c.boolOpt(v, o[0], o[1]); err != nil {
					return nil, err
				}
			}
			for _, o := range [][2]string{{"retryQueueNums", "retry-queues"}, {"retryMaxTimes", "retry-max-times"},
				{"brokerId", "broker-id"}, {"whichBrokerWhenConsumeSlowly", "which-broker-when-slow"}} {
				if err := c.wholeOpt(v, o[0], o[1]); err != nil {
					return nil, err
				}
			}
			c.opt(v, "groupRetryPolicy", "retry-policy")
			c.opt(v, "attributes", "attributes")
			return one(c), nil
		},
	},
	{
		name: "deleteSubGroup", desc: "Delete subscription group from broker", path: []string{"group", "delete"},
		opts: []mqOpt{
			{short: "b", long: "brokerAddr", arg: true, desc: "delete subscription group from which broker"},
			{short: "c", long: "clusterName", arg: true, desc: "delete subscription group from which cluster"},
			{short: "g", long: "groupName", arg: true, desc: "subscription group name", required: true},
			{short: "r", long: "removeOffset", arg: true, desc: "remove offset"},
			{short: "y", long: "yes", desc: "do not ask for confirmation on a terminal (runnelctl's)"},
		},
		example: "deleteSubGroup -c DefaultCluster -g billing-old -r true",
		to: func(v mqValues) ([][]string, error) {
			if v.has("brokerAddr") {
				return nil, unsupported(v, "brokerAddr", "runnelctl deletes a group from every master of a cluster (-c) or of every cluster, not from one broker")
			}
			c := cmdLine{"group", "delete", "--group=" + v.str("groupName")}
			c.opt(v, "clusterName", "cluster")
			// mqadmin keeps the offsets unless -r true.
			remove := false
			if v.has("removeOffset") {
				var err error
				if remove, err = v.boolean("removeOffset"); err != nil {
					return nil, err
				}
			}
			if !remove {
				c = append(c, "--keep-offsets")
			}
			if v.has("yes") {
				c = append(c, "--yes")
			}
			return one(c), nil
		},
	},
	{
		name: "getConsumerConfig", desc: "Get consumer config by subscription group name", path: []string{"group", "config"},
		opts: []mqOpt{
			{short: "g", long: "groupName", arg: true, desc: "subscription group name", required: true},
		},
		example: "getConsumerConfig -g billing",
		to: func(v mqValues) ([][]string, error) {
			return one(cmdLine{"group", "config", "--group=" + v.str("groupName")}), nil
		},
	},
	{
		name: "cloneGroupOffset", desc: "Clone offset from other group", path: []string{"group", "clone-offset"},
		opts: []mqOpt{
			{short: "s", long: "srcGroup", arg: true, desc: "set source consumer group", required: true},
			{short: "d", long: "destGroup", arg: true, desc: "set destination consumer group", required: true},
			{short: "t", long: "topic", arg: true, desc: "set the topic", required: true},
			{short: "o", long: "offline", arg: true, desc: "the group or the topic is offline"},
		},
		example: "cloneGroupOffset -s billing -d billing-v2 -t orders",
		to: func(v mqValues) ([][]string, error) {
			c := cmdLine{"group", "clone-offset", "--src=" + v.str("srcGroup"), "--dest=" + v.str("destGroup"), "--topic=" + v.str("topic")}
			if err := c.boolOpt(v, "offline", "offline"); err != nil {
				return nil, err
			}
			return one(c), nil
		},
	},
	{
		name: "consumerProgress", desc: "Query consumer's progress, speed", path: []string{"group", "progress"},
		opts: []mqOpt{
			{short: "g", long: "groupName", arg: true, desc: "consumer group name"},
			{short: "t", long: "topicName", arg: true, desc: "topic name"},
			{short: "s", long: "showClientIP", arg: true, desc: "Show Client IP per Queue"},
			{short: "c", long: "cluster", arg: true, desc: "Cluster name or lmq parent topic, lmq is used to find the route.",
				note: "accepted: the route is found without it (Runnel has no LMQ)"},
		},
		example: "consumerProgress -g billing -s true",
		to: func(v mqValues) ([][]string, error) {
			c := cmdLine{"group", "progress"}
			c.opt(v, "groupName", "group")
			c.opt(v, "topicName", "topic")
			if err := c.boolOpt(v, "showClientIP", "clients"); err != nil {
				return nil, err
			}
			return one(c), nil
		},
	},
	{
		name: "consumerConnection", desc: "Query consumer's socket connection, client version and subscription", path: []string{"group", "consumers"},
		opts: []mqOpt{
			{short: "g", long: "consumerGroup", arg: true, desc: "consumer group name", required: true},
			{short: "b", long: "brokerAddr", arg: true, desc: "broker address",
				note: "accepted: the group's clients are asked of the first broker that knows them, as each sees them all"},
		},
		example: "consumerConnection -g billing",
		to: func(v mqValues) ([][]string, error) {
			return one(cmdLine{"group", "consumers", "--group=" + v.str("consumerGroup")}), nil
		},
	},
	{
		name: "consumerStatus", desc: "Query consumer's internal data structure", path: []string{"group", "consumers"},
		opts: []mqOpt{
			{short: "g", long: "consumerGroup", arg: true, desc: "consumer group name", required: true},
			{short: "i", long: "clientId", arg: true, desc: "The consumer's client id"},
			{short: "b", long: "brokerAddr", arg: true, desc: "broker address",
				note: "accepted: each client is asked through a broker it is connected to"},
			{short: "s", long: "jstack", desc: "Run jstack command in the consumer progress"},
		},
		example: "consumerStatus -g billing -i 10.0.0.7@1234 -s",
		to: func(v mqValues) ([][]string, error) {
			c := cmdLine{"group", "consumers", "--group=" + v.str("consumerGroup"), "--running"}
			c.opt(v, "clientId", "client")
			if v.has("jstack") {
				c = append(c, "--stack")
			}
			return one(c), nil
		},
	},
	{
		name: "producerConnection", desc: "Query producer's socket connection and client version", path: []string{"group", "producers"},
		opts: []mqOpt{
			{short: "g", long: "producerGroup", arg: true, desc: "producer group name", required: true},
			{short: "t", long: "topic", arg: true, desc: "topic name", required: true,
				note: "accepted: every broker is asked, not only the topic's"},
		},
		example: "producerConnection -g order-service -t orders",
		to: func(v mqValues) ([][]string, error) {
			return one(cmdLine{"group", "producers", "--group=" + v.str("producerGroup")}), nil
		},
	},
	{
		name: "resetOffsetByTime", desc: "Reset consumer offset by timestamp(without client restart)", path: []string{"group", "reset-offset"},
		opts: []mqOpt{
			{short: "g", long: "group", arg: true, desc: "set the consumer group", required: true},
			{short: "t", long: "topic", arg: true, desc: "set the topic", required: true},
			{short: "s", long: "timestamp", arg: true, desc: "set the timestamp[now|currentTimeMillis|yyyy-MM-dd#HH:mm:ss:SSS]", required: true},
			{short: "f", long: "force", arg: true, desc: "set the force rollback by timestamp switch[true|false]. Deprecated.",
				note: "accepted: resets are always forced, as mqadmin 5's"},
			{long: "cplus", desc: "reset c++ client offset. Deprecated.", note: "accepted: no effect, as in mqadmin 5"},
			{short: "b", long: "broker", arg: true, desc: "broker addr"},
			{short: "q", long: "queue", arg: true, desc: "queue id"},
			{short: "o", long: "offset", arg: true, desc: "Expect queue offset, not support old version broker"},
			{short: "c", long: "cluster", arg: true, desc: "Cluster name or lmq parent topic, lmq is used to find the route.",
				note: "accepted: the route is found without it (Runnel has no LMQ)"},
		},
		example: "resetOffsetByTime -g billing -t orders -s now",
		to: func(v mqValues) ([][]string, error) {
			for _, long := range []string{"broker", "queue", "offset"} {
				if v.has(long) {
					return nil, unsupported(v, long, "resetting one queue to an offset (-b -q -o) is not supported yet; reset every queue by time with -s")
				}
			}
			return one(cmdLine{"group", "reset-offset", "--group=" + v.str("group"), "--topic=" + v.str("topic"), "--to=" + v.str("timestamp")}), nil
		},
	},
	{
		name: "topicList", desc: "Fetch all topic list from name server", path: []string{"topic", "list"},
		opts: []mqOpt{
			{short: "c", long: "clusterModel", desc: "clusterModel"},
		},
		example: "topicList -c",
		to: func(v mqValues) ([][]string, error) {
			c := cmdLine{"topic", "list", "--all"} // mqadmin lists every topic
			if v.has("clusterModel") {
				c = append(c, "--clusters")
			}
			return one(c), nil
		},
	},
	{
		name: "topicRoute", desc: "Examine topic route info", path: []string{"topic", "route"},
		opts: []mqOpt{
			{short: "t", long: "topic", arg: true, desc: "topic name", required: true},
			{short: "l", long: "list", desc: "Use list format to print data"},
		},
		example: "topicRoute -t orders -l",
		// mqadmin prints the route's JSON unless -l.
		output: func(v mqValues) string {
			if v.has("list") {
				return ""
			}
			return "json"
		},
		to: func(v mqValues) ([][]string, error) {
			return one(cmdLine{"topic", "route", v.str("topic")}), nil
		},
	},
	{
		name: "topicStatus", desc: "Examine topic Status info", path: []string{"topic", "stats"},
		opts: []mqOpt{
			{short: "t", long: "topic", arg: true, desc: "topic name", required: true},
			{short: "c", long: "cluster", arg: true, desc: "cluster name or lmq parent topic, lmq is used to find the route.",
				note: "accepted: the route is found without it (Runnel has no LMQ)"},
		},
		example: "topicStatus -t orders",
		to: func(v mqValues) ([][]string, error) {
			return one(cmdLine{"topic", "stats", v.str("topic")}), nil
		},
	},
	{
		name: "topicClusterList", desc: "Get cluster info for topic", path: []string{"topic", "clusters"},
		opts: []mqOpt{
			{short: "t", long: "topic", arg: true, desc: "topic name", required: true},
		},
		example: "topicClusterList -t orders",
		to: func(v mqValues) ([][]string, error) {
			return one(cmdLine{"topic", "clusters", v.str("topic")}), nil
		},
	},
	{
		name: "updateTopic", desc: "Update or create topic", path: []string{"topic", "create"},
		opts: []mqOpt{
			{short: "b", long: "brokerAddr", arg: true, desc: "create topic to which broker"},
			{short: "c", long: "clusterName", arg: true, desc: "create topic to which cluster"},
			{short: "a", long: "attributes", arg: true, desc: "attribute(+a=b,+c=d,-e)"},
			{short: "t", long: "topic", arg: true, desc: "topic name", required: true},
			{short: "r", long: "readQueueNums", arg: true, desc: "set read queue nums"},
			{short: "w", long: "writeQueueNums", arg: true, desc: "set write queue nums"},
			{short: "p", long: "perm", arg: true, desc: "set topic's permission(2|4|6), intro[2:W 4:R; 6:RW]"},
			{short: "o", long: "order", arg: true, desc: "set topic's order(true|false)"},
			{short: "u", long: "unit", arg: true, desc: "is unit topic (true|false)"},
			{short: "s", long: "hasUnitSub", arg: true, desc: "has unit sub (true|false)"},
		},
		oneOf:   [][]string{{"brokerAddr", "clusterName"}},
		example: "updateTopic -c DefaultCluster -t orders -r 8 -w 8 -a +message.type=FIFO",
		to: func(v mqValues) ([][]string, error) {
			for _, long := range []string{"unit", "hasUnitSub"} {
				if err := refuseTrue(v, long, "unit topics are not supported"); err != nil {
					return nil, err
				}
			}
			c := cmdLine{"topic", "create", v.str("topic")}
			c.opt(v, "brokerAddr", "broker")
			c.opt(v, "clusterName", "cluster")
			c.opt(v, "attributes", "attributes")
			c.opt(v, "perm", "perm")
			for _, o := range [][2]string{{"readQueueNums", "read-queues"}, {"writeQueueNums", "write-queues"}} {
				if err := c.wholeOpt(v, o[0], o[1]); err != nil {
					return nil, err
				}
			}
			if err := c.boolOpt(v, "order", "order"); err != nil {
				return nil, err
			}
			return one(c), nil
		},
	},
	{
		name: "updateTopicPerm", desc: "Update topic perm", path: []string{"topic", "update-perm"},
		opts: []mqOpt{
			{short: "b", long: "brokerAddr", arg: true, desc: "create topic to which broker"},
			{short: "c", long: "clusterName", arg: true, desc: "create topic to which cluster"},
			{short: "t", long: "topic", arg: true, desc: "topic name", required: true},
			{short: "p", long: "perm", arg: true, desc: "set topic's permission(2|4|6), intro[2:W; 4:R; 6:RW]", required: true},
		},
		example: "updateTopicPerm -c DefaultCluster -t orders -p 4",
		to: func(v mqValues) ([][]string, error) {
			c := cmdLine{"topic", "update-perm", v.str("topic"), "--perm=" + v.str("perm")}
			c.opt(v, "brokerAddr", "broker")
			c.opt(v, "clusterName", "cluster")
			return one(c), nil
		},
	},
	{
		name: "deleteTopic", desc: "Delete topic from broker and NameServer", path: []string{"topic", "delete"},
		opts: []mqOpt{
			{short: "t", long: "topic", arg: true, desc: "topic name", required: true},
			{short: "c", long: "clusterName", arg: true, desc: "delete topic from which cluster",
				note: "optional here: without it, every cluster"},
			{short: "y", long: "yes", desc: "do not ask for confirmation on a terminal (runnelctl's)"},
		},
		example: "deleteTopic -c DefaultCluster -t orders",
		to: func(v mqValues) ([][]string, error) {
			c := cmdLine{"topic", "delete", v.str("topic")}
			c.opt(v, "clusterName", "cluster")
			if v.has("yes") {
				c = append(c, "--yes")
			}
			return one(c), nil
		},
	},
	{
		name: "statsAll", desc: "Topic and Consumer tps stats", path: []string{"stats", "all"},
		opts: []mqOpt{
			{short: "a", long: "activeTopic", desc: "print active topic only"},
			{short: "t", long: "topic", arg: true, desc: "print select topic only"},
		},
		example: "statsAll -t orders",
		to: func(v mqValues) ([][]string, error) {
			c := cmdLine{"stats", "all"}
			c.opt(v, "topic", "topic")
			if v.has("activeTopic") {
				c = append(c, "--active")
			}
			return one(c), nil
		},
	},
	{
		name: "queryMsgById", desc: "Query Message by Id", path: []string{"message", "get"},
		opts: []mqOpt{
			{short: "t", long: "topic", arg: true, desc: "topic name", note: "optional here: an offsetMsgId is found without it"},
			{short: "i", long: "msgId", arg: true, desc: "Message Id", required: true},
			{short: "g", long: "consumerGroup", arg: true, desc: "consumer group name"},
			{short: "d", long: "clientId", arg: true, desc: "The consumer's client id"},
			{short: "s", long: "sendMessage", arg: true, desc: "resend message"},
			{short: "u", long: "unitName", arg: true, desc: "unit name", note: "accepted: Runnel has no unit topics"},
			{short: "f", long: "bodyFormat", arg: true, desc: "print message body by the specified format",
				note: "accepted: bodies are printed as text, or quoted when not printable"},
			{short: "c", long: "cluster", arg: true, desc: "Cluster name or lmq parent topic, lmq is used to find the route.",
				note: "accepted: the route is found without it (Runnel has no LMQ)"},
		},
		example: "queryMsgById -t orders -i 7F00000100002A9F0000000000000C4E",
		to: func(v mqValues) ([][]string, error) {
			if err := refuseTrue(v, "sendMessage", "resending is not supported here; runnelctl send sends a message again"); err != nil {
				return nil, err
			}
			return messageLines(v, "message", "get")
		},
	},
	{
		name: "queryMsgByUniqueKey", desc: "Query Message by Unique key", path: []string{"message", "get"},
		opts: []mqOpt{
			{short: "i", long: "msgId", arg: true, desc: "Message Id", required: true},
			{short: "g", long: "consumerGroup", arg: true, desc: "consumer group name"},
			{short: "d", long: "clientId", arg: true, desc: "The consumer's client id"},
			{short: "t", long: "topic", arg: true, desc: "The topic of msg", required: true},
			{short: "a", long: "showAll", desc: "Print all message, the limit is 32"},
			{short: "c", long: "cluster", arg: true, desc: "Cluster name or lmq parent topic, lmq is used to find the route.",
				note: "accepted: the route is found without it (Runnel has no LMQ)"},
		},
		example: "queryMsgByUniqueKey -t orders -i AC11000100A418B4AAC2615FB1B80000 -a",
		to: func(v mqValues) ([][]string, error) {
			if v.has("showAll") {
				return one(cmdLine{"message", "query", "--unique", "--topic=" + v.str("topic"), "--key=" + v.str("msgId"), "--max=32"}), nil
			}
			return messageLines(v, "message", "get")
		},
	},
	{
		name: "queryMsgByKey", desc: "Query Message by Key", path: []string{"message", "query"},
		opts: []mqOpt{
			{short: "t", long: "topic", arg: true, desc: "Topic name", required: true},
			{short: "k", long: "msgKey", arg: true, desc: "Message Key", required: true},
			{short: "b", long: "beginTimestamp", arg: true, desc: "Begin timestamp(ms). default:0, eg:1676730526212"},
			{short: "e", long: "endTimestamp", arg: true, desc: "End timestamp(ms). default:Long.MAX_VALUE, eg:1676730526212"},
			{short: "m", long: "maxNum", arg: true, desc: "The maximum number of messages returned by the query, default:64"},
			{short: "c", long: "cluster", arg: true, desc: "Cluster name or lmq parent topic, lmq is used to find the route.",
				note: "accepted: the route is found without it (Runnel has no LMQ)"},
		},
		example: "queryMsgByKey -t orders -k order-42",
		to: func(v mqValues) ([][]string, error) {
			c := cmdLine{"message", "query", "--topic=" + v.str("topic"), "--key=" + v.str("msgKey")}
			c.opt(v, "beginTimestamp", "begin")
			c.opt(v, "endTimestamp", "end")
			if err := c.wholeOpt(v, "maxNum", "max"); err != nil {
				return nil, err
			}
			return one(c), nil
		},
	},
	{
		name: "queryMsgTraceById", desc: "Query a message trace", path: []string{"message", "trace"},
		opts: []mqOpt{
			{short: "i", long: "msgId", arg: true, desc: "Message Id", required: true},
			{short: "t", long: "traceTopic", arg: true, desc: "The name value of message trace topic"},
			{short: "b", long: "beginTimestamp", arg: true, desc: "Begin timestamp(ms). default:0, eg:1676730526212"},
			{short: "e", long: "endTimestamp", arg: true, desc: "End timestamp(ms). default:Long.MAX_VALUE, eg:1676730526212"},
			{short: "c", long: "maxNum", arg: true, desc: "The maximum number of messages returned by the query, default:64"},
		},
		example: "queryMsgTraceById -i AC11000100A418B4AAC2615FB1B80000",
		to: func(v mqValues) ([][]string, error) {
			c := cmdLine{"message", "trace", "--id=" + v.str("msgId")}
			c.opt(v, "traceTopic", "topic")
			c.opt(v, "beginTimestamp", "begin")
			c.opt(v, "endTimestamp", "end")
			if err := c.wholeOpt(v, "maxNum", "max"); err != nil {
				return nil, err
			}
			return one(c), nil
		},
	},
	{
		name: "queryMsgByOffset", desc: "Query Message by offset", path: []string{"message", "print"},
		opts: []mqOpt{
			{short: "t", long: "topic", arg: true, desc: "topic name", required: true},
			{short: "b", long: "brokerName", arg: true, desc: "Broker Name", required: true},
			{short: "i", long: "queueId", arg: true, desc: "Queue Id", required: true},
			{short: "o", long: "offset", arg: true, desc: "Queue Offset", required: true},
			{short: "f", long: "bodyFormat", arg: true, desc: "print message body by the specified format",
				note: "accepted: bodies are printed as text, or quoted when not printable"},
		},
		example: "queryMsgByOffset -t orders -b broker-a -i 0 -o 42",
		to: func(v mqValues) ([][]string, error) {
			c := cmdLine{"message", "print", "--topic=" + v.str("topic"), "--broker=" + v.str("brokerName"), "--count=1"}
			if err := c.wholeOpt(v, "queueId", "queue"); err != nil {
				return nil, err
			}
			if err := c.wholeOpt(v, "offset", "offset"); err != nil {
				return nil, err
			}
			return one(c), nil
		},
	},
	{
		name: "printMsg", desc: "Print Message Detail", path: []string{"message", "print"},
		opts: []mqOpt{
			{short: "t", long: "topic", arg: true, desc: "topic name", required: true},
			{short: "c", long: "charsetName", arg: true, desc: "CharsetName(eg: UTF-8,GBK)"},
			{short: "s", long: "subExpression", arg: true, desc: "Subscribe Expression(eg: TagA || TagB)"},
			{short: "b", long: "beginTimestamp", arg: true, desc: "Begin timestamp[currentTimeMillis|yyyy-MM-dd#HH:mm:ss:SSS]"},
			{short: "e", long: "endTimestamp", arg: true, desc: "End timestamp[currentTimeMillis|yyyy-MM-dd#HH:mm:ss:SSS]"},
			{short: "d", long: "printBody", arg: true, desc: "print body"},
			{short: "l", long: "lmqParentTopic", arg: true, desc: "Lmq parent topic, lmq is used to find the route."},
		},
		example: "printMsg -t orders -b 2024-05-01#10:00:00:000 -d false",
		to: func(v mqValues) ([][]string, error) {
			if v.has("lmqParentTopic") {
				return nil, unsupported(v, "lmqParentTopic", "Runnel has no LMQ")
			}
			if cs := strings.ToUpper(strings.ReplaceAll(v.str("charsetName"), "-", "")); v.has("charsetName") && cs != "UTF8" {
				return nil, unsupported(v, "charsetName", "bodies are printed as UTF-8 (quoted when they are not)")
			}
			c := cmdLine{"message", "print", "--topic=" + v.str("topic"), "--all"}
			c.opt(v, "subExpression", "tag")
			c.opt(v, "beginTimestamp", "begin")
			c.opt(v, "endTimestamp", "end")
			if v.has("printBody") {
				body, err := v.boolean("printBody")
				if err != nil {
					return nil, err
				}
				if !body {
					c = append(c, "--no-body")
				}
			}
			return one(c), nil
		},
	},
	{
		name: "consumeMessage", desc: "Consume message", path: []string{"message", "print"},
		opts: []mqOpt{
			{short: "t", long: "topic", arg: true, desc: "Topic name", required: true},
			{short: "b", long: "brokerName", arg: true, desc: "Broker name"},
			{short: "i", long: "queueId", arg: true, desc: "Queue Id"},
			{short: "o", long: "offset", arg: true, desc: "Queue offset"},
			{short: "g", long: "consumerGroup", arg: true, desc: "Consumer group name",
				note: "accepted: nothing is committed, as in mqadmin"},
			{short: "s", long: "beginTimestamp", arg: true, desc: "Begin timestamp[currentTimeMillis|yyyy-MM-dd#HH:mm:ss:SSS]"},
			{short: "e", long: "endTimestamp", arg: true, desc: "End timestamp[currentTimeMillis|yyyy-MM-dd#HH:mm:ss:SSS]"},
			{short: "c", long: "MessageNumber", arg: true, desc: "Number of message to be consumed"},
		},
		example: "consumeMessage -t orders -b broker-a -i 0 -o 40 -c 5",
		to: func(v mqValues) ([][]string, error) {
			c := cmdLine{"message", "print", "--topic=" + v.str("topic"), "--all"}
			c.opt(v, "brokerName", "broker")
			c.opt(v, "beginTimestamp", "begin")
			c.opt(v, "endTimestamp", "end")
			for _, o := range [][2]string{{"queueId", "queue"}, {"offset", "offset"}} {
				if err := c.wholeOpt(v, o[0], o[1]); err != nil {
					return nil, err
				}
			}
			if !v.has("MessageNumber") {
				c = append(c, "--max=128") // mqadmin's default
			}
			if err := c.wholeOpt(v, "MessageNumber", "max"); err != nil {
				return nil, err
			}
			return one(c), nil
		},
	},
	{
		name: "sendMessage", desc: "Send a message", path: []string{"send"},
		opts: []mqOpt{
			{short: "t", long: "topic", arg: true, desc: "Topic name", required: true},
			{short: "p", long: "body", arg: true, desc: "UTF-8 string format of the message body", required: true},
			{short: "k", long: "key", arg: true, desc: "Message keys"},
			{short: "c", long: "tags", arg: true, desc: "Message tags"},
			{short: "b", long: "broker", arg: true, desc: "Send message to target broker"},
			{short: "i", long: "qid", arg: true, desc: "Send message to target queue"},
			{short: "m", long: "msgTraceEnable", arg: true, desc: "Message Trace Enable, Default: false"},
		},
		example: "sendMessage -t orders -p hello -k order-42 -c created",
		to: func(v mqValues) ([][]string, error) {
			if err := refuseTrue(v, "msgTraceEnable", "runnelctl sends no trace records"); err != nil {
				return nil, err
			}
			if v.has("qid") && !v.has("broker") {
				return nil, fmt.Errorf("%s needs %s", v.flag("qid"), v.flag("broker"))
			}
			c := cmdLine{"send", "--topic=" + v.str("topic")}
			c.opt(v, "key", "keys")
			c.opt(v, "tags", "tag")
			c.opt(v, "broker", "broker")
			if err := c.wholeOpt(v, "qid", "queue"); err != nil {
				return nil, err
			}
			return one(append(c, "--", v.set["body"])), nil
		},
	},
}

// brokerLine is a command that takes -b brokerAddr or -c clusterName.
func brokerLine(path ...string) func(v mqValues) ([][]string, error) {
	return func(v mqValues) ([][]string, error) {
		c := cmdLine(path)
		c.opt(v, "brokerAddr", "broker")
		c.opt(v, "clusterName", "cluster")
		return one(c), nil
	}
}

// writePermCmd is wipeWritePerm or addWritePerm.
func writePermCmd(name, desc, sub string) *mqCmd {
	return &mqCmd{
		name: name, desc: desc, path: []string{"broker", sub},
		opts:    []mqOpt{{short: "b", long: "brokerName", arg: true, desc: "broker name", required: true}},
		example: name + " -b broker-a",
		to: func(v mqValues) ([][]string, error) {
			return one(cmdLine{"broker", sub, "--broker=" + v.str("brokerName")}), nil
		},
	}
}

// messageLines is queryMsgById's or queryMsgByUniqueKey's: each id of -i
// (mqadmin takes several, comma-separated) shown, or with -g and -d given
// to that client to consume directly.
func messageLines(v mqValues, path ...string) ([][]string, error) {
	if v.has("consumerGroup") != v.has("clientId") {
		return nil, fmt.Errorf("%s and %s go together (a client of the group consumes the message directly)", v.flag("consumerGroup"), v.flag("clientId"))
	}
	var out [][]string
	for _, id := range strings.Split(v.str("msgId"), ",") {
		if id = strings.TrimSpace(id); id == "" {
			continue
		}
		if v.has("consumerGroup") {
			c := cmdLine{"message", "consume-directly", id, "--group=" + v.str("consumerGroup"), "--client=" + v.str("clientId")}
			c.opt(v, "topic", "topic")
			out = append(out, c)
			continue
		}
		c := cmdLine(append(append([]string(nil), path...), id))
		c.opt(v, "topic", "topic")
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s %q names no message", v.flag("msgId"), v.set["msgId"])
	}
	return out, nil
}
