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
func (d *Door) handleRecall(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	topic, bad := requiredExt(req, "topic")
	if bad != nil {
		return bad
	}
	handle, bad := requiredExt(req, "recallHandle")
	if bad != nil {
		return bad
	}
	id, err := d.core.Recall(topic, handle, req.Ext("producerGroup"))
	if err != nil {
		return failure(req, err)
	}
	return success(req, map[string]string{"msgId": id}, nil)
}
