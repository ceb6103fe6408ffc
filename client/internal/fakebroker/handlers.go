package fakebroker

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

func (b *Broker) register() {
	b.srv.Handle(protocol.ReqSendMessage, b.send)
	b.srv.Handle(protocol.ReqSendMessageV2, b.send)
	b.srv.Handle(protocol.ReqSendBatchMessage, b.send)
	b.srv.Handle(protocol.ReqPullMessage, b.pull)
	b.srv.Handle(protocol.ReqQueryConsumerOffset, b.queryOffset)
	b.srv.Handle(protocol.ReqUpdateConsumerOffset, b.updateOffset)
	b.srv.Handle(protocol.ReqGetMaxOffset, b.maxOffset)
	b.srv.Handle(protocol.ReqGetMinOffset, b.minOffset)
	b.srv.Handle(protocol.ReqSearchOffsetByTimestamp, b.searchOffset)
	b.srv.Handle(protocol.ReqHeartBeat, b.heartbeat)
	b.srv.Handle(protocol.ReqUnregisterClient, b.unregisterClient)
	b.srv.Handle(protocol.ReqGetConsumerListByGroup, b.consumerList)
	b.srv.Handle(protocol.ReqConsumerSendMsgBack, b.sendBack)
	b.srv.Handle(protocol.ReqLockBatchMQ, b.lock)
	b.srv.Handle(protocol.ReqUnlockBatchMQ, b.unlock)
}

func ok(req *protocol.Command, ext map[string]string) *protocol.Command {
	resp := protocol.NewResponse(req, protocol.RespSuccess, "")
	resp.ExtFields = ext
	return resp
}

func fail(req *protocol.Command, code int16, remark string) *protocol.Command {
	return protocol.NewResponse(req, code, remark)
}

func (b *Broker) send(_ context.Context, conn *remoting.Conn, req *protocol.Command) *protocol.Command {
	b.Stats.Sends.Add(1)
	h, err := protocol.DecodeSendMessageHeader(req.Code, req.ExtFields)
	if err != nil {
		return fail(req, protocol.RespInvalidParameter, err.Error())
	}
	var msgs []*protocol.MessageExt
	born, _ := netipAddrPort(conn.RemoteAddr())
	base := protocol.MessageExt{
		SysFlag: h.SysFlag, BornTimestamp: h.BornTimestamp, BornHost: born,
		ReconsumeTimes: h.ReconsumeTimes,
	}
	if req.Code == protocol.ReqSendBatchMessage || h.Batch {
		inner, err := protocol.DecodeBatch(req.Body)
		if err != nil {
			return fail(req, protocol.RespMessageIllegal, err.Error())
		}
		for _, m := range inner {
			x := base
			x.Message = protocol.Message{Topic: h.Topic, Flag: m.Flag, Properties: m.Properties, Body: m.Body}
			msgs = append(msgs, &x)
		}
	} else {
		x := base
		x.Message = protocol.Message{Topic: h.Topic, Flag: h.Flag, Properties: message.UnmarshalProperties(h.Properties), Body: req.Body}
		msgs = append(msgs, &x)
	}

	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.failSends) > 0 {
		code := b.failSends[0]
		b.failSends = b.failSends[1:]
		return fail(req, code, "injected failure")
	}
	if b.failTopic[h.Topic] > 0 {
		b.failTopic[h.Topic]--
		return fail(req, protocol.RespSystemError, "injected failure of a send to "+h.Topic)
	}
	t := b.topics[h.Topic]
	if t == nil {
		tmpl := b.topics[h.DefaultTopic]
		if tmpl == nil || h.DefaultTopic == "" || strings.HasPrefix(h.Topic, "%RETRY%") {
			return fail(req, protocol.RespTopicNotExist, "topic["+h.Topic+"] not exist, apply first please!")
		}
		n := min(int(h.DefaultTopicQueueNums), len(tmpl.queues))
		if n <= 0 {
			n = 4
		}
		t = newTopic(n, 6)
		b.topics[h.Topic] = t
	}
	qid := int(h.QueueID) % len(t.queues)
	if qid < 0 {
		qid = 0
	}
	var ids []string
	var first int64 = -1
	for _, m := range msgs {
		m.QueueID = int32(qid)
		if m.Properties[protocol.PropertyUniqClientMessageIDKey] == "" && req.Code != protocol.ReqSendBatchMessage {
			m.SetProperty(protocol.PropertyUniqClientMessageIDKey, message.NewUniqID())
		}
		if lvl, _ := strconv.Atoi(m.Properties[protocol.PropertyDelayTimeLevel]); lvl > 0 {
			b.delayLocked(m, lvl)
			ids = append(ids, "")
			continue
		}
		b.appendLocked(m)
		if first < 0 {
			first = m.QueueOffset
		}
		ids = append(ids, m.OffsetMsgID)
	}
	if first < 0 {
		first = 0
	}
	return ok(req, protocol.SendMessageResponseHeader{
		MsgID: strings.Join(ids, ","), QueueID: int32(qid), QueueOffset: first,
		TransactionID: msgs[0].Properties[protocol.PropertyUniqClientMessageIDKey],
	}.Encode())
}

// delayLocked parks m for lvl*DelayUnit, then stores it in its real topic.
func (b *Broker) delayLocked(m *protocol.MessageExt, lvl int) {
	delete(m.Properties, protocol.PropertyDelayTimeLevel)
	t := time.AfterFunc(time.Duration(min(lvl, 18))*b.cfg.DelayUnit, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.closed || b.topics[m.Topic] == nil {
			return
		}
		b.appendLocked(m)
	})
	b.timers = append(b.timers, t)
}

func (b *Broker) pull(ctx context.Context, conn *remoting.Conn, req *protocol.Command) *protocol.Command {
	b.Stats.Pulls.Add(1)
	var h protocol.PullMessageRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return fail(req, protocol.RespInvalidParameter, err.Error())
	}
	b.mu.Lock()
	t := b.topics[h.Topic]
	if t == nil {
		b.mu.Unlock()
		return fail(req, protocol.RespTopicNotExist, "topic not exist")
	}
	if int(h.QueueID) >= len(t.queues) || h.QueueID < 0 {
		b.mu.Unlock()
		return fail(req, protocol.RespInvalidParameter, "queueId out of range")
	}
	b.lastPulls[h.ConsumerGroup+"@"+h.Topic] = h
	var sub protocol.SubscriptionData
	switch {
	case protocol.PullHasSubscription(h.SysFlag) && h.ExpressionType == protocol.ExpressionTypeSQL92:
		sub = protocol.SubscriptionData{Topic: h.Topic, SubString: h.Subscription, ExpressionType: h.ExpressionType, SubVersion: h.SubVersion}
	case protocol.PullHasSubscription(h.SysFlag):
		sub = protocol.BuildSubscriptionData(h.Topic, h.Subscription)
	default:
		found := false
		for _, cl := range b.groups[h.ConsumerGroup] {
			if s, ok := cl.subs[h.Topic]; ok {
				sub, found = s, true
				break
			}
		}
		if !found {
			b.mu.Unlock()
			return fail(req, protocol.RespSubscriptionNotExist, "the consumer's subscription not exist")
		}
	}
	if protocol.PullHasCommitOffset(h.SysFlag) && h.CommitOffset >= 0 {
		// Forward only, as Runnel's broker does: requests of one connection
		// run concurrently, so a pull's commit (the consumer's view when it
		// sent the pull) can land after its final UPDATE_CONSUMER_OFFSET.
		k := offsetKey(h.ConsumerGroup, h.Topic, h.QueueID)
		if cur, ok := b.offsets[k]; !ok || h.CommitOffset > cur {
			b.offsets[k] = h.CommitOffset
		}
	}
	b.mu.Unlock()

	deadline := time.Now().Add(min(time.Duration(h.SuspendTimeoutMillis)*time.Millisecond, b.cfg.MaxSuspend))
	for {
		b.mu.Lock()
		resp, wait := b.readLocked(req, &h, &sub)
		b.mu.Unlock()
		if resp != nil {
			return resp
		}
		if !protocol.PullHasSuspend(h.SysFlag) || time.Now().After(deadline) {
			return b.notFound(req, &h)
		}
		timer := time.NewTimer(time.Until(deadline))
		select {
		case <-wait:
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-b.quit:
			timer.Stop()
			return b.notFound(req, &h)
		}
		timer.Stop()
	}
}

func (b *Broker) notFound(req *protocol.Command, h *protocol.PullMessageRequestHeader) *protocol.Command {
	b.mu.Lock()
	max := int64(len(b.topics[h.Topic].queues[h.QueueID]))
	b.mu.Unlock()
	resp := fail(req, protocol.RespPullNotFound, "OFFSET_OVERFLOW_ONE")
	resp.ExtFields = protocol.PullMessageResponseHeader{NextBeginOffset: h.QueueOffset, MaxOffset: max}.Encode()
	return resp
}

// readLocked returns a response, or nil and the channel to wait on.
func (b *Broker) readLocked(req *protocol.Command, h *protocol.PullMessageRequestHeader, sub *protocol.SubscriptionData) (*protocol.Command, chan struct{}) {
	q := b.topics[h.Topic].queues[h.QueueID]
	max := int64(len(q))
	rh := protocol.PullMessageResponseHeader{MaxOffset: max}
	switch {
	case h.QueueOffset < 0 || h.QueueOffset > max:
		rh.NextBeginOffset = max
		if h.QueueOffset < 0 {
			rh.NextBeginOffset = 0
		}
		resp := fail(req, protocol.RespPullOffsetMoved, "OFFSET_OVERFLOW_BADLY")
		resp.ExtFields = rh.Encode()
		return resp, nil
	case h.QueueOffset == max:
		return nil, b.arrivalLocked(h.Topic, h.QueueID)
	}
	n := int(h.MaxMsgNums)
	if n <= 0 {
		n = 1
	}
	n = min(n, 32)
	var body []byte
	got := 0
	off := h.QueueOffset
	for ; off < max && got < n; off++ {
		m := q[off]
		if sub.IsTagType() && !sub.MatchesTag(m.Tags()) {
			continue
		}
		if !sub.IsTagType() && b.cfg.SQL92 != nil && !b.cfg.SQL92(sub.SubString, m.Properties) {
			continue
		}
		body, _ = message.AppendStoredMessage(body, m)
		got++
	}
	rh.NextBeginOffset = off
	if got == 0 {
		resp := fail(req, protocol.RespPullRetryImmediately, "NO_MATCHED_MESSAGE")
		resp.ExtFields = rh.Encode()
		return resp, nil
	}
	resp := ok(req, rh.Encode())
	resp.Body = body
	return resp, nil
}

func (b *Broker) queryOffset(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	var h protocol.QueryConsumerOffsetRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return fail(req, protocol.RespInvalidParameter, err.Error())
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if off, found := b.offsets[offsetKey(h.ConsumerGroup, h.Topic, h.QueueID)]; found {
		return ok(req, protocol.QueryConsumerOffsetResponseHeader{Offset: off}.Encode())
	}
	return fail(req, protocol.RespQueryNotFound, "Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first")
}

func (b *Broker) updateOffset(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	b.Stats.OffsetUpdates.Add(1)
	var h protocol.UpdateConsumerOffsetRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return fail(req, protocol.RespInvalidParameter, err.Error())
	}
	if h.CommitOffset >= 0 {
		b.mu.Lock()
		b.offsets[offsetKey(h.ConsumerGroup, h.Topic, h.QueueID)] = h.CommitOffset
		b.mu.Unlock()
	}
	return ok(req, nil)
}

func (b *Broker) queueLen(req *protocol.Command) (int64, []*protocol.MessageExt, *protocol.Command) {
	topic := req.Ext("topic")
	qid, _ := strconv.Atoi(req.Ext("queueId"))
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.topics[topic]
	if t == nil || qid < 0 || qid >= len(t.queues) {
		return 0, nil, fail(req, protocol.RespTopicNotExist, "topic or queue not exist")
	}
	return int64(len(t.queues[qid])), append([]*protocol.MessageExt(nil), t.queues[qid]...), nil
}

func (b *Broker) maxOffset(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	n, _, bad := b.queueLen(req)
	if bad != nil {
		return bad
	}
	return ok(req, protocol.GetMaxOffsetResponseHeader{Offset: n}.Encode())
}

func (b *Broker) minOffset(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	_, _, bad := b.queueLen(req)
	if bad != nil {
		return bad
	}
	return ok(req, protocol.GetMinOffsetResponseHeader{Offset: 0}.Encode())
}

func (b *Broker) searchOffset(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	n, msgs, bad := b.queueLen(req)
	if bad != nil {
		return bad
	}
	ts, _ := strconv.ParseInt(req.Ext("timestamp"), 10, 64)
	off := n
	for _, m := range msgs {
		if m.StoreTimestamp >= ts {
			off = m.QueueOffset
			break
		}
	}
	return ok(req, protocol.SearchOffsetResponseHeader{Offset: off}.Encode())
}

func (b *Broker) heartbeat(_ context.Context, conn *remoting.Conn, req *protocol.Command) *protocol.Command {
	b.Stats.Heartbeats.Add(1)
	hb, err := protocol.DecodeHeartbeatData(req.Body)
	if err != nil {
		return fail(req, protocol.RespSystemError, err.Error())
	}
	var changed []string
	b.mu.Lock()
	for _, cd := range hb.ConsumerDataSet {
		cs := b.groups[cd.GroupName]
		if cs == nil {
			cs = map[string]*client{}
			b.groups[cd.GroupName] = cs
		}
		cl := cs[hb.ClientID]
		if cl == nil || cl.conn != conn {
			cl = &client{id: hb.ClientID, conn: conn}
			cs[hb.ClientID] = cl
			changed = append(changed, cd.GroupName)
		}
		cl.subs = map[string]protocol.SubscriptionData{}
		for _, s := range cd.SubscriptionDataSet {
			cl.subs[s.Topic] = s
		}
		retry := "%RETRY%" + cd.GroupName
		if b.topics[retry] == nil {
			b.topics[retry] = newTopic(1, 6)
		}
	}
	b.mu.Unlock()
	for _, g := range changed {
		b.notify(g)
	}
	return ok(req, nil)
}

func (b *Broker) consumerList(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	b.mu.Lock()
	ids := b.clientIDsLocked(req.Ext("consumerGroup"))
	b.mu.Unlock()
	if len(ids) == 0 {
		return fail(req, protocol.RespSystemError, "no consumer for this group")
	}
	resp := ok(req, nil)
	resp.Body = protocol.GetConsumerListByGroupResponseBody{ConsumerIDList: ids}.Encode()
	return resp
}

func (b *Broker) sendBack(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	b.Stats.SendBacks.Add(1)
	var h protocol.ConsumerSendMsgBackRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return fail(req, protocol.RespInvalidParameter, err.Error())
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.failBacks > 0 {
		b.failBacks--
		return fail(req, protocol.RespSystemError, "injected send-back failure")
	}
	orig := b.byPhys[h.Offset]
	if orig == nil {
		return fail(req, protocol.RespSystemError, "look message by offset failed")
	}
	m := &protocol.MessageExt{
		Message:        protocol.Message{Flag: orig.Flag, Body: orig.Body, Properties: map[string]string{}},
		SysFlag:        orig.SysFlag,
		BornTimestamp:  orig.BornTimestamp,
		BornHost:       orig.BornHost,
		ReconsumeTimes: orig.ReconsumeTimes + 1,
	}
	for k, v := range orig.Properties {
		m.Properties[k] = v
	}
	if m.Properties[protocol.PropertyRetryTopic] == "" {
		m.Properties[protocol.PropertyRetryTopic] = orig.Topic
	}
	if m.Properties[protocol.PropertyOriginMessageID] == "" {
		m.Properties[protocol.PropertyOriginMessageID] = orig.MsgID
		if m.Properties[protocol.PropertyOriginMessageID] == "" {
			m.Properties[protocol.PropertyOriginMessageID] = orig.OffsetMsgID
		}
	}
	maxTimes := h.MaxReconsumeTimes
	if maxTimes < 0 {
		maxTimes = 16
	}
	if orig.ReconsumeTimes >= maxTimes || h.DelayLevel < 0 {
		m.Topic = "%DLQ%" + h.Group
		if b.topics[m.Topic] == nil {
			b.topics[m.Topic] = newTopic(1, 6)
		}
		b.appendLocked(m)
		return ok(req, nil)
	}
	m.Topic = "%RETRY%" + h.Group
	if b.topics[m.Topic] == nil {
		b.topics[m.Topic] = newTopic(1, 6)
	}
	lvl := int(h.DelayLevel)
	if lvl == 0 {
		lvl = 3 + int(orig.ReconsumeTimes)
	}
	b.delayLocked(m, lvl)
	return ok(req, nil)
}

func (b *Broker) lock(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	b.Stats.Locks.Add(1)
	body, err := protocol.DecodeLockBatchRequestBody(req.Body)
	if err != nil {
		return fail(req, protocol.RespSystemError, err.Error())
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var okSet []protocol.MessageQueue
	now := time.Now()
	for _, mq := range body.MQSet {
		k := lockKey{body.ConsumerGroup, mq}
		e, held := b.locks[k]
		if !held || e.clientID == body.ClientID || now.Sub(e.at) > b.cfg.LockTTL {
			b.locks[k] = lockEntry{clientID: body.ClientID, at: now}
			okSet = append(okSet, mq)
		}
	}
	resp := ok(req, nil)
	resp.Body = protocol.LockBatchResponseBody{LockOKMQSet: okSet}.Encode()
	return resp
}

func (b *Broker) unlock(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	b.Stats.Unlocks.Add(1)
	body, err := protocol.DecodeLockBatchRequestBody(req.Body)
	if err != nil {
		return fail(req, protocol.RespSystemError, err.Error())
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, mq := range body.MQSet {
		k := lockKey{body.ConsumerGroup, mq}
		if e, held := b.locks[k]; held && e.clientID == body.ClientID {
			delete(b.locks, k)
		}
	}
	return ok(req, nil)
}

// routeOf returns this broker's queue data for topic, if it has it.
func (b *Broker) routeOf(topic string) (protocol.QueueData, protocol.BrokerData, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.topics[topic]
	if t == nil {
		return protocol.QueueData{}, protocol.BrokerData{}, false
	}
	return protocol.QueueData{BrokerName: b.cfg.Name, ReadQueueNums: len(t.queues), WriteQueueNums: len(t.queues), Perm: t.perm},
		protocol.BrokerData{Cluster: b.cfg.Cluster, BrokerName: b.cfg.Name, BrokerAddrs: map[int64]string{0: b.srv.Addr()}}, true
}

func (b *Broker) unregisterClient(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	var h protocol.UnregisterClientRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return fail(req, protocol.RespInvalidParameter, err.Error())
	}
	b.mu.Lock()
	_, found := b.groups[h.ConsumerGroup][h.ClientID]
	delete(b.groups[h.ConsumerGroup], h.ClientID)
	b.mu.Unlock()
	if found {
		b.notify(h.ConsumerGroup)
	}
	return ok(req, nil)
}
