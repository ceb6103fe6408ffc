// Package clients owns the broker's table of connected producers and
// consumers (RocketMQ's ConsumerManager and ProducerManager): who is in which
// group, over which connection, with which subscriptions.
//
// Invariants:
//   - a client is keyed by (connection, client id); the same client id over a
//     new connection replaces the old channel;
//   - a group's membership changes when a channel joins, leaves by
//     unregister, by its connection closing, or by missing heartbeats for
//     Config.ChannelExpiry; every such change is reported to the caller, who
//     notifies the group's members (NOTIFY_CONSUMER_IDS_CHANGED);
//   - the subscription kept per topic is the one with the newest version.
//
// The table is pure: time is injected and it imports no network code. A
// channel carries the caller's connection as an opaque value.
package clients

import (
	"maps"
	"slices"
	"sort"
	"sync"
	"time"
)

// Config tunes expiry.
type Config struct {
	// ChannelExpiry drops a channel with no heartbeat for this long.
	// Default 120 s, RocketMQ's channelExpiredTimeout.
	ChannelExpiry time.Duration
}

// DefaultConfig returns the RocketMQ defaults.
func DefaultConfig() Config { return Config{ChannelExpiry: 120 * time.Second} }

// Channel is one client over one connection.
type Channel[C any] struct {
	ClientID string
	ConnID   uint64
	// Conn is the caller's connection handle, returned as given.
	Conn       C
	Language   string
	Version    int
	Protocol   string // the door's protocol, as core.ClientMeta names it
	LastUpdate time.Time
}

// Subscription is one topic's filter of a consumer group.
type Subscription struct {
	Topic          string
	Expression     string
	ExpressionType string
	Tags           []string
	Codes          []int64
	Version        int64
	// Filter is the caller's compiled form of the subscription, kept with
	// it so that it is built once per heartbeat rather than on every pull.
	Filter any
}

// ConsumerData is what a heartbeat says of one consumer group.
type ConsumerData struct {
	Group            string
	ConsumeType      string
	MessageModel     string
	ConsumeFromWhere string
	Subscriptions    []Subscription
}

// GroupInfo is a snapshot of one consumer group.
type GroupInfo[C any] struct {
	ConsumerData
	Channels []Channel[C]
}

type consumerGroup[C any] struct {
	data     ConsumerData
	subs     map[string]Subscription
	channels map[chanKey]*Channel[C]
}

type chanKey struct {
	connID   uint64
	clientID string
}

// Manager is the client table. Create it with New.
type Manager[C any] struct {
	expiry time.Duration
	now    func() time.Time

	mu struct {
		sync.Mutex
		consumers map[string]*consumerGroup[C]
		producers map[string]map[chanKey]*Channel[C]
	}
}

// New returns an empty table; now defaults to time.Now.
func New[C any](cfg Config, now func() time.Time) *Manager[C] {
	if cfg.ChannelExpiry <= 0 {
		cfg.ChannelExpiry = DefaultConfig().ChannelExpiry
	}
	if now == nil {
		now = time.Now
	}
	m := &Manager[C]{expiry: cfg.ChannelExpiry, now: now}
	m.mu.consumers = make(map[string]*consumerGroup[C])
	m.mu.producers = make(map[string]map[chanKey]*Channel[C])
	return m
}

// RegisterConsumer records a consumer heartbeat and reports whether the
// group's membership changed (a new client or connection).
func (m *Manager[C]) RegisterConsumer(ch Channel[C], data ConsumerData) (membershipChanged bool) {
	ch.LastUpdate = m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	g := m.mu.consumers[data.Group]
	if g == nil {
		g = &consumerGroup[C]{subs: map[string]Subscription{}, channels: map[chanKey]*Channel[C]{}}
		m.mu.consumers[data.Group] = g
	}
	g.data = ConsumerData{Group: data.Group, ConsumeType: data.ConsumeType,
		MessageModel: data.MessageModel, ConsumeFromWhere: data.ConsumeFromWhere}

	key := chanKey{ch.ConnID, ch.ClientID}
	if old := g.channels[key]; old != nil {
		*old = ch
	} else {
		// The same client id over another connection is a reconnect: the
		// old channel is gone, the client is not new to the group.
		replaced := false
		for k := range g.channels {
			if k.clientID == ch.ClientID {
				delete(g.channels, k)
				replaced = true
			}
		}
		c := ch
		g.channels[key] = &c
		membershipChanged = !replaced
	}

	// The heartbeat carries the full subscription set: topics it no longer
	// names are dropped, and per topic the newest version wins.
	next := make(map[string]Subscription, len(data.Subscriptions))
	for _, s := range data.Subscriptions {
		if old, ok := g.subs[s.Topic]; ok && old.Version > s.Version {
			s = old
		}
		next[s.Topic] = s
	}
	g.subs = next
	return membershipChanged
}

// RegisterProducer records a producer heartbeat.
func (m *Manager[C]) RegisterProducer(group string, ch Channel[C]) {
	ch.LastUpdate = m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.mu.producers[group]
	if p == nil {
		p = map[chanKey]*Channel[C]{}
		m.mu.producers[group] = p
	}
	c := ch
	p[chanKey{ch.ConnID, ch.ClientID}] = &c
}

// UnregisterConsumer removes a client from a consumer group (UNREGISTER_CLIENT)
// and reports whether it was a member.
func (m *Manager[C]) UnregisterConsumer(group, clientID string, connID uint64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	g := m.mu.consumers[group]
	if g == nil {
		return false
	}
	k := chanKey{connID, clientID}
	if _, ok := g.channels[k]; !ok {
		return false
	}
	delete(g.channels, k)
	m.dropIfEmptyLocked(group, g)
	return true
}

// UnregisterProducer removes a client from a producer group.
func (m *Manager[C]) UnregisterProducer(group, clientID string, connID uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p := m.mu.producers[group]; p != nil {
		delete(p, chanKey{connID, clientID})
		if len(p) == 0 {
			delete(m.mu.producers, group)
		}
	}
}

// ConnClosed removes every channel of a connection and returns the consumer
// groups whose membership changed, sorted.
func (m *Manager[C]) ConnClosed(connID uint64) []string {
	return m.remove(func(c *Channel[C]) bool { return c.ConnID == connID })
}

// ExpireIdle removes channels without a heartbeat for longer than the
// configured expiry and returns the consumer groups that changed, sorted.
func (m *Manager[C]) ExpireIdle() []string {
	now := m.now()
	return m.remove(func(c *Channel[C]) bool { return now.Sub(c.LastUpdate) > m.expiry })
}

func (m *Manager[C]) remove(match func(*Channel[C]) bool) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var changed []string
	for name, g := range m.mu.consumers {
		n := len(g.channels)
		for k, c := range g.channels {
			if match(c) {
				delete(g.channels, k)
			}
		}
		if len(g.channels) != n {
			changed = append(changed, name)
			m.dropIfEmptyLocked(name, g)
		}
	}
	for name, p := range m.mu.producers {
		for k, c := range p {
			if match(c) {
				delete(p, k)
			}
		}
		if len(p) == 0 {
			delete(m.mu.producers, name)
		}
	}
	sort.Strings(changed)
	return changed
}

func (m *Manager[C]) dropIfEmptyLocked(name string, g *consumerGroup[C]) {
	if len(g.channels) == 0 {
		delete(m.mu.consumers, name)
	}
}

// ConsumerIDs returns the client ids of a group, sorted.
func (m *Manager[C]) ConsumerIDs(group string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	g := m.mu.consumers[group]
	if g == nil {
		return nil
	}
	seen := make(map[string]bool, len(g.channels))
	ids := make([]string, 0, len(g.channels))
	for k := range g.channels {
		if !seen[k.clientID] {
			seen[k.clientID] = true
			ids = append(ids, k.clientID)
		}
	}
	sort.Strings(ids)
	return ids
}

// Channels returns a group's channels, sorted by client id.
func (m *Manager[C]) Channels(group string) []Channel[C] {
	m.mu.Lock()
	defer m.mu.Unlock()
	g := m.mu.consumers[group]
	if g == nil {
		return nil
	}
	return sortedChannels(g.channels)
}

// ProducerChannels returns a producer group's channels, sorted by client id.
func (m *Manager[C]) ProducerChannels(group string) []Channel[C] {
	m.mu.Lock()
	defer m.mu.Unlock()
	return sortedChannels(m.mu.producers[group])
}

func sortedChannels[C any](set map[chanKey]*Channel[C]) []Channel[C] {
	out := make([]Channel[C], 0, len(set))
	for _, c := range set {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].ClientID != out[j].ClientID {
			return out[i].ClientID < out[j].ClientID
		}
		return out[i].ConnID < out[j].ConnID
	})
	return out
}

// Subscription returns a group's subscription to topic. hasGroup tells a
// group with no live member apart from a group not subscribed to topic
// (the pull path answers them differently), from one lookup under the lock.
func (m *Manager[C]) Subscription(group, topic string) (s Subscription, hasGroup, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	g := m.mu.consumers[group]
	if g == nil {
		return Subscription{}, false, false
	}
	s, ok = g.subs[topic]
	return s, true, ok
}

// Group returns a snapshot of a consumer group.
func (m *Manager[C]) Group(group string) (GroupInfo[C], bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	g := m.mu.consumers[group]
	if g == nil {
		return GroupInfo[C]{}, false
	}
	info := GroupInfo[C]{ConsumerData: g.data, Channels: sortedChannels(g.channels)}
	for _, s := range g.subs {
		info.Subscriptions = append(info.Subscriptions, s)
	}
	sort.Slice(info.Subscriptions, func(i, j int) bool { return info.Subscriptions[i].Topic < info.Subscriptions[j].Topic })
	return info, true
}

// Groups returns the names of the consumer groups with a live member, sorted.
func (m *Manager[C]) Groups() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Sorted(maps.Keys(m.mu.consumers))
}

// GroupsOfTopic returns the consumer groups subscribed to topic, sorted.
func (m *Manager[C]) GroupsOfTopic(topic string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for name, g := range m.mu.consumers {
		if _, ok := g.subs[topic]; ok {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}
