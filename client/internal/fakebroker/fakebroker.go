// Package fakebroker is an in-memory RocketMQ name server and broker for
// the client's tests: enough of the protocol (send, batch send, long-polled
// pull with tag filtering (SQL92 through Config.SQL92), offsets, heartbeats with consumer-change
// notifications, consumer lists, send-back to retry topics, delay levels,
// batch locks, TBW102 auto-creation) for the client to run against, plus
// fault injection and counters for assertions. It keeps everything in memory and is not a broker to deploy:
// delay levels are scaled down (Config.DelayUnit) so tests do not wait.
//
// It imports only remoting and remoting/protocol, like the client.
package fakebroker

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// Config configures one broker.
type Config struct {
	// Name is the broker name. Default "broker-a".
	Name string
	// Cluster is the cluster name. Default "DefaultCluster".
	Cluster string
	// NoAutoCreate disables TBW102 auto-creation.
	NoAutoCreate bool
	// MaxSuspend caps a long-polled pull's hold. Default 1s.
	MaxSuspend time.Duration
	// DelayUnit is how long one delay level waits. Default 20ms.
	DelayUnit time.Duration
	// LockTTL is the queue lock lease. Default 60s.
	LockTTL time.Duration
	// SQL92 evaluates an SQL92 subscription's expression over a message's
	// properties, standing in for a broker's filter. Default nil: every
	// message passes.
	SQL92 func(expr string, props map[string]string) bool
}

func (c *Config) defaults() {
	if c.Name == "" {
		c.Name = "broker-a"
	}
	if c.Cluster == "" {
		c.Cluster = "DefaultCluster"
	}
	if c.MaxSuspend <= 0 {
		c.MaxSuspend = time.Second
	}
	if c.DelayUnit <= 0 {
		c.DelayUnit = 20 * time.Millisecond
	}
	if c.LockTTL <= 0 {
		c.LockTTL = 60 * time.Second
	}
}

// Stats counts requests, for assertions.
type Stats struct {
	Sends, Pulls, Heartbeats, SendBacks, OffsetUpdates, Locks, Unlocks atomic.Int64
}

type topicState struct {
	queues [][]*protocol.MessageExt
	perm   int
}

type client struct {
	id   string
	conn *remoting.Conn
	subs map[string]protocol.SubscriptionData
}

type lockEntry struct {
	clientID string
	at       time.Time
}

type lockKey struct {
	group string
	mq    protocol.MessageQueue
}

// Broker is one fake broker.
type Broker struct {
	cfg       Config
	srv       *remoting.Server
	storeHost netip.AddrPort
	Stats     Stats

	mu        sync.Mutex
	topics    map[string]*topicState
	byPhys    map[int64]*protocol.MessageExt
	nextPhys  int64
	offsets   map[string]int64
	groups    map[string]map[string]*client // group -> clientID -> client
	locks     map[lockKey]lockEntry
	arrivals  map[string]chan struct{} // topic@qid -> closed on the next arrival
	timers    []*time.Timer
	failSends []int16                                      // codes to answer the next sends with
	failTopic map[string]int                               // topic -> sends to it still to refuse
	failBacks int                                          // CONSUMER_SEND_MSG_BACKs still to refuse
	lastPulls map[string]protocol.PullMessageRequestHeader // group@topic -> the latest pull
	closed    bool
	quit      chan struct{}
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// StartBroker starts a broker on a loopback port.
func StartBroker(cfg Config) (*Broker, error) {
	cfg.defaults()
	b := &Broker{
		cfg:       cfg,
		topics:    map[string]*topicState{},
		byPhys:    map[int64]*protocol.MessageExt{},
		offsets:   map[string]int64{},
		groups:    map[string]map[string]*client{},
		locks:     map[lockKey]lockEntry{},
		arrivals:  map[string]chan struct{}{},
		failTopic: map[string]int{},
		lastPulls: map[string]protocol.PullMessageRequestHeader{},
		quit:      make(chan struct{}),
	}
	if !cfg.NoAutoCreate {
		b.topics[protocol.DefaultTopicKey] = newTopic(8, 7)
	}
	scfg := remoting.DefaultServerConfig()
	scfg.Addr = "127.0.0.1:0"
	scfg.Transport = remoting.TransportStd
	scfg.Logger = quiet
	scfg.OnClose = b.connClosed
	srv, err := remoting.NewServer(scfg)
	if err != nil {
		return nil, err
	}
	b.srv = srv
	b.register()
	if err := srv.Start(); err != nil {
		return nil, err
	}
	b.storeHost = netip.MustParseAddrPort(srv.Addr())
	return b, nil
}

func newTopic(queues, perm int) *topicState {
	return &topicState{queues: make([][]*protocol.MessageExt, queues), perm: perm}
}

// Addr is the broker's address.
func (b *Broker) Addr() string { return b.srv.Addr() }

// Name is the broker name.
func (b *Broker) Name() string { return b.cfg.Name }

// Close stops the broker, waking parked pulls.
func (b *Broker) Close() {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.closed = true
	close(b.quit)
	for _, t := range b.timers {
		t.Stop()
	}
	b.mu.Unlock()
	_ = b.srv.Close()
}

// CreateTopic creates (or resizes) topic with n read/write queues.
func (b *Broker) CreateTopic(topic string, n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.topics[topic]
	if t == nil {
		b.topics[topic] = newTopic(n, 6)
		return
	}
	for len(t.queues) < n {
		t.queues = append(t.queues, nil)
	}
}

// FailNextSends makes the next len(codes) sends answer with these codes.
func (b *Broker) FailNextSends(codes ...int16) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failSends = append(b.failSends, codes...)
}

// FailSendsTo makes the next n sends to topic fail with SYSTEM_ERROR,
// leaving sends to other topics alone (a client's fallback send to a retry
// topic can fail while its producer's sends go through).
func (b *Broker) FailSendsTo(topic string, n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failTopic[topic] += n
}

// FailNextSendBacks makes the next n CONSUMER_SEND_MSG_BACK requests fail
// with SYSTEM_ERROR.
func (b *Broker) FailNextSendBacks(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failBacks += n
}

// Messages returns copies of the messages stored in topic's queue qid.
func (b *Broker) Messages(topic string, qid int) []protocol.MessageExt {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.topics[topic]
	if t == nil || qid >= len(t.queues) {
		return nil
	}
	out := make([]protocol.MessageExt, len(t.queues[qid]))
	for i, m := range t.queues[qid] {
		out[i] = *m
	}
	return out
}

// QueueCount returns topic's queue count, 0 if unknown.
func (b *Broker) QueueCount(topic string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if t := b.topics[topic]; t != nil {
		return len(t.queues)
	}
	return 0
}

// Offset returns the committed offset of group on topic/qid, -1 if none.
func (b *Broker) Offset(group, topic string, qid int) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	if off, ok := b.offsets[offsetKey(group, topic, int32(qid))]; ok {
		return off
	}
	return -1
}

// Clients returns the client ids registered in group.
func (b *Broker) Clients(group string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.clientIDsLocked(group)
}

// LockHolder returns the client holding mq's lock for group, "" if none.
func (b *Broker) LockHolder(group string, mq protocol.MessageQueue) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.locks[lockKey{group, mq}]
	if !ok || time.Since(e.at) > b.cfg.LockTTL {
		return ""
	}
	return e.clientID
}

// Subscription returns the subscription to topic that group's clients
// last sent in a heartbeat.
func (b *Broker) Subscription(group, topic string) (protocol.SubscriptionData, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, id := range b.clientIDsLocked(group) {
		if s, ok := b.groups[group][id].subs[topic]; ok {
			return s, true
		}
	}
	return protocol.SubscriptionData{}, false
}

// LastPull returns the header of group's latest pull from topic.
func (b *Broker) LastPull(group, topic string) (protocol.PullMessageRequestHeader, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	h, ok := b.lastPulls[group+"@"+topic]
	return h, ok
}

func (b *Broker) clientIDsLocked(group string) []string {
	var ids []string
	for id := range b.groups[group] {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func offsetKey(group, topic string, qid int32) string {
	return fmt.Sprintf("%s@%s@%d", group, topic, qid)
}

func arrivalKey(topic string, qid int32) string { return fmt.Sprintf("%s@%d", topic, qid) }

// arrivalLocked returns the channel closed on the next message for
// topic/qid.
func (b *Broker) arrivalLocked(topic string, qid int32) chan struct{} {
	k := arrivalKey(topic, qid)
	ch := b.arrivals[k]
	if ch == nil {
		ch = make(chan struct{})
		b.arrivals[k] = ch
	}
	return ch
}

// appendLocked stores m in topic/qid and wakes parked pulls.
func (b *Broker) appendLocked(m *protocol.MessageExt) {
	t := b.topics[m.Topic]
	q := int(m.QueueID)
	m.QueueOffset = int64(len(t.queues[q]))
	m.CommitLogOffset = b.nextPhys
	b.nextPhys += int64(message.StoredSize(m))
	m.StoreHost = b.storeHost
	m.StoreTimestamp = time.Now().UnixMilli()
	m.OffsetMsgID = message.OffsetMsgID(m.StoreHost, m.CommitLogOffset)
	t.queues[q] = append(t.queues[q], m)
	b.byPhys[m.CommitLogOffset] = m
	k := arrivalKey(m.Topic, m.QueueID)
	if ch := b.arrivals[k]; ch != nil {
		close(ch)
		delete(b.arrivals, k)
	}
}

// connClosed removes the connection's clients and tells their groups.
func (b *Broker) connClosed(c *remoting.Conn) {
	b.mu.Lock()
	var changed []string
	for g, cs := range b.groups {
		for id, cl := range cs {
			if cl.conn == c {
				delete(cs, id)
				changed = append(changed, g)
			}
		}
	}
	b.mu.Unlock()
	for _, g := range changed {
		b.notify(g)
	}
}

// notify sends NOTIFY_CONSUMER_IDS_CHANGED to every client of group.
func (b *Broker) notify(group string) {
	b.mu.Lock()
	var conns []*remoting.Conn
	for _, cl := range b.groups[group] {
		conns = append(conns, cl.conn)
	}
	b.mu.Unlock()
	for _, c := range conns {
		req := protocol.NewRequest(protocol.ReqNotifyConsumerIDsChanged,
			protocol.NotifyConsumerIDsChangedRequestHeader{ConsumerGroup: group}.Encode(), nil)
		_ = c.InvokeOneway(req)
	}
}

// CallClients sends req to every connection of group's clients and returns
// their answers (oneway requests get none).
func (b *Broker) CallClients(group string, req func() *protocol.Command, timeout time.Duration) []*protocol.Command {
	b.mu.Lock()
	var conns []*remoting.Conn
	for _, cl := range b.groups[group] {
		conns = append(conns, cl.conn)
	}
	b.mu.Unlock()
	var out []*protocol.Command
	for _, c := range conns {
		r := req()
		if r.IsOneway() {
			_ = c.InvokeOneway(r)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		resp, err := c.Invoke(ctx, r)
		cancel()
		if err == nil {
			out = append(out, resp)
		}
	}
	return out
}
