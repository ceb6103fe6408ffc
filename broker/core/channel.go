package core

import (
	"context"
	"errors"

	"github.com/runnelmq/runnel/broker/clients"
	"github.com/runnelmq/runnel/broker/transaction"
	"github.com/runnelmq/runnel/message"
)

// Channel is a connected client as the core sees it: whatever front door
// it came through (a remoting connection, a gRPC stream) implements it. Calls to a
// client never hold a goroutine while the client thinks: they take a done
// function that runs exactly once, with the answer, the failure, or
// ErrClientTimeout.
type Channel interface {
	// ID is unique among the front door's live connections.
	ID() uint64
	// RemoteAddr is the client's address, for remarks and tools.
	RemoteAddr() string
	// Closed reports whether the connection is gone.
	Closed() bool

	// NotifyConsumerIDsChanged tells a consumer its group's membership
	// changed, so it rebalances now (oneway).
	NotifyConsumerIDsChanged(group string)
	// ResetOffset pushes new offsets of a topic to a consumer (oneway).
	ResetOffset(topic, group string, timestamp int64, table map[message.Queue]int64)
	// CheckTransactionState asks a producer how a transaction ended
	// (oneway); msg is the half in the stored-message encoding.
	CheckTransactionState(c transaction.Check, msg []byte)

	// ConsumerRunningInfo asks a consumer for its running info.
	ConsumerRunningInfo(ctx context.Context, group, clientID string, jstack bool, done func(ClientReply, error)) error
	// ConsumeMessageDirectly has a consumer run its listener on msg (the
	// stored-message encoding).
	ConsumeMessageDirectly(ctx context.Context, r DirectConsume, msg []byte, done func(ClientReply, error)) error
	// ConsumerStatus asks a consumer for its offsets of a topic; table is
	// its raw messageQueueTable.
	ConsumerStatus(ctx context.Context, topic, group string, done func(table []byte, err error)) error
	// PushReply hands a reply message to the client that sent the request.
	PushReply(ctx context.Context, r PushedReply, done func(ClientReply, error)) error
}

// NoCallbacks is the half of a Channel whose client takes no calls from
// the broker (a gRPC call's own channel, a test door's request): the
// oneway pushes are dropped and the calls fail with ErrNoCallbacks. A
// Channel embeds it beside its ID, RemoteAddr and Closed.
type NoCallbacks struct{}

// ErrNoCallbacks is the failure of a call to a client that takes none.
var ErrNoCallbacks = errors.New("core: the client takes no calls from the broker")

func (NoCallbacks) NotifyConsumerIDsChanged(string)                            {}
func (NoCallbacks) ResetOffset(string, string, int64, map[message.Queue]int64) {}
func (NoCallbacks) CheckTransactionState(transaction.Check, []byte)            {}
func (NoCallbacks) ConsumerRunningInfo(context.Context, string, string, bool, func(ClientReply, error)) error {
	return ErrNoCallbacks
}
func (NoCallbacks) ConsumeMessageDirectly(context.Context, DirectConsume, []byte, func(ClientReply, error)) error {
	return ErrNoCallbacks
}
func (NoCallbacks) ConsumerStatus(context.Context, string, string, func([]byte, error)) error {
	return ErrNoCallbacks
}
func (NoCallbacks) PushReply(context.Context, PushedReply, func(ClientReply, error)) error {
	return ErrNoCallbacks
}

// liveChannels returns the open channels of a table listing.
func liveChannels(chans []clients.Channel[Channel]) []Channel {
	out := make([]Channel, 0, len(chans))
	for _, ch := range chans {
		if ch.Conn != nil && !ch.Conn.Closed() {
			out = append(out, ch.Conn)
		}
	}
	return out
}
