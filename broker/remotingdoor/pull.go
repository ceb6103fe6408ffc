package remotingdoor

import (
	"context"

	"time"

	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// handlePull serves PULL_MESSAGE (11) and LITE_PULL_MESSAGE (361). A pull
// the core holds is answered later, through the connection's channel.
func (d *Door) handlePull(ctx context.Context, c *remoting.Conn, req *protocol.Command, h *protocol.PullMessageRequestHeader) *protocol.Command {
	ch := d.channel(c)
	r := core.PullRequest{
		Group:           h.ConsumerGroup,
		Topic:           h.Topic,
		QueueID:         h.QueueID,
		QueueOffset:     h.QueueOffset,
		MaxMsgNums:      h.MaxMsgNums,
		MaxMsgBytes:     h.MaxMsgBytes,
		HasCommitOffset: protocol.PullHasCommitOffset(h.SysFlag),
		CommitOffset:    h.CommitOffset,
		Suspend:         protocol.PullHasSuspend(h.SysFlag),
		SuspendTimeout:  time.Duration(h.SuspendTimeoutMillis) * time.Millisecond,
		HasSubscription: protocol.PullHasSubscription(h.SysFlag),
		ExpressionType:  h.ExpressionType,
		Expression:      h.Subscription,
		SubVersion:      h.SubVersion,
		From:            ch,
	}
	// A held pull is answered later: the Responder owns its opaque, oneway
	// and the closed connection. Taken before the core may park it.
	later := c.Defer(ctx, req)
	res, held, err := d.core.Pull(r, func(res core.PullResult, err error) {
		_ = later.Respond(pullResponse(req, res, err))
	})
	if held {
		return nil
	}
	return pullResponse(req, res, err) // through later, if it must be

}

// pullCodes are the response codes of the pull statuses.
var pullCodes = [...]int16{
	core.PullFound:        protocol.RespSuccess,
	core.PullNoNewMessage: protocol.RespPullNotFound,
	core.PullRetry:        protocol.RespPullRetryImmediately,
	core.PullOffsetMoved:  protocol.RespPullOffsetMoved,
}

// pullResponse encodes a pull's answer.
func pullResponse(req *protocol.Command, res core.PullResult, err error) *protocol.Command {
	if err != nil {
		return failure(req, err)
	}
	resp := protocol.NewResponse(req, pullCodes[res.Status], res.Remark)
	resp.MoreExt = protocol.PullMessageResponseHeader{
		SuggestWhichBrokerID: res.SuggestWhichBrokerID,
		NextBeginOffset:      res.NextBeginOffset,
		MinOffset:            res.MinOffset,
		MaxOffset:            res.MaxOffset,
	}.Append(nil)
	if res.Status == core.PullFound {
		// The connection gives the records back once it has written them.
		resp.Body, resp.ReleaseBody = res.Messages, res.Recycle
	}
	return resp
}
