package core

import (
	"errors"
	"math/rand/v2"
	"net/netip"
	"strings"

	"github.com/runnelmq/runnel/broker/due"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store"
	"github.com/runnelmq/runnel/topicconf"
)

// defaultRegion is the MSG_REGION a send answer carries (RocketMQ
// BrokerConfig.regionId).
const defaultRegion = "DefaultRegion"

// SendRequest is one send: a single message, or the messages of a batch,
// all to one queue.
type SendRequest struct {
	ProducerGroup string
	Topic         string
	// DefaultTopic and DefaultTopicQueueNums shape an auto-created topic.
	DefaultTopic          string
	DefaultTopicQueueNums int32
	// QueueID < 0 lets the broker choose.
	QueueID        int32
	SysFlag        int32
	BornTimestamp  int64
	ReconsumeTimes int32
	// MaxReconsumeTimes < 0 means not given (the group's default).
	MaxReconsumeTimes int32
	// Batch is a SEND_BATCH_MESSAGE: Messages are its inner messages.
	Batch    bool
	Messages []SendMessage
	// BornHost is the producer's address; Client its text for remarks.
	BornHost netip.AddrPort
	Client   string
}

// SendMessage is one message of a send.
type SendMessage struct {
	Flag       int32
	Properties map[string]string
	Body       []byte
}

// SendResult says where a send went.
type SendResult struct {
	// MsgIDs are the offsetMsgIds of the stored messages, in order.
	MsgIDs      []string
	QueueID     int32
	QueueOffset int64
	// TransactionID is the unique key of a single message.
	TransactionID string
	Region        string
	// RecallHandle withdraws a single timer message before it falls due
	// (Recall); empty for any other send.
	RecallHandle string
}

// Send stores a send, following Java's SendMessageProcessor: check the
// topic (creating it from the default topic when allowed), check the
// messages, apply the retry/DLQ, delay and transaction rewrites, store,
// and say where they went.
func (c *Core) Send(r SendRequest) (SendResult, error) {
	p, err := c.prepareSend(&r)
	if err != nil {
		return SendResult{}, err
	}
	res, err := c.put(p.msgs)
	if err != nil {
		return SendResult{}, c.putError(err)
	}
	out := p.result(res)
	if !p.batch {
		out.RecallHandle, _ = due.RecallHandleOf(p.msgs[0], c.cfg.BrokerName)
	}
	return out, nil
}

// preparedSend is a send checked and rewritten, ready to store.
type preparedSend struct {
	msgs    []*message.MessageExt
	queueID int32
	batch   bool
}

// result says where p went, given the store's results for its messages.
func (p *preparedSend) result(res []store.PutResult) SendResult {
	out := SendResult{
		MsgIDs:      make([]string, len(res)),
		QueueID:     p.queueID,
		QueueOffset: res[0].QueueOffset,
		Region:      defaultRegion,
	}
	for i, pr := range res {
		out.MsgIDs[i] = pr.OffsetMsgID()
	}
	if !p.batch {
		out.TransactionID = p.msgs[0].Properties[message.PropertyUniqClientMessageIDKey]
	}
	return out
}

// prepareSend is everything Send does before the store: the checks, the
// queue, and the messages as they will be stored.
func (c *Core) prepareSend(r *SendRequest) (preparedSend, error) {
	var none preparedSend
	if !c.be.IsLeader() {
		return none, c.serviceNotAvailable() // a slave's answer (backend.go)
	}
	queueID, err := c.sendQueue(r)
	if err != nil {
		return none, err
	}
	if len(r.Messages) == 0 {
		return none, refuse(IllegalMessage, "the message is illegal: no message in the request")
	}
	if err := c.checkBodies(r); err != nil {
		return none, err
	}
	if r.Batch && r.SysFlag&message.SysFlagTransactionMask == message.SysFlagTransactionPrep {
		return none, refuse(IllegalMessage, "batch request does not support transaction messages")
	}

	proto := c.sendRecord(r, queueID)
	msgs := make([]*message.MessageExt, 0, len(r.Messages))
	half := false // a transaction's half message (transaction.go)
	if r.Batch {
		if strings.HasPrefix(r.Topic, retryGroupPrefix) {
			return none, errorf(IllegalMessage, "batch request does not support retry group %s", r.Topic)
		}
		for _, m := range r.Messages {
			if m.Properties[message.PropertyDelayTimeLevel] != "" {
				return none, refuse(IllegalMessage, "TimeDelayLevel is not supported for batched messages")
			}
			ext := proto
			ext.Message = message.Message{Topic: r.Topic, Flag: m.Flag, Properties: m.Properties, Body: m.Body}
			msgs = append(msgs, &ext)
		}
	} else {
		m := r.Messages[0]
		props := m.Properties
		if props == nil {
			props = map[string]string{}
		}
		if props[message.PropertyUniqClientMessageIDKey] == "" {
			props[message.PropertyUniqClientMessageIDKey] = c.newUniqID()
		}
		props[message.PropertyCluster] = c.cfg.ClusterName
		ext := proto
		ext.Message = message.Message{Topic: r.Topic, Flag: m.Flag, Properties: props, Body: m.Body}
		msgs = append(msgs, &ext)
		// A consumer's own re-send to %RETRY% (the official clients'
		// send-back fallback) copies TRAN_MSG from a committed message; it
		// is a retry, not a new transaction.
		half = isHalfSend(r.SysFlag, props) && !strings.HasPrefix(r.Topic, retryGroupPrefix)
	}
	if half {
		// Stored in the half queue until END_TRANSACTION; a DELAY applies at commit.
		if err := c.toHalf(r.ProducerGroup, msgs[0]); err != nil {
			return none, err
		}
	} else if !r.Batch {
		if err := c.divertSend(r, msgs[0]); err != nil { // retry.go: %RETRY% -> %DLQ%, DELAY -> schedule topic
			return none, err
		}
	}
	return preparedSend{msgs: msgs, queueID: queueID, batch: r.Batch}, nil
}

// sendQueue checks r's topic (checkSendTopic) and returns the queue r
// goes to: its own, or a random one when it names none.
func (c *Core) sendQueue(r *SendRequest) (int32, error) {
	tc, err := c.checkSendTopic(r)
	if err != nil {
		return 0, err
	}
	queueID := r.QueueID
	if queueID < 0 {
		queueID = rand.Int32N(int32(max(tc.WriteQueueNums, 1)))
	}
	if limit := int32(max(tc.WriteQueueNums, tc.ReadQueueNums)); queueID >= limit {
		return 0, errorf(BadRequest,
			"request queueId[%d] is illegal, topic %s has %d queues, producer: %s", queueID, r.Topic, limit, r.Client)
	}
	return queueID, nil
}

// checkBodies refuses a send with a body over the broker's MaxMessageSize.
func (c *Core) checkBodies(r *SendRequest) error {
	for _, m := range r.Messages {
		if limit := c.runtime().MaxMessageSize; len(m.Body) > limit {
			return errorf(IllegalMessage,
				"the message is illegal, maybe msg body or properties length not matched. msg body length limit %dB, msg properties length limit 32KiB.", limit)
		}
	}
	return nil
}

// sendRecord is what every message of r shares as stored in queueID: where
// and when it was born, and this broker as its store host.
func (c *Core) sendRecord(r *SendRequest, queueID int32) message.MessageExt {
	return message.MessageExt{
		QueueID:        queueID,
		SysFlag:        r.SysFlag,
		BornTimestamp:  r.BornTimestamp,
		BornHost:       r.BornHost,
		StoreHost:      c.host(),
		ReconsumeTimes: r.ReconsumeTimes,
	}
}

// checkSendTopic validates the topic of a send and returns its config,
// creating it from the default topic (auto-create) or as a retry topic when
// it does not exist yet.
func (c *Core) checkSendTopic(r *SendRequest) (topicconf.Config, error) {
	var none topicconf.Config
	if remark, ok := checkTopicName(r.Topic); !ok {
		return none, refuse(InvalidName, remark)
	}
	if r.Topic == topicAutoCreate {
		return none, errorf(ReservedName, "the topic[%s] is conflict with system reserved words.", r.Topic)
	}
	if notAllowedSendTopics[r.Topic] {
		return none, errorf(Forbidden, "Sending message to topic[%s] is forbidden.", r.Topic)
	}
	tc, ok := c.topics.get(r.Topic)
	if !ok {
		var created bool
		var err error
		switch {
		case strings.HasPrefix(r.Topic, retryGroupPrefix):
			tc, created, err = c.topics.createIfAbsent(newTopic(r.Topic, c.retryQueues(strings.TrimPrefix(r.Topic, retryGroupPrefix)), defaultTopicPerm))
		default:
			tc, created, err = c.autoCreateTopic(r)
		}
		if err != nil {
			return none, err
		}
		if tc.TopicName == "" {
			return none, errorf(TopicNotFound,
				"topic[%s] not exist, apply first please! (autoCreateTopicEnable=%t)", r.Topic, c.cfg.AutoCreateTopicEnable)
		}
		if created {
			c.log.Info("broker: topic created by send", "topic", r.Topic, "queues", tc.WriteQueueNums, "producer", r.Client)
			c.cfg.TopicsChanged(false)
		}
	}
	if !topicconf.IsWriteable(tc.Perm) {
		return none, errorf(Forbidden, "the topic[%s] sending message is forbidden", r.Topic)
	}
	if tc.Order {
		if err := c.checkBrokerWritable(); err != nil {
			return none, err
		}
	}
	return tc, nil
}

// autoCreateTopic creates r.Topic from its default topic
// (TopicConfigManager.createTopicInSendMessageMethod): the default topic
// must exist and carry the INHERIT perm; the new topic gets min(requested,
// default's) queues and the default's perm without INHERIT. A zero config
// means the topic may not be created.
func (c *Core) autoCreateTopic(r *SendRequest) (topicconf.Config, bool, error) {
	if !c.cfg.AutoCreateTopicEnable {
		return topicconf.Config{}, false, nil
	}
	def := r.DefaultTopic
	if def == "" {
		def = topicAutoCreate
	}
	dc, ok := c.topics.get(def)
	if !ok || !topicconf.IsInherited(dc.Perm) {
		return topicconf.Config{}, false, nil
	}
	n := dc.WriteQueueNums
	if q := int(r.DefaultTopicQueueNums); q > 0 && q < n {
		n = q
	}
	return c.topics.createIfAbsent(newTopic(r.Topic, n, dc.Perm&^topicconf.PermInherit))
}

// putError maps a store failure to Java's answer (SendMessageProcessor
// handlePutMessageResult).
func (c *Core) putError(err error) error {
	var refused *Error
	switch {
	case errors.As(err, &refused): // a slave's refusal (backend.go)
		return err
	case errors.Is(err, store.ErrInvalidOp) || errors.Is(err, message.ErrMessageTooLarge):
		return errorf(IllegalMessage,
			"the message is illegal, maybe msg body or properties length not matched. msg body length limit %dB, msg properties length limit 32KiB. (%v)", c.runtime().MaxMessageSize, err)
	case errors.Is(err, store.ErrClosed):
		return refuse(Unavailable, "service not available now, the broker is shutting down")
	case errors.Is(err, store.ErrDiskFull):
		return c.serviceNotAvailable()
	case errors.Is(err, store.ErrFailed):
		// Java's runningFlags make the store not writeable after a write
		// error, answered SERVICE_NOT_AVAILABLE; the cause says what to do.
		return errorf(Unavailable, "service not available now, the message store is not writable: %v", err)
	default:
		c.log.Error("broker: store write failed", "err", err)
		return errorf(Internal, "store write failed: %v", err)
	}
}
