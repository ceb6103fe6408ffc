package message

import (
	"cmp"
	"strconv"
	"strings"
)

// Queue identifies one queue of a topic on one broker (RocketMQ's
// MessageQueue): the broker's locks, offsets and stats name queues by it,
// the wire carries it in lock, stats and reset-offset bodies, and the
// client holds it.
//
// Invariants: CompareQueues is the order RocketMQ clients (Java and the
// official Go client) sort queues in before allocation (topic, then broker
// name, then queue id), so every member of a consumer group, whatever its
// implementation, computes the same split; String is byte for byte Java's
// MessageQueue.toString, which the consistent-hash strategy hashes.
type Queue struct {
	Topic      string `json:"topic"`
	BrokerName string `json:"brokerName"`
	QueueID    int32  `json:"queueId"`
}

// String returns the Java MessageQueue.toString form,
// "MessageQueue [topic=T, brokerName=B, queueId=N]".
func (q Queue) String() string {
	return "MessageQueue [topic=" + q.Topic + ", brokerName=" + q.BrokerName + ", queueId=" + strconv.Itoa(int(q.QueueID)) + "]"
}

// CompareQueues orders queues by topic, then broker name, then queue id
// (numerically), returning -1, 0 or +1.
func CompareQueues(a, b Queue) int {
	if c := strings.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	if c := strings.Compare(a.BrokerName, b.BrokerName); c != 0 {
		return c
	}
	return cmp.Compare(a.QueueID, b.QueueID)
}
