// Package queue gives the client's queue identity its names: MessageQueue
// is remoting/protocol's (one type for the wire and the client, so a queue
// from a lock or reset-offset body is the queue the client holds), with the
// canonical order and text form protocol defines for it; and the retry
// topic prefix.
//
// This package imports no network code and nothing from broker, namesrv or
// store.
package queue

import (
	"slices"
	"strings"

	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// MessageQueue names one queue of a topic on one broker. Its String is
// Java's MessageQueue.toString, which hash-based allocation depends on.
type MessageQueue = protocol.MessageQueue

// Compare orders queues by topic, then broker name, then queue id, returning
// -1, 0 or +1: the order every RocketMQ client sorts queues in before
// allocation.
func Compare(a, b MessageQueue) int { return message.CompareQueues(a, b) }

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
