package routeinfo

import (
	"slices"
	"strings"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// topicQueues is one topic's queue data: one entry per broker group
// serving it, sorted by broker name. A topic has a few groups at most, so
// a sorted slice is both smaller than a map and already in the order a
// route lists them: a map of one entry takes a whole group of eight slots
// (about 570 bytes of QueueData and keys for the collector to scan, per
// topic) where the slice takes one 48-byte element.
type topicQueues []protocol.QueueData

func (qs topicQueues) find(broker string) (int, bool) {
	return slices.BinarySearchFunc(qs, broker, func(qd protocol.QueueData, b string) int {
		return strings.Compare(qd.BrokerName, b)
	})
}

func (qs topicQueues) has(broker string) bool {
	_, ok := qs.find(broker)
	return ok
}

// put writes qd in its group's place and returns the list, which may be a
// new slice.
func (qs topicQueues) put(qd protocol.QueueData) topicQueues {
	i, ok := qs.find(qd.BrokerName)
	if ok {
		qs[i] = qd
		return qs
	}
	return slices.Insert(qs, i, qd)
}

// del removes broker's entry and returns the list and whether it had one.
func (qs topicQueues) del(broker string) (topicQueues, bool) {
	i, ok := qs.find(broker)
	if !ok {
		return qs, false
	}
	return slices.Delete(qs, i, i+1), true
}
