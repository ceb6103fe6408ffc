package broker

import (
	"context"
	"strings"

	"github.com/runnelmq/runnel/broker/clients"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// maxGroupLen is RocketMQ's group name limit.
const maxGroupLen = 255

// handleHeartbeat serves HEART_BEAT (34) (Java ClientManageProcessor): it
// registers the client's producer and consumer groups, creates each
// clustering group's retry topic, and notifies a group's members when its
// membership changed.
func (b *Broker) handleHeartbeat(_ context.Context, c *remoting.Conn, req *protocol.Command) *protocol.Command {
	hb, err := protocol.DecodeHeartbeatData(req.Body)
	if err != nil {
		return errResponse(req, protocol.RespSystemError, "%v", err)
	}
	if hb.ClientID == "" {
		return errResponse(req, protocol.RespSystemError, "heartbeat without clientID")
	}
	ch := clients.Channel{ClientID: hb.ClientID, ConnID: c.ID(), Conn: c, Language: req.Language, Version: int(req.Version)}
	topicsChanged := false
	var changed []string
	for _, cd := range hb.ConsumerDataSet {
		if remark, ok := checkGroupName(cd.GroupName); !ok {
			return errResponse(req, protocol.RespSystemError, "%s", remark)
		}
		if cd.MessageModel != protocol.MessageModelBroadcasting {
			// Clustering groups retry through %RETRY%<group>; the client
			// asks the name server for its route, so it must exist.
			_, created, err := b.topics.createIfAbsent(newTopic(retryGroupPrefix+cd.GroupName, retryQueueNums, defaultTopicPerm))
			if err != nil {
				return errResponse(req, protocol.RespSystemError, "%v", err)
			}
			topicsChanged = topicsChanged || created
		}
		data := clients.ConsumerData{
			Group: cd.GroupName, ConsumeType: cd.ConsumeType, MessageModel: cd.MessageModel,
			ConsumeFromWhere: cd.ConsumeFromWhere,
		}
		if hb.WithoutSub {
			// Java 5 heartbeat V2: the client says its subscriptions did not
			// change; keep the ones registered.
			if g, ok := b.clients.Group(cd.GroupName); ok {
				data.Subscriptions = g.Subscriptions
			}
		} else {
			for _, s := range cd.SubscriptionDataSet {
				sub := clients.Subscription{
					Topic: s.Topic, Expression: s.SubString, ExpressionType: s.ExpressionType,
					Tags: s.TagsSet, Codes: s.CodeSet, Version: s.SubVersion,
				}
				sub.Filter = filterOf(sub)
				data.Subscriptions = append(data.Subscriptions, sub)
			}
		}
		if b.clients.RegisterConsumer(ch, data) {
			changed = append(changed, cd.GroupName)
		}
	}
	for _, pd := range hb.ProducerDataSet {
		b.clients.RegisterProducer(pd.GroupName, ch)
	}
	if topicsChanged {
		b.kickRegister()
	}
	for _, g := range changed {
		b.log.Info("broker: consumer group changed", "group", g, "client", hb.ClientID, "remote", c.RemoteAddr())
		b.notifyGroup(g)
	}
	return protocol.NewResponse(req, protocol.RespSuccess, "")
}

// checkGroupName applies RocketMQ's group rule.
func checkGroupName(g string) (remark string, ok bool) {
	if strings.TrimSpace(g) == "" {
		return "consumer group name is blank", false
	}
	if len(g) > maxGroupLen {
		return "consumer group name is longer than 255 characters", false
	}
	for i := 0; i < len(g); i++ {
		if !validNameChar(g[i]) {
			return "consumer group " + g + " contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$", false
		}
	}
	return "", true
}

// notifyGroup sends NOTIFY_CONSUMER_IDS_CHANGED (40) oneway to every member
// of a group, so they rebalance now rather than at their next 20 s round.
func (b *Broker) notifyGroup(group string) {
	hdr := protocol.NotifyConsumerIDsChangedRequestHeader{ConsumerGroup: group}.Encode()
	for _, ch := range b.clients.Channels(group) {
		conn, ok := ch.Conn.(*remoting.Conn)
		if !ok {
			continue
		}
		req := protocol.NewRequest(protocol.ReqNotifyConsumerIDsChanged, hdr, nil)
		b.send(conn, func() error { return conn.InvokeOneway(req) })
	}
}

// handleUnregisterClient serves UNREGISTER_CLIENT (35), sent by Java
// clients as they shut down.
func (b *Broker) handleUnregisterClient(_ context.Context, c *remoting.Conn, req *protocol.Command) *protocol.Command {
	var h protocol.UnregisterClientRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return errResponse(req, protocol.RespSystemError, "%v", err)
	}
	if h.ProducerGroup != "" {
		b.clients.UnregisterProducer(h.ProducerGroup, h.ClientID, c.ID())
	}
	if h.ConsumerGroup != "" && b.clients.UnregisterConsumer(h.ConsumerGroup, h.ClientID, c.ID()) {
		b.notifyGroup(h.ConsumerGroup)
	}
	return protocol.NewResponse(req, protocol.RespSuccess, "")
}

// handleGetConsumerList serves GET_CONSUMER_LIST_BY_GROUP (38). Java answers
// SYSTEM_ERROR without a body for a group with no live client, and so does
// this broker; a client that sent a heartbeat is always listed.
func (b *Broker) handleGetConsumerList(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	var h protocol.GetConsumerListByGroupRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return errResponse(req, protocol.RespSystemError, "%v", err)
	}
	ids := b.clients.ConsumerIDs(h.ConsumerGroup)
	if len(ids) == 0 {
		return errResponse(req, protocol.RespSystemError, "no consumer for this group, %s", h.ConsumerGroup)
	}
	resp := protocol.NewResponse(req, protocol.RespSuccess, "")
	resp.Body = protocol.GetConsumerListByGroupResponseBody{ConsumerIDList: ids}.Encode()
	return resp
}
