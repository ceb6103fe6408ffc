// Package queue owns the identity of a message queue as the client sees it:
// the (topic, broker name, queue id) triple, its canonical text form and its
// canonical order.
//
// Invariants: the order defined by Compare is the one RocketMQ clients (Java
// and the official Go client) sort queues by before allocation — topic, then
// broker name, then queue id — so every member of a consumer group, whatever
// its implementation, sees the same list and computes the same split. String
// is byte-for-byte the Java MessageQueue.toString form, because the
// consistent-hash strategy hashes it and must agree with other clients.
//
// This package imports no network code and nothing from broker, namesrv or
// store.
package queue

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// MessageQueue names one queue of a topic on one broker.
type MessageQueue struct {
	Topic      string `json:"topic"`
	BrokerName string `json:"brokerName"`
	QueueID    int    `json:"queueId"`
}

// String returns the Java MessageQueue.toString form,
// "MessageQueue [topic=T, brokerName=B, queueId=N]". Hash-based allocation
// depends on it being exactly this.
func (mq MessageQueue) String() string {
	return fmt.Sprintf("MessageQueue [topic=%s, brokerName=%s, queueId=%d]", mq.Topic, mq.BrokerName, mq.QueueID)
}

// Compare orders queues by topic, then broker name, then queue id, returning
// -1, 0 or +1.
func Compare(a, b MessageQueue) int {
	if c := strings.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	if c := strings.Compare(a.BrokerName, b.BrokerName); c != 0 {
		return c
	}
	return cmp.Compare(a.QueueID, b.QueueID)
}

// Sort sorts mqs in place into canonical order (see Compare).
func Sort(mqs []MessageQueue) { slices.SortFunc(mqs, Compare) }

// Sorted returns a sorted copy of mqs, leaving mqs untouched.
func Sorted(mqs []MessageQueue) []MessageQueue {
	out := slices.Clone(mqs)
	Sort(out)
	return out
}

// RetryGroupTopicPrefix starts the name of every consumer group's retry topic
// ("%RETRY%" + group).
const RetryGroupTopicPrefix = "%RETRY%"

// IsRetryTopic reports whether topic is a consumer group's retry topic.
func IsRetryTopic(topic string) bool { return strings.HasPrefix(topic, RetryGroupTopicPrefix) }
