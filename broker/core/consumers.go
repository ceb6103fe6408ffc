package core

import (
	"strings"

	"github.com/runnelmq/runnel/broker/clients"
	"github.com/runnelmq/runnel/broker/lock"
	"github.com/runnelmq/runnel/groupconf"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/topicconf"
)

// maxGroupLen is RocketMQ's group name limit.
const maxGroupLen = 255

// ClientMeta is what a client says of itself in its requests.
type ClientMeta struct {
	Language string
	Version  int
	// Protocol names the door the client came through, as RocketMQ 5's
	// metrics label it (protocol_type): ProtocolRemoting, ProtocolGRPC.
	Protocol string
}

// The protocols of ClientMeta.Protocol, with RocketMQ 5's names.
const (
	ProtocolRemoting = "remoting"
	ProtocolGRPC     = "grpc_v2"
)

// Heartbeat is what a client says of its groups, periodically (RocketMQ's
// HeartbeatData): the producer groups it sends for and, per consumer
// group, how it consumes and its subscriptions.
type Heartbeat struct {
	ClientID  string
	Producers []string
	// Consumers' Subscriptions come without Filter: the core compiles it.
	Consumers []clients.ConsumerData
	// KeepSubscriptions says the client's subscriptions did not change
	// (RocketMQ 5's heartbeat V2, which leaves them out): the ones
	// registered stay.
	KeepSubscriptions bool
}

// Heartbeat registers a client's producer and consumer groups (Java
// ClientManageProcessor.heartBeat), creates each clustering group's retry
// topic, and notifies a group's members when its membership changed.
func (c *Core) Heartbeat(ch Channel, meta ClientMeta, hb Heartbeat) error {
	if hb.ClientID == "" {
		return refuse(BadRequest, "heartbeat without clientID")
	}
	entry := clients.Channel[Channel]{ClientID: hb.ClientID, ConnID: ch.ID(), Conn: ch, Language: meta.Language, Version: meta.Version, Protocol: meta.Protocol}
	topicsChanged := false
	var changed []string
	for _, data := range hb.Consumers {
		if remark, ok := checkGroupName(data.Group); !ok {
			return refuse(InvalidName, remark)
		}
		if data.MessageModel != groupconf.Broadcasting {
			// Clustering groups retry through %RETRY%<group>; the client
			// asks the name server for its route, so it must exist.
			_, created, err := c.topics.createIfAbsent(newTopic(retryGroupPrefix+data.Group, c.retryQueues(data.Group), defaultTopicPerm))
			if err != nil {
				return err
			}
			topicsChanged = topicsChanged || created
		}
		if hb.KeepSubscriptions {
			data.Subscriptions = nil
			if g, ok := c.clients.Group(data.Group); ok {
				data.Subscriptions = g.Subscriptions
			}
		} else {
			subs := make([]clients.Subscription, len(data.Subscriptions))
			for i, sub := range data.Subscriptions {
				sub.Filter = c.filterOf(sub)
				subs[i] = sub
			}
			data.Subscriptions = subs
		}
		if c.clients.RegisterConsumer(entry, data) {
			changed = append(changed, data.Group)
		}
	}
	for _, group := range hb.Producers {
		c.clients.RegisterProducer(group, entry)
	}
	if topicsChanged {
		c.cfg.TopicsChanged(false)
	}
	for _, g := range changed {
		c.log.Info("broker: consumer group changed", "group", g, "client", hb.ClientID, "remote", ch.RemoteAddr())
		c.notifyGroup(g)
	}
	return nil
}

// checkGroupName applies RocketMQ's group rule.
func checkGroupName(g string) (remark string, ok bool) {
	if strings.TrimSpace(g) == "" {
		return "consumer group name is blank", false
	}
	if len(g) > maxGroupLen {
		return "consumer group name is longer than 255 characters", false
	}
	if !topicconf.ValidName(g) {
		return "consumer group " + g + " contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$", false
	}
	return "", true
}

// notifyGroup tells every member of a group that its membership changed,
// so they rebalance now rather than at their next 20 s round.
func (c *Core) notifyGroup(group string) {
	for _, ch := range liveChannels(c.clients.Channels(group)) {
		ch.NotifyConsumerIDsChanged(group)
	}
}

// UnregisterClient drops a client from its groups (UNREGISTER_CLIENT, sent
// by Java clients as they shut down).
func (c *Core) UnregisterClient(ch Channel, clientID, producerGroup, consumerGroup string) {
	if producerGroup != "" {
		c.clients.UnregisterProducer(producerGroup, clientID, ch.ID())
	}
	if consumerGroup != "" && c.clients.UnregisterConsumer(consumerGroup, clientID, ch.ID()) {
		c.notifyGroup(consumerGroup)
	}
}

// ConsumerList returns the client ids of a group's live consumers. Java
// refuses (SYSTEM_ERROR) a group with no live client, and so does this; a
// client that sent a heartbeat is always listed.
func (c *Core) ConsumerList(group string) ([]string, error) {
	ids := c.clients.ConsumerIDs(group)
	if len(ids) == 0 {
		return nil, errorf(NoClient, "no consumer for this group, %s", group)
	}
	return ids, nil
}

// LockBatch locks queues for an orderly consumer and returns the queues
// the client now holds: none on a slave, nor on a new master within its
// lock fence (role.go).
func (c *Core) LockBatch(group, clientID string, mqs []message.Queue) []message.Queue {
	if !c.be.IsLeader() || c.locksFenced() {
		return nil
	}
	return fromLockQueues(c.locks.TryLockBatch(group, toLockQueues(mqs), clientID))
}

// UnlockBatch releases a client's own locks; other clients' locks are left
// alone.
func (c *Core) UnlockBatch(group, clientID string, mqs []message.Queue) {
	c.locks.UnlockBatch(group, toLockQueues(mqs), clientID)
}

func toLockQueues(mqs []message.Queue) []lock.Queue {
	out := make([]lock.Queue, len(mqs))
	for i, q := range mqs {
		out[i] = lock.Queue{Topic: q.Topic, BrokerName: q.BrokerName, QueueID: q.QueueID}
	}
	return out
}

func fromLockQueues(qs []lock.Queue) []message.Queue {
	out := make([]message.Queue, len(qs))
	for i, q := range qs {
		out[i] = message.Queue{Topic: q.Topic, BrokerName: q.BrokerName, QueueID: q.QueueID}
	}
	return out
}
