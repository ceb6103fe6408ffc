package broker

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/netip"
	"strconv"
	"strings"

	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
	"github.com/runnelmq/runnel/store"
)

// maxPropertiesLen is the longest property string a stored message can
// carry (a 16-bit length in the record).
const maxPropertiesLen = 32767

// defaultRegion is the MSG_REGION a send response carries (RocketMQ
// BrokerConfig.regionId).
const defaultRegion = "DefaultRegion"

// handleSend serves SEND_MESSAGE (10), SEND_MESSAGE_V2 (310) and
// SEND_BATCH_MESSAGE (320), following Java's SendMessageProcessor: check
// the topic (creating it from the default topic when allowed), check the
// message, store it, answer with where it went.
func (b *Broker) handleSend(_ context.Context, c *remoting.Conn, req *protocol.Command) *protocol.Command {
	h, err := protocol.DecodeSendMessageHeader(req.Code, req.ExtFields)
	if err != nil {
		return errResponse(req, protocol.RespSystemError, "%v", err)
	}
	batch := req.Code == protocol.ReqSendBatchMessage
	tc, resp := b.checkSendTopic(req, &h, c)
	if resp != nil {
		return resp
	}
	queueID := h.QueueID
	if queueID < 0 {
		queueID = rand.Int32N(int32(max(tc.WriteQueueNums, 1)))
	}
	if limit := int32(max(tc.WriteQueueNums, tc.ReadQueueNums)); queueID >= limit {
		return errResponse(req, protocol.RespSystemError,
			"request queueId[%d] is illegal, topic %s has %d queues, producer: %s", queueID, h.Topic, limit, c.RemoteAddr())
	}
	if len(req.Body) > b.cfg.MaxMessageSize {
		return errResponse(req, protocol.RespMessageIllegal,
			"the message is illegal, maybe msg body or properties length not matched. msg body length limit %dB, msg properties length limit 32KiB.", b.cfg.MaxMessageSize)
	}
	if len(h.Properties) > maxPropertiesLen {
		return errResponse(req, protocol.RespMessageIllegal,
			"the message is illegal, maybe msg properties length limit 32KiB (got %d bytes).", len(h.Properties))
	}
	if batch && h.SysFlag&protocol.SysFlagTransactionMask == protocol.SysFlagTransactionPrep {
		return errResponse(req, protocol.RespMessageIllegal, "batch request does not support transaction messages")
	}

	// Every message of the request shares where and when it was born.
	proto := protocol.MessageExt{
		QueueID:        queueID,
		SysFlag:        h.SysFlag,
		BornTimestamp:  h.BornTimestamp,
		BornHost:       parseAddrPort(c.RemoteAddr()),
		StoreHost:      *b.storeHost.Load(),
		ReconsumeTimes: h.ReconsumeTimes,
	}
	var msgs []*protocol.MessageExt
	half := false // a transaction's half message (transaction.go)
	if batch {
		if strings.HasPrefix(h.Topic, retryGroupPrefix) {
			return errResponse(req, protocol.RespMessageIllegal, "batch request does not support retry group %s", h.Topic)
		}
		inner, err := decodeBatch(req.Body)
		if err != nil {
			return errResponse(req, protocol.RespMessageIllegal, "%v", err)
		}
		for _, m := range inner {
			if m.Properties[protocol.PropertyDelayTimeLevel] != "" {
				return errResponse(req, protocol.RespMessageIllegal, "TimeDelayLevel is not supported for batched messages")
			}
			ext := proto
			ext.Message = protocol.Message{Topic: h.Topic, Flag: m.Flag, Properties: m.Properties, Body: m.Body}
			msgs = append(msgs, &ext)
		}
	} else {
		props := protocol.UnmarshalProperties(h.Properties)
		if props[protocol.PropertyUniqClientMessageIDKey] == "" {
			props[protocol.PropertyUniqClientMessageIDKey] = protocol.NewUniqID()
		}
		props[protocol.PropertyCluster] = b.cfg.ClusterName
		ext := proto
		ext.Message = protocol.Message{Topic: h.Topic, Flag: h.Flag, Properties: props, Body: req.Body}
		msgs = append(msgs, &ext)
		// A consumer's own re-send to %RETRY% (the official clients'
		// send-back fallback) copies TRAN_MSG from a committed message; it
		// is a retry, not a new transaction.
		half = isHalfSend(h.SysFlag, props) && !strings.HasPrefix(h.Topic, retryGroupPrefix)
	}
	if half {
		// Stored in the half queue until END_TRANSACTION; a DELAY applies at commit.
		if resp := b.toHalf(req, h.ProducerGroup, msgs[0]); resp != nil {
			return resp
		}
	} else if resp := b.divertSend(req, &h, msgs); resp != nil { // retry.go: %RETRY% -> %DLQ%, DELAY -> schedule topic
		return resp
	}
	res, err := b.st.Put(msgs)
	if err != nil {
		return b.putError(req, err)
	}
	ids := make([]string, len(res))
	for i, r := range res {
		ids[i] = r.OffsetMsgID()
	}
	out := protocol.SendMessageResponseHeader{
		MsgID:       strings.Join(ids, ","),
		QueueID:     queueID,
		QueueOffset: res[0].QueueOffset,
		MsgRegion:   defaultRegion,
		TraceOn:     "true",
	}
	if !batch {
		out.TransactionID = msgs[0].Properties[protocol.PropertyUniqClientMessageIDKey]
	}
	resp = protocol.NewResponse(req, protocol.RespSuccess, "")
	resp.ExtFields = out.Encode()
	return resp
}

// checkSendTopic validates the topic of a send and returns its config,
// creating it from the default topic (auto-create) or as a retry topic when
// it does not exist yet. A non-nil response is the refusal.
func (b *Broker) checkSendTopic(req *protocol.Command, h *protocol.SendMessageRequestHeader, c *remoting.Conn) (protocol.TopicConfig, *protocol.Command) {
	var none protocol.TopicConfig
	if remark, ok := checkTopicName(h.Topic); !ok {
		return none, protocol.NewResponse(req, protocol.RespSystemError, remark)
	}
	if h.Topic == topicAutoCreate {
		return none, errResponse(req, protocol.RespSystemError, "the topic[%s] is conflict with system reserved words.", h.Topic)
	}
	if notAllowedSendTopics[h.Topic] {
		return none, errResponse(req, protocol.RespNoPermission, "Sending message to topic[%s] is forbidden.", h.Topic)
	}
	tc, ok := b.topics.get(h.Topic)
	if !ok {
		var created bool
		var err error
		switch {
		case strings.HasPrefix(h.Topic, retryGroupPrefix):
			tc, created, err = b.topics.createIfAbsent(newTopic(h.Topic, retryQueueNums, defaultTopicPerm))
		default:
			tc, created, err = b.autoCreateTopic(h)
		}
		if err != nil {
			return none, errResponse(req, protocol.RespSystemError, "%v", err)
		}
		if tc.TopicName == "" {
			return none, errResponse(req, protocol.RespTopicNotExist,
				"topic[%s] not exist, apply first please! (autoCreateTopicEnable=%t)", h.Topic, b.cfg.AutoCreateTopicEnable)
		}
		if created {
			b.log.Info("broker: topic created by send", "topic", h.Topic, "queues", tc.WriteQueueNums, "producer", c.RemoteAddr())
			b.kickRegister()
		}
	}
	if !protocol.IsWriteable(tc.Perm) {
		return none, errResponse(req, protocol.RespNoPermission, "the topic[%s] sending message is forbidden", h.Topic)
	}
	return tc, nil
}

// autoCreateTopic creates h.Topic from its default topic
// (TopicConfigManager.createTopicInSendMessageMethod): the default topic
// must exist and carry the INHERIT perm; the new topic gets min(requested,
// default's) queues and the default's perm without INHERIT. A zero config
// means the topic may not be created.
func (b *Broker) autoCreateTopic(h *protocol.SendMessageRequestHeader) (protocol.TopicConfig, bool, error) {
	if !b.cfg.AutoCreateTopicEnable {
		return protocol.TopicConfig{}, false, nil
	}
	def := h.DefaultTopic
	if def == "" {
		def = topicAutoCreate
	}
	dc, ok := b.topics.get(def)
	if !ok || !protocol.IsInherited(dc.Perm) {
		return protocol.TopicConfig{}, false, nil
	}
	n := dc.WriteQueueNums
	if q := int(h.DefaultTopicQueueNums); q > 0 && q < n {
		n = q
	}
	return b.topics.createIfAbsent(newTopic(h.Topic, n, dc.Perm&^protocol.PermInherit))
}

// putError maps a store failure to Java's response (SendMessageProcessor
// handlePutMessageResult).
func (b *Broker) putError(req *protocol.Command, err error) *protocol.Command {
	switch {
	case errors.Is(err, store.ErrInvalidOp) || errors.Is(err, protocol.ErrMessageTooLarge):
		return errResponse(req, protocol.RespMessageIllegal,
			"the message is illegal, maybe msg body or properties length not matched. msg body length limit %dB, msg properties length limit 32KiB. (%v)", b.cfg.MaxMessageSize, err)
	case errors.Is(err, store.ErrClosed):
		return errResponse(req, protocol.RespServiceNotAvailable, "service not available now, the broker is shutting down")
	default:
		b.log.Error("broker: store write failed", "err", err)
		return errResponse(req, protocol.RespSystemError, "store write failed: %v", err)
	}
}

// parseAddrPort parses a connection's remote address; an unparsable one
// (never expected from TCP) becomes the zero address.
func parseAddrPort(s string) netip.AddrPort {
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		return netip.AddrPort{}
	}
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
}

// itoa formats an int64 for extFields.
func itoa(v int64) string { return strconv.FormatInt(v, 10) }
