package admin

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// ResetPosition says where ResetOffset moves a group.
type ResetPosition int

const (
	// ResetToTime moves each queue to its first message stored at or after
	// ResetTarget.Time.
	ResetToTime ResetPosition = iota
	// ResetToEarliest moves each queue to its oldest message.
	ResetToEarliest
	// ResetToLatest moves each queue past its newest message.
	ResetToLatest
)

// ResetTarget is a ResetOffset destination.
type ResetTarget struct {
	Position ResetPosition
	Time     time.Time // for ResetToTime
}

func (t ResetTarget) String() string {
	switch t.Position {
	case ResetToEarliest:
		return "earliest"
	case ResetToLatest:
		return "latest"
	}
	return t.Time.UTC().Format(time.RFC3339Nano)
}

// timestamp is the time the broker-side reset searches for. The broker
// protocol only knows timestamps: earliest is the epoch, latest is now.
func (t ResetTarget) timestamp(now time.Time) int64 {
	switch t.Position {
	case ResetToEarliest:
		return 0
	case ResetToLatest:
		return now.UnixMilli()
	}
	return t.Time.UnixMilli()
}

// Reset methods reported in QueueReset.Method.
const (
	// ResetByBroker: the broker reset its offsets and told the group's
	// online consumers (INVOKE_BROKER_TO_RESET_OFFSET).
	ResetByBroker = "broker"
	// ResetDirect: the offset was committed directly with
	// UPDATE_CONSUMER_OFFSET. Consumers that are online keep their own
	// position and overwrite it at their next commit; stop them first.
	ResetDirect = "direct"
)

// QueueReset is one queue's new offset.
type QueueReset struct {
	Topic   string `json:"topic"`
	Broker  string `json:"brokerName"`
	QueueID int32  `json:"queueId"`
	Offset  int64  `json:"offset"`
	Method  string `json:"method"` // ResetByBroker or ResetDirect
}

// ResetOffset moves group's offsets on topic, on every master of the
// topic's route, as mqadmin resetOffsetByTime does: first
// INVOKE_BROKER_TO_RESET_OFFSET (forced), which a RocketMQ broker carries
// out and pushes to the online consumers; where the broker answers
// CONSUMER_NOT_ONLINE or does not support the request, each queue's target
// offset is looked up (GET_MIN_OFFSET, GET_MAX_OFFSET or
// SEARCH_OFFSET_BY_TIMESTAMP) and committed with UPDATE_CONSUMER_OFFSET.
// Results are sorted by broker and queue.
func (a *Admin) ResetOffset(ctx context.Context, group, topic string, to ResetTarget) ([]QueueReset, error) {
	if err := checkName("group", group); err != nil {
		return nil, err
	}
	if to.Position == ResetToTime && to.Time.IsZero() {
		return nil, fmt.Errorf("%w: reset time is zero", ErrBadArgument)
	}
	route, err := a.TopicRoute(ctx, topic)
	if err != nil {
		return nil, err
	}
	op := fmt.Sprintf("reset offset of group %q on topic %q to %s", group, topic, to)
	h := protocol.ResetOffsetRequestHeader{Topic: topic, Group: group, Timestamp: to.timestamp(time.Now()),
		IsForce: true, QueueID: -1, Offset: -1}
	var out []QueueReset
	for _, bd := range route.BrokerDatas {
		n := Node{Name: bd.BrokerName, Addr: bd.MasterAddr()}
		if n.Addr == "" {
			return nil, fmt.Errorf("admin: %s: %w: broker group %q has no master", op, ErrNoBroker, bd.BrokerName)
		}
		resp, err := a.callBroker(ctx, op, n, protocol.NewRequest(protocol.ReqInvokeBrokerToResetOffset, h.Encode(), nil))
		if err != nil {
			return nil, err
		}
		switch resp.Code {
		case protocol.RespSuccess:
			body, err := protocol.DecodeResetOffsetBody(resp.Body)
			if err != nil {
				return nil, fmt.Errorf("admin: %s: %s: %w", op, n, err)
			}
			for mq, off := range body.OffsetTable {
				out = append(out, QueueReset{Topic: mq.Topic, Broker: mq.BrokerName, QueueID: mq.QueueID, Offset: off, Method: ResetByBroker})
			}
		case protocol.RespConsumerNotOnline, protocol.RespRequestCodeNotSupported:
			rows, err := a.resetDirect(ctx, op, n, group, topic, queuesOf(route, bd.BrokerName), to)
			if err != nil {
				return nil, err
			}
			out = append(out, rows...)
		default:
			return nil, responseError(op, n.String(), resp)
		}
	}
	slices.SortFunc(out, func(x, y QueueReset) int {
		return cmp.Or(cmp.Compare(x.Broker, y.Broker), cmp.Compare(x.QueueID, y.QueueID))
	})
	return out, nil
}

// queuesOf returns the number of read queues broker has in route.
func queuesOf(route *protocol.TopicRouteData, broker string) int {
	for _, qd := range route.QueueDatas {
		if qd.BrokerName == broker {
			return qd.ReadQueueNums
		}
	}
	return 0
}

// resetDirect looks up and commits the target offset of each queue.
func (a *Admin) resetDirect(ctx context.Context, op string, n Node, group, topic string, queues int, to ResetTarget) ([]QueueReset, error) {
	out := make([]QueueReset, 0, queues)
	for q := range int32(queues) {
		var req *protocol.Command
		qh := protocol.QueueRequestHeader{Topic: topic, QueueID: q}
		switch to.Position {
		case ResetToEarliest:
			req = protocol.NewRequest(protocol.ReqGetMinOffset, qh.Encode(), nil)
		case ResetToLatest:
			req = protocol.NewRequest(protocol.ReqGetMaxOffset, qh.Encode(), nil)
		default:
			req = protocol.NewRequest(protocol.ReqSearchOffsetByTimestamp,
				protocol.SearchOffsetRequestHeader{Topic: topic, QueueID: q, Timestamp: to.Time.UnixMilli()}.Encode(), nil)
		}
		off, err := a.offsetAnswer(ctx, fmt.Sprintf("%s: queue %d", op, q), n, req)
		if err != nil {
			return nil, err
		}
		commit := protocol.UpdateConsumerOffsetRequestHeader{ConsumerGroup: group, Topic: topic, QueueID: q, CommitOffset: off}
		if _, err := a.callBrokerOK(ctx, op, n, protocol.NewRequest(protocol.ReqUpdateConsumerOffset, commit.Encode(), nil)); err != nil {
			return nil, err
		}
		out = append(out, QueueReset{Topic: topic, Broker: n.Name, QueueID: q, Offset: off, Method: ResetDirect})
	}
	return out, nil
}
