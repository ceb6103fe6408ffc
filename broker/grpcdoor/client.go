package grpcdoor

import (
	"context"
	"fmt"
	"strings"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/runnelmq/runnel/broker/clients"
	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/groupconf"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/topicconf"
)

// The settings the door gives clients, the Java proxy's defaults
// (ProxyConfig: grpcClientProducerMaxAttempts, ...BackoffInitialMillis,
// ...BackoffMaxMillis, ...BackoffMultiplier,
// grpcClientConsumerLongPollingBatchSize,
// grpcClientConsumerMaxLongPollingTimeoutMillis).
const (
	producerMaxAttempts    = 3
	producerBackoffInitial = 10 * time.Millisecond
	producerBackoffMax     = time.Second
	producerBackoffFactor  = 2
	receiveBatchSize       = 32
	maxLongPolling         = 20 * time.Second
	minLongPolling         = 5 * time.Second
)

// consumerBackoff is a group's retry policy as the proxy gives it by
// default (CustomizedRetryPolicy): the wait before the nth redelivery.
var consumerBackoff = []time.Duration{
	time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 3 * time.Minute, 4 * time.Minute, 5 * time.Minute, 6 * time.Minute,
	7 * time.Minute, 8 * time.Minute, 9 * time.Minute, 10 * time.Minute, 20 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour,
}

// applySettings takes a client's Settings (Telemetry): it checks them,
// keeps them in the client's session, registers the client with the core
// and returns the session and the server's Settings.
func (d *Door) applySettings(c caller, st *v2.Settings) (*session, *v2.TelemetryCommand, error) {
	switch ps := st.GetPubSub().(type) {
	case *v2.Settings_Publishing:
		for _, t := range ps.Publishing.GetTopics() {
			if err := checkTopic(c.name(t)); err != nil {
				return nil, nil, err
			}
		}
	case *v2.Settings_Subscription:
		if err := checkGroup(c.name(ps.Subscription.GetGroup())); err != nil {
			return nil, nil, err
		}
		for _, e := range ps.Subscription.GetSubscriptions() {
			if err := checkTopic(c.name(e.GetTopic())); err != nil {
				return nil, nil, err
			}
			if _, err := subscriptionOf(c, e.GetTopic(), e.GetExpression()); err != nil {
				return nil, nil, err
			}
		}
	default:
		return nil, nil, refuse(v2.Code_BAD_REQUEST, "there is no publishing or subscription data in settings")
	}
	s := d.sessions.open(c)
	s.setSettings(st)
	if err := d.register(c, s, st); err != nil {
		return nil, nil, err
	}
	return s, &v2.TelemetryCommand{Status: okStatus(),
		Command: &v2.TelemetryCommand_Settings{Settings: d.serverSettings(c, st)}}, nil
}

// register tells the core of the client's groups, as a remoting client's
// heartbeat does: a producer's group is each topic it publishes to (as
// the proxy names it, so a transaction check of a topic finds its
// producers), a consumer's its consumer group with its subscriptions.
func (d *Door) register(c caller, s *session, st *v2.Settings) error {
	hb := core.Heartbeat{ClientID: c.ClientID}
	switch ps := st.GetPubSub().(type) {
	case *v2.Settings_Publishing:
		for _, t := range ps.Publishing.GetTopics() {
			hb.Producers = append(hb.Producers, c.name(t))
		}
	case *v2.Settings_Subscription:
		data := clients.ConsumerData{
			Group:            c.name(ps.Subscription.GetGroup()),
			ConsumeType:      "CONSUME_PASSIVELY",
			MessageModel:     groupconf.Clustering,
			ConsumeFromWhere: "CONSUME_FROM_LAST_OFFSET",
		}
		if st.GetClientType() == v2.ClientType_SIMPLE_CONSUMER {
			data.ConsumeType = "CONSUME_ACTIVELY"
		}
		for _, e := range ps.Subscription.GetSubscriptions() {
			sub, err := subscriptionOf(c, e.GetTopic(), e.GetExpression())
			if err != nil {
				return err
			}
			data.Subscriptions = append(data.Subscriptions, sub)
		}
		hb.Consumers = append(hb.Consumers, data)
	}
	return d.core.Heartbeat(s, s.meta(), hb)
}

// subscriptionOf is a subscription entry as the core keeps it.
func subscriptionOf(c caller, topic *v2.Resource, f *v2.FilterExpression) (clients.Subscription, error) {
	sub := clients.Subscription{Topic: c.name(topic), Expression: f.GetExpression(), Version: time.Now().UnixMilli()}
	if f.GetType() == v2.FilterType_SQL {
		sub.ExpressionType = message.ExpressionTypeSQL92
		if strings.TrimSpace(sub.Expression) == "" {
			return sub, refuse(v2.Code_ILLEGAL_FILTER_EXPRESSION, "expression format is not correct: an empty SQL92 expression")
		}
		return sub, nil
	}
	sub.ExpressionType = message.ExpressionTypeTag
	if strings.TrimSpace(sub.Expression) == "" {
		sub.Expression = "*"
	}
	sub.Tags, sub.Codes = message.ParseSubExpression(sub.Expression)
	return sub, nil
}

// serverSettings are the Settings the door answers a client's with: the
// client's own, with what the server decides merged in as the proxy's
// GrpcClientSettingsManager does.
func (d *Door) serverSettings(c caller, st *v2.Settings) *v2.Settings {
	out := proto.Clone(st).(*v2.Settings)
	switch ps := out.GetPubSub().(type) {
	case *v2.Settings_Publishing:
		out.BackoffPolicy = &v2.RetryPolicy{MaxAttempts: producerMaxAttempts,
			Strategy: &v2.RetryPolicy_ExponentialBackoff{ExponentialBackoff: &v2.ExponentialBackoff{
				Initial: durationpb.New(producerBackoffInitial), Max: durationpb.New(producerBackoffMax),
				Multiplier: producerBackoffFactor}}}
		ps.Publishing.MaxBodySize = int32(d.core.Runtime().MaxMessageSize)
		ps.Publishing.ValidateMessageType = true
	case *v2.Settings_Subscription:
		g := d.group(c.name(ps.Subscription.GetGroup()))
		batch, fifo := int32(receiveBatchSize), groupFIFO(g)
		ps.Subscription.ReceiveBatchSize = &batch
		ps.Subscription.LongPollingTimeout = durationpb.New(d.cfg.MaxLongPolling)
		ps.Subscription.Fifo = &fifo
		next := make([]*durationpb.Duration, len(consumerBackoff))
		for i, b := range consumerBackoff {
			next[i] = durationpb.New(b)
		}
		out.BackoffPolicy = &v2.RetryPolicy{MaxAttempts: d.core.MaxDeliveryAttempts(g.GroupName),
			Strategy: &v2.RetryPolicy_CustomizedBackoff{CustomizedBackoff: &v2.CustomizedBackoff{Next: next}}}
	}
	out.Metric = &v2.Metric{On: false}
	return out
}

// group is a consumer group's config, its defaults when it has none.
func (d *Door) group(name string) groupconf.Config {
	g, _ := d.core.GroupConfig(name)
	if g.GroupName == "" {
		g = groupconf.New(name)
	}
	return g
}

// Heartbeat keeps a client registered. A client that sent no Settings
// yet is UNRECOGNIZED_CLIENT_TYPE, as with the proxy.
func (d *Door) Heartbeat(ctx context.Context, req *v2.HeartbeatRequest) (*v2.HeartbeatResponse, error) {
	c, s, st, bad := d.settled(ctx)
	if bad != nil {
		return &v2.HeartbeatResponse{Status: bad}, nil
	}
	s.touch()
	return &v2.HeartbeatResponse{Status: statusOf(d.register(c, s, st))}, nil
}

// settled begins a call of a client that sent its Settings: the caller,
// its session and the Settings, or the status that refuses the call (a
// client that sent none yet is UNRECOGNIZED_CLIENT_TYPE, as with the
// proxy).
func (d *Door) settled(ctx context.Context) (caller, *session, *v2.Settings, *v2.Status) {
	c, err := d.begin(ctx)
	if err != nil {
		return c, nil, nil, statusOf(err)
	}
	s := d.sessions.get(c.ClientID)
	st := s.settingsOrNil()
	if st == nil {
		return c, s, nil, status(v2.Code_UNRECOGNIZED_CLIENT_TYPE, "cannot find client settings for this client")
	}
	return c, s, st, nil
}

// settingsOrNil is s's settings; nil for no session.
func (s *session) settingsOrNil() *v2.Settings {
	if s == nil {
		return nil
	}
	return s.settings()
}

// NotifyClientTermination unregisters a client that shuts down and
// forgets its session.
func (d *Door) NotifyClientTermination(ctx context.Context, req *v2.NotifyClientTerminationRequest) (*v2.NotifyClientTerminationResponse, error) {
	c, s, st, bad := d.settled(ctx)
	if bad != nil {
		return &v2.NotifyClientTerminationResponse{Status: bad}, nil
	}
	switch ps := st.GetPubSub().(type) {
	case *v2.Settings_Publishing:
		for _, t := range ps.Publishing.GetTopics() {
			d.core.UnregisterClient(s, c.ClientID, c.name(t), "")
		}
	case *v2.Settings_Subscription:
		d.core.UnregisterClient(s, c.ClientID, "", c.name(ps.Subscription.GetGroup()))
	}
	d.sessions.drop(s)
	return &v2.NotifyClientTerminationResponse{Status: okStatus()}, nil
}

// begin reads a unary call's caller and checks its client id and its
// signature.
func (d *Door) begin(ctx context.Context) (caller, error) {
	c := callerOf(ctx)
	if err := c.requireClient(); err != nil {
		return c, err
	}
	return c, d.authenticate(c)
}

// nameRule is one of the proxy's name rules (GrpcValidator): a refusal
// code and Java's remark for each way a name fails.
type nameRule struct {
	code              v2.Code
	maxLen            int // Validators.checkTopic 127, checkGroup 255
	system            func(string) bool
	blank, systemText string
	illegalf, longf   string // with the name; with maxLen
}

var (
	topicRule = nameRule{code: v2.Code_ILLEGAL_TOPIC, maxLen: 127, system: core.IsSystemTopic,
		blank: "The specified topic is blank.", systemText: "cannot access system topic",
		illegalf: "The specified topic[%s] contains illegal characters, allowing only ^[%%|a-zA-Z0-9_-]+$",
		longf:    "The specified topic is longer than topic max length %d."}
	groupRule = nameRule{code: v2.Code_ILLEGAL_CONSUMER_GROUP, maxLen: 255, system: core.IsSystemGroup,
		blank: "the specified group is blank", systemText: "cannot use system consumer group",
		illegalf: "the specified group[%s] contains illegal characters, allowing only ^[%%|a-zA-Z0-9_-]+$",
		longf:    "the specified group is longer than group max length %d."}
)

func (r nameRule) check(name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return refuse(r.code, r.blank)
	case !topicconf.ValidName(name):
		return refuse(r.code, fmt.Sprintf(r.illegalf, name))
	case len(name) > r.maxLen:
		return refuse(r.code, fmt.Sprintf(r.longf, r.maxLen))
	case r.system(name):
		return refuse(r.code, r.systemText)
	}
	return nil
}

// checkTopic applies the proxy's topic rule (GrpcValidator.validateTopic):
// RocketMQ's name rule, and no system topic.
func checkTopic(name string) error { return topicRule.check(name) }

// checkGroup applies the proxy's consumer group rule.
func checkGroup(name string) error { return groupRule.check(name) }
