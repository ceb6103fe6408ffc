package client

import (
	"context"
	"fmt"

	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// Recalling a timer message (RocketMQ 5.3): the broker answers the send
// of a timer message (DeliverAt, DeliverAfter) with a recall handle,
// SendResult.RecallHandle; RECALL_MESSAGE with it, before the message
// falls due, withdraws it. The handle names the broker that holds the
// message (message.RecallHandle), and the recall goes there, as Java's
// DefaultMQProducerImpl.recallMessage sends it.

// Recall withdraws the timer message that handle, its send's
// SendResult.RecallHandle, names, so that no consumer receives it, and
// returns its MsgID. Any producer may recall a message of topic, not only
// the one that sent it. A handle that does not parse fails at once with
// ErrBadRecallHandle; a handle the broker refuses (another topic's or
// broker's, or one whose message is already due or delivered) is a
// *BrokerError with the broker's code and remark. It is not retried,
// but for a failure that says the broker's master may have moved (no
// connection, a slave's refusal): the route is read again at once and,
// when it names another master, the recall goes there once more (a recall
// is idempotent: a second one of a handle withdraws nothing more).
//
// The broker cannot tell a handle it never issued from one it did, as in
// RocketMQ: a well-formed handle of topic and of a broker of topic's route,
// due in the future, is accepted and withdraws nothing if nothing of its
// id falls due then. A recall that reaches the broker as the message is
// delivered withdraws nothing either.
func (p *Producer) Recall(ctx context.Context, topic, handle string) (string, error) {
	inst, err := p.instance()
	if err != nil {
		return "", err
	}
	if err := validateTopic(topic); err != nil {
		return "", err
	}
	h, err := message.DecodeRecallHandle(handle)
	if err != nil {
		return "", fmt.Errorf("client: recall on %s: %w", topic, err)
	}
	ctx, cancel := context.WithTimeout(ctx, p.cfg.SendTimeout)
	defer cancel()
	broker, addr, err := inst.recallBroker(ctx, topic, h.Broker)
	if err != nil {
		return "", err
	}
	rh := protocol.RecallMessageRequestHeader{ProducerGroup: p.cfg.Group, Topic: topic, RecallHandle: handle, BrokerName: h.Broker}
	resp, err := inst.recall(ctx, broker, addr, &rh)
	if err != nil && inst.recoverRoute(ctx, topic, broker, addr, err, false) {
		addr = inst.routes.masterAddr(broker)
		resp, err = inst.recall(ctx, broker, addr, &rh)
	}
	if err != nil {
		return "", err
	}
	var ans protocol.RecallMessageResponseHeader
	if err := ans.Decode(resp.ExtFields); err != nil {
		return "", fmt.Errorf("client: recall to %s (%s): %w", broker, addr, err)
	}
	return ans.MsgID, nil
}

// recall sends one recall to broker's master at addr and returns its
// successful answer, else the failure as an error.
func (in *instance) recall(ctx context.Context, broker, addr string, rh *protocol.RecallMessageRequestHeader) (*protocol.Command, error) {
	resp, err := in.invoke(ctx, addr, protocol.NewRequest(protocol.ReqRecallMessage, rh.Encode(), nil))
	if err != nil {
		return nil, transportError("recall", broker, addr, err)
	}
	if resp.Code != protocol.RespSuccess {
		return nil, brokerError("recall", broker, addr, resp)
	}
	return resp, nil
}

// recallBroker returns the broker to send a recall of a message of topic
// held by broker to, and its master's address: broker's, read from topic's
// route when no route known yet names it. When that route does not name it
// either, a broker of the route is asked, as Java asks: a RocketMQ proxy
// may serve brokers its routes do not name, and a broker that does not
// hold the message refuses the recall, saying so.
func (in *instance) recallBroker(ctx context.Context, topic, broker string) (name, addr string, err error) {
	if a := in.routes.masterAddr(broker); a != "" {
		return broker, a, nil
	}
	r, err := in.updateRoute(ctx, topic)
	if err != nil {
		return "", "", err
	}
	if a := in.routes.masterAddr(broker); a != "" {
		return broker, a, nil
	}
	for _, b := range r.data.BrokerDatas {
		if a := b.MasterAddr(); a != "" {
			return b.BrokerName, a, nil
		}
	}
	return "", "", fmt.Errorf("%w: %s, and the route of %s names no master", ErrNoBroker, broker, topic)
}
