package core

import (
	"context"
	"maps"
	"net/netip"
	"strconv"
	"time"

	"github.com/runnelmq/runnel/message"
)

// Request/reply (Java ReplyMessageProcessor). A requester sends a normal
// message carrying CORRELATION_ID, REPLY_TO_CLIENT (its client id) and
// TTL; a consumer answers with a reply message to <cluster>_REPLY_TOPIC
// through SEND_REPLY_MESSAGE; the broker pushes that reply to the
// requesting client over its own connection, found by client id, and
// stores it (Java's storeReplyMessageEnable, default true, is always on
// here).
//
// The replier's answer follows Java: SUCCESS once the requester accepted
// the push, with where the reply was stored; SYSTEM_ERROR with Java's
// remark when REPLY_TO_CLIENT is missing, the requester is not connected
// (it vanished, or never sent a heartbeat), or the push failed. The reply
// is stored in every case.
//
// Java pushes first and stores after; here the store comes first, so the
// push's answer (which arrives on the requester's connection) never waits
// for a store write. Both happen either way, and the replier's answer is
// the same.

// replyPushTimeout bounds the push to the requester (Java
// Broker2Client.callClient: 10 s).
const replyPushTimeout = 10 * time.Second

// PushedReply is a reply message as it is pushed to the requester
// (Java ReplyMessageRequestHeader and the body): the replier's send header
// with its one message.
type PushedReply struct {
	// Request is the replier's send; its header fields are the push's
	// (BornHost the replier's address). Its Messages are not read.
	Request SendRequest
	// Message is the reply, its Properties with PUSH_REPLY_TIME added.
	Message SendMessage
	// StoreHost is this broker's address; StoreTimestamp is when it
	// pushed, epoch ms.
	StoreHost      netip.AddrPort
	StoreTimestamp int64
}

// Reply serves a SEND_REPLY_MESSAGE from a consumer answering a request:
// it stores the reply, pushes it to the client named in REPLY_TO_CLIENT,
// and passes the replier's answer to answer, exactly once. No goroutine
// is held while the requester answers the push.
func (c *Core) Reply(r SendRequest, answer func(SendResult, error)) {
	if r.Batch || len(r.Messages) != 1 {
		answer(SendResult{}, refuse(IllegalMessage, "the message is illegal: a reply is one message"))
		return
	}
	queueID, err := c.sendQueue(&r)
	if err == nil {
		err = c.checkBodies(&r)
	}
	if err != nil {
		answer(SendResult{}, err)
		return
	}
	m := r.Messages[0]
	props := m.Properties
	if props == nil {
		props = map[string]string{}
	}

	ext := c.sendRecord(&r, queueID)
	ext.Message = message.Message{Topic: r.Topic, Flag: m.Flag, Properties: props, Body: m.Body}
	// A push that succeeds is answered SUCCESS even when the store failed
	// (Java: msgId "0", offset 0).
	stored := SendResult{MsgIDs: []string{"0"}, QueueID: queueID, Region: defaultRegion}
	if res, err := c.put([]*message.MessageExt{&ext}); err != nil {
		c.log.Warn("broker: reply message not stored", "topic", r.Topic, "err", c.putError(err))
	} else {
		stored.MsgIDs[0], stored.QueueOffset = res[0].OffsetMsgID(), res[0].QueueOffset
	}

	sender := props[message.PropertyMessageReplyToClient]
	if sender == "" {
		c.log.Warn("broker: reply message without " + message.PropertyMessageReplyToClient)
		answer(SendResult{}, refuse(BadRequest,
			"reply message properties["+message.PropertyMessageReplyToClient+"] is null"))
		return
	}
	ch, ok := c.findClient(sender)
	if !ok {
		remark := "push reply message fail, channel of <" + sender + "> not found."
		c.log.Warn("broker: "+remark, "replier", r.Client)
		answer(SendResult{}, refuse(NoClient, remark))
		return
	}
	pushed := maps.Clone(props)
	now := c.cfg.Now().UnixMilli()
	pushed[message.PropertyPushReplyTime] = strconv.FormatInt(now, 10)
	p := PushedReply{Request: r, Message: SendMessage{Flag: m.Flag, Properties: pushed, Body: m.Body},
		StoreHost: c.host(), StoreTimestamp: now}
	ctx, cancel := context.WithTimeout(c.ctx, replyPushTimeout)
	done := func(resp ClientReply, err error) {
		cancel()
		if err == nil && resp.OK {
			answer(stored, nil)
			return
		}
		// Java's remark, without a space before "fail".
		c.log.Warn("broker: push reply message failed", "client", sender, "remark", resp.Remark, "err", err)
		answer(SendResult{}, refuse(NoClient, "push reply message to "+sender+"fail."))
	}
	if err := ch.PushReply(ctx, p, done); err != nil {
		done(ClientReply{}, err)
	}
}

// findClient returns an open channel of a client id: as a producer first
// (Java looks among producers only), then as a consumer.
func (c *Core) findClient(clientID string) (Channel, bool) {
	for _, entry := range c.clients.ClientChannels(clientID) {
		if entry.Conn != nil && !entry.Conn.Closed() {
			return entry.Conn, true
		}
	}
	return nil, false
}
