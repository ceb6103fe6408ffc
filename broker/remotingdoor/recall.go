package remotingdoor

import (
	"context"

	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// handleRecall serves RECALL_MESSAGE (370, RocketMQ 5.3's
// RecallMessageProcessor): the producer gives back the recallHandle its
// send of a timer message was answered with, before the message falls
// due, and the answer names the message (msgId, its UNIQ_KEY).
func (d *Door) handleRecall(_ context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.RecallMessageRequestHeader) *protocol.Command {
	id, err := d.core.Recall(h.Topic, h.RecallHandle, h.ProducerGroup)
	if err != nil {
		return failure(req, err)
	}
	return success(req, protocol.RecallMessageResponseHeader{MsgID: id}.Encode(), nil)
}
