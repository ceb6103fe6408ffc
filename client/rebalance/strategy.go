package rebalance

import (
	"errors"
	"slices"

	"github.com/runnelmq/runnel/client/queue"
)

// Strategy splits a topic's queues among a consumer group's clients.
type Strategy interface {
	// Name is the RocketMQ name of the strategy ("AVG", "AVG_BY_CIRCLE",
	// "CONSISTENT_HASH", "CONFIG", "MACHINE_ROOM", "MACHINE_ROOM_NEARBY-AVG").
	Name() string
	// Allocate returns the queues of mqAll that currentCID should consume.
	// mqAll must be in canonical order (queue.Sort) and cidAll sorted; both
	// are left untouched. See the package doc for the error contract.
	Allocate(group, currentCID string, mqAll []queue.MessageQueue, cidAll []string) ([]queue.MessageQueue, error)
}

var (
	// ErrEmptyClientID means Allocate was called with an empty current client
	// id.
	ErrEmptyClientID = errors.New("rebalance: current client id is empty")
	// ErrNoQueues means Allocate was called with no message queues.
	ErrNoQueues = errors.New("rebalance: no message queues to allocate")
	// ErrNoClients means Allocate was called with an empty client id list.
	ErrNoClients = errors.New("rebalance: no client ids to allocate to")
	// ErrBadConfig means the strategy itself is misconfigured; the wrapping
	// error names the field.
	ErrBadConfig = errors.New("rebalance: bad strategy configuration")
)

// check applies the input contract shared by all strategies. It returns the
// index of currentCID in cidAll, or -1 when the client is not a member (an
// empty allocation, not an error).
func check(currentCID string, mqAll []queue.MessageQueue, cidAll []string) (int, error) {
	switch {
	case currentCID == "":
		return -1, ErrEmptyClientID
	case len(mqAll) == 0:
		return -1, ErrNoQueues
	case len(cidAll) == 0:
		return -1, ErrNoClients
	}
	return slices.Index(cidAll, currentCID), nil
}

// member is every strategy's frame whose allocation cannot fail: the
// input contract (check), an empty allocation for a client that is not a
// member, and otherwise alloc of its index in cidAll.
func member(currentCID string, mqAll []queue.MessageQueue, cidAll []string, alloc func(index int) []queue.MessageQueue) ([]queue.MessageQueue, error) {
	index, err := check(currentCID, mqAll, cidAll)
	if err != nil || index < 0 {
		return []queue.MessageQueue{}, err
	}
	return alloc(index), nil
}

// Averagely gives each client a contiguous run of queues, the first
// len(mqAll) % len(cidAll) clients one queue more than the others; with more
// clients than queues the surplus clients get nothing. Exactly Java's
// AllocateMessageQueueAveragely ("AVG") and the official Go client's
// AllocateByAveragely. This is RocketMQ's default strategy.
type Averagely struct{}

// Name implements Strategy.
func (Averagely) Name() string { return "AVG" }

// Allocate implements Strategy.
func (Averagely) Allocate(_, currentCID string, mqAll []queue.MessageQueue, cidAll []string) ([]queue.MessageQueue, error) {
	return member(currentCID, mqAll, cidAll, func(index int) []queue.MessageQueue {
		start, n := averageRange(index, len(mqAll), len(cidAll))
		return slices.Clone(mqAll[start : start+n])
	})
}

// averageRange is Java's arithmetic for client index of nc clients over nq
// queues: clients below mod = nq%nc take ceil(nq/nc) queues, the rest
// floor(nq/nc), each run starting where the previous one ended. When
// nq <= nc, client i takes queue i if it exists.
func averageRange(index, nq, nc int) (start, n int) {
	mod := nq % nc
	size := nq / nc
	switch {
	case nq <= nc:
		size = 1
	case mod > 0 && index < mod:
		size++
	}
	if mod > 0 && index < mod {
		start = index * size
	} else {
		start = index*size + mod
	}
	// Java takes min(size, nq-start) and wraps indexes modulo nq; the wrap is
	// never reached because start+n <= nq, and n is <= 0 only for surplus
	// clients when nq < nc.
	n = max(0, min(size, nq-start))
	if n == 0 {
		start = 0
	}
	return start, n
}

// AveragelyByCircle deals queues out like cards: client i takes queues i,
// i+len(cidAll), i+2*len(cidAll), ... Exactly Java's
// AllocateMessageQueueAveragelyByCircle ("AVG_BY_CIRCLE") and the official Go
// client's AllocateByAveragelyCircle.
type AveragelyByCircle struct{}

// Name implements Strategy.
func (AveragelyByCircle) Name() string { return "AVG_BY_CIRCLE" }

// Allocate implements Strategy.
func (AveragelyByCircle) Allocate(_, currentCID string, mqAll []queue.MessageQueue, cidAll []string) ([]queue.MessageQueue, error) {
	return member(currentCID, mqAll, cidAll, func(index int) []queue.MessageQueue {
		out := make([]queue.MessageQueue, 0, len(mqAll)/len(cidAll)+1)
		for i := index; i < len(mqAll); i += len(cidAll) {
			out = append(out, mqAll[i])
		}
		return out
	})
}

// ByConfig always returns Queues, whoever asks and whatever the topic's
// queues are, like Java's AllocateMessageQueueByConfig ("CONFIG") and the
// official Go client's AllocateByConfig. It checks nothing: it is meant for a
// consumer that is told exactly what to read.
type ByConfig struct {
	// Queues is the fixed allocation. Default: none.
	Queues []queue.MessageQueue
}

// Name implements Strategy.
func (ByConfig) Name() string { return "CONFIG" }

// Allocate implements Strategy.
func (c ByConfig) Allocate(_, _ string, _ []queue.MessageQueue, _ []string) ([]queue.MessageQueue, error) {
	if c.Queues == nil {
		return []queue.MessageQueue{}, nil
	}
	return slices.Clone(c.Queues), nil
}
