package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/runnelmq/runnel/broker/clients"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// connection is one client connection in RocketMQ's Connection JSON.
type connection struct {
	ClientID   string `json:"clientId"`
	ClientAddr string `json:"clientAddr"`
	Language   string `json:"language"`
	Version    int    `json:"version"`
}

func connectionsOf(chans []clients.Channel) []connection {
	out := make([]connection, 0, len(chans))
	for _, ch := range chans {
		c := connection{ClientID: ch.ClientID, Language: ch.Language, Version: ch.Version}
		if conn, ok := ch.Conn.(*remoting.Conn); ok {
			c.ClientAddr = conn.RemoteAddr()
		}
		out = append(out, c)
	}
	return out
}

// handleConsumerConnections serves GET_CONSUMER_CONNECTION_LIST (203)
// (Java ConsumerConnection, for mqadmin consumerConnection).
func (b *Broker) handleConsumerConnections(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	group := req.Ext("consumerGroup")
	if group == "" {
		return errResponse(req, protocol.RespSystemError, "protocol: GET_CONSUMER_CONNECTION_LIST header: consumerGroup: missing")
	}
	g, ok := b.clients.Group(group)
	if !ok || len(g.Channels) == 0 {
		return errResponse(req, protocol.RespConsumerNotOnline, "the consumer group[%s] not online", group)
	}
	subs := map[string]protocol.SubscriptionData{}
	for _, s := range g.Subscriptions {
		sd := protocol.SubscriptionData{Topic: s.Topic, SubString: s.Expression, TagsSet: s.Tags,
			CodeSet: s.Codes, SubVersion: s.Version, ExpressionType: s.ExpressionType}
		if sd.TagsSet == nil {
			sd.TagsSet = []string{}
		}
		if sd.CodeSet == nil {
			sd.CodeSet = protocol.CodeSet{}
		}
		subs[s.Topic] = sd
	}
	body, err := json.Marshal(map[string]any{
		"connectionSet":     connectionsOf(g.Channels),
		"subscriptionTable": subs,
		"consumeType":       g.ConsumeType,
		"messageModel":      g.MessageModel,
		"consumeFromWhere":  g.ConsumeFromWhere,
	})
	if err != nil {
		return errResponse(req, protocol.RespSystemError, "%v", err)
	}
	resp := protocol.NewResponse(req, protocol.RespSuccess, "")
	resp.Body = body
	return resp
}

// handleProducerConnections serves GET_PRODUCER_CONNECTION_LIST (204)
// (Java ProducerConnection).
func (b *Broker) handleProducerConnections(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	group := req.Ext("producerGroup")
	if group == "" {
		return errResponse(req, protocol.RespSystemError, "protocol: GET_PRODUCER_CONNECTION_LIST header: producerGroup: missing")
	}
	chans := b.clients.ProducerChannels(group)
	if len(chans) == 0 {
		return errResponse(req, protocol.RespSystemError, "the producer group[%s] not exist", group)
	}
	body, _ := json.Marshal(map[string]any{"connectionSet": connectionsOf(chans)})
	resp := protocol.NewResponse(req, protocol.RespSuccess, "")
	resp.Body = body
	return resp
}

// handleGetTopicConfig serves GET_TOPIC_CONFIG (351): one topic's config
// (Java 5 TopicConfigAndQueueMapping, without static-topic mapping).
func (b *Broker) handleGetTopicConfig(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	topic := req.Ext("topic")
	tc, ok := b.topics.get(topic)
	if !ok {
		return errResponse(req, protocol.RespTopicNotExist, "No topic in this broker. topic: %s", topic)
	}
	body, err := json.Marshal(tc)
	if err != nil {
		return errResponse(req, protocol.RespSystemError, "%v", err)
	}
	resp := protocol.NewResponse(req, protocol.RespSuccess, "")
	resp.Body = body
	return resp
}

// handleGetBrokerConfig serves GET_BROKER_CONFIG (26): the configuration in
// force as RocketMQ properties text, under RocketMQ's key names.
func (b *Broker) handleGetBrokerConfig(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	c := b.cfg
	props := map[string]string{
		"brokerName":            c.BrokerName,
		"brokerClusterName":     c.ClusterName,
		"brokerId":              itoa(c.BrokerID),
		"namesrvAddr":           strings.Join(c.NamesrvAddrs, ";"),
		"listenPort":            portOf(b.Addr()),
		"brokerIP1":             hostOf(b.AdvertisedAddr()),
		"storePathRootDir":      c.StoreDir,
		"flushDiskType":         c.FlushMode.String(),
		"autoCreateTopicEnable": fmt.Sprint(c.AutoCreateTopicEnable),
		"defaultTopicQueueNums": fmt.Sprint(c.DefaultTopicQueueNums),
		"fileReservedTime":      fmt.Sprint(int(c.FileReservedTime.Hours())),
		"maxMessageSize":        fmt.Sprint(c.MaxMessageSize),
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var sb strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&sb, "%s=%s\n", k, props[k])
	}
	resp := protocol.NewResponse(req, protocol.RespSuccess, "")
	resp.Body = []byte(sb.String())
	return resp
}

func portOf(addr string) string {
	if i := strings.LastIndexByte(addr, ':'); i >= 0 {
		return addr[i+1:]
	}
	return ""
}

func hostOf(addr string) string {
	if i := strings.LastIndexByte(addr, ':'); i >= 0 {
		return strings.Trim(addr[:i], "[]")
	}
	return addr
}
