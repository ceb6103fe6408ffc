package cluster

import (
	"context"
	"fmt"

	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// DeadLetter moves message m, stored on broker i, into group's dead-letter
// topic at once, as a consumer's send-back does once its retries are used
// up (CONSUMER_SEND_MSG_BACK with delay level -1): a test gets dead letters
// without waiting out a consumer's retries.
func (c *Cluster) DeadLetter(ctx context.Context, i int, group string, m *protocol.MessageExt) error {
	rc := remoting.NewClient(remoting.DefaultClientConfig())
	defer rc.Close()
	h := protocol.ConsumerSendMsgBackRequestHeader{Offset: m.CommitLogOffset, Group: group, DelayLevel: -1,
		OriginMsgID: m.MsgID, OriginTopic: m.Topic, MaxReconsumeTimes: -1}
	resp, err := rc.Invoke(ctx, c.BrokerAddr(i), protocol.NewRequest(protocol.ReqConsumerSendMsgBack, h.Encode(), nil))
	if err != nil {
		return fmt.Errorf("cluster: dead letter %s: %w", m.MsgID, err)
	}
	if resp.Code != protocol.RespSuccess {
		return fmt.Errorf("cluster: dead letter %s: %s: %s", m.MsgID, protocol.ResponseCodeName(resp.Code), resp.Remark)
	}
	return nil
}
