package core

import (
	"time"

	"github.com/runnelmq/runnel/broker/due"
	"github.com/runnelmq/runnel/message"
)

// Recall withdraws a timer message before it falls due, given the recall
// handle its send was answered with (RocketMQ 5.3's
// RecallMessageProcessor): it stores a marker that waits beside the
// message and makes the timer skip it (broker/due's recall.go). It
// returns the message's id. A handle that does not parse, names another
// topic or broker, or a time already past (or beyond the max delay) is
// refused as Java refuses it; a recall that races the message's delivery
// and loses withdraws nothing, as in Java.
func (c *Core) Recall(topic, handle, producerGroup string) (string, error) {
	if !c.be.IsLeader() {
		return "", c.serviceNotAvailable()
	}
	if _, ok := c.topics.get(topic); !ok {
		return "", errorf(TopicNotFound, "recall failed, the topic[%s] not exist", topic)
	}
	h, err := message.DecodeRecallHandle(handle)
	if err != nil {
		return "", errorf(IllegalOperation, "recall failed, %v", err)
	}
	if h.Topic != topic {
		return "", refuse(IllegalOperation, "recall failed, topic not match")
	}
	if h.Broker != c.cfg.BrokerName {
		return "", refuse(IllegalOperation, "recall failed, the handle is of broker "+h.Broker)
	}
	left := time.Duration(h.Due-c.cfg.Now().UnixMilli()) * time.Millisecond
	if left <= 0 || left >= c.timerMaxDelay() {
		return "", refuse(IllegalOperation, "recall failed, timestamp invalid")
	}
	r := SendRequest{
		ProducerGroup: producerGroup, Topic: topic, QueueID: 0, MaxReconsumeTimes: -1,
		BornTimestamp: c.cfg.Now().UnixMilli(), BornHost: c.host(), Client: "recall",
		Messages: []SendMessage{{Properties: due.RecallMarker(h), Body: []byte("0")}},
	}
	if _, err := c.Send(r); err != nil {
		return "", err
	}
	return h.UniqKey, nil
}
