package routeinfo

import (
	"sort"
	"sync"
	"time"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// DefaultBrokerExpiry is how long a silent broker is kept (RocketMQ's
// BROKER_CHANNEL_EXPIRED_TIME).
const DefaultBrokerExpiry = 120 * time.Second

// Config configures a Table. The zero value is valid: every field has a
// documented default.
type Config struct {
	// BrokerExpiry is how long a broker is kept without a registration or
	// heartbeat, unless it registered with its own timeout. Default 120 s.
	BrokerExpiry time.Duration
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// DeleteTopicsOnRegistration removes a master's queue data for topics
	// missing from its latest registration (RocketMQ's
	// deleteTopicWithBrokerRegistration). Default false, as in RocketMQ:
	// topics are removed only by DELETE_TOPIC_IN_NAMESRV or when the
	// broker goes.
	DeleteTopicsOnRegistration bool
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{BrokerExpiry: DefaultBrokerExpiry, Now: time.Now}
}

func (c *Config) ensureDefaults() {
	if c.BrokerExpiry <= 0 {
		c.BrokerExpiry = DefaultBrokerExpiry
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// Registration is one REGISTER_BROKER.
type Registration struct {
	ClusterName  string
	BrokerName   string
	BrokerAddr   string
	BrokerID     int64
	HAServerAddr string
	// HeartbeatTimeout overrides Config.BrokerExpiry for this broker when > 0.
	HeartbeatTimeout time.Duration
	// Topics is the broker's topic table; used only from masters.
	Topics protocol.TopicConfigSerializeWrapper
	// ConnID identifies the connection the registration came over, so the
	// broker can be dropped when that connection closes. 0 = unknown.
	ConnID uint64
}

// RegisterResult tells a slave where its master is.
type RegisterResult struct {
	HAServerAddr string
	MasterAddr   string
	// TopicsUpdated reports whether the registration rewrote queue data.
	TopicsUpdated bool
}

// Broker identifies a broker the table dropped.
type Broker struct {
	ClusterName string
	BrokerName  string
	BrokerAddr  string
	BrokerID    int64
	ConnID      uint64
}

type brokerGroup struct {
	cluster string
	name    string
	addrs   map[int64]string
}

type liveBroker struct {
	Broker
	lastUpdate   time.Time
	timeout      time.Duration
	dataVersion  protocol.DataVersion
	haServerAddr string
}

// Table is the route table. It is safe for concurrent use.
type Table struct {
	cfg Config

	mu struct {
		sync.RWMutex
		topics   map[string]topicQueues         // topic -> each group's queues
		groups   map[string]*brokerGroup        // brokerName -> group
		clusters map[string]map[string]struct{} // cluster -> brokerNames
		live     map[string]*liveBroker         // brokerAddr -> liveness
	}
}

// New returns an empty table.
func New(cfg Config) *Table {
	cfg.ensureDefaults()
	t := &Table{cfg: cfg}
	t.mu.topics = make(map[string]topicQueues)
	t.mu.groups = make(map[string]*brokerGroup)
	t.mu.clusters = make(map[string]map[string]struct{})
	t.mu.live = make(map[string]*liveBroker)
	return t
}

// RegisterBroker records a broker and, for a master whose topic table
// changed (or which is new), its topics' queue data.
func (t *Table) RegisterBroker(r Registration) RegisterResult {
	t.mu.Lock()
	defer t.mu.Unlock()

	names := t.mu.clusters[r.ClusterName]
	if names == nil {
		names = make(map[string]struct{})
		t.mu.clusters[r.ClusterName] = names
	}
	names[r.BrokerName] = struct{}{}

	g := t.mu.groups[r.BrokerName]
	first := g == nil
	if first {
		g = &brokerGroup{cluster: r.ClusterName, name: r.BrokerName, addrs: make(map[int64]string)}
		t.mu.groups[r.BrokerName] = g
	}
	// A broker that switched role keeps its address under a new id; the
	// old entry would advertise it twice.
	for id, addr := range g.addrs {
		if addr == r.BrokerAddr && id != r.BrokerID {
			delete(g.addrs, id)
		}
	}
	if old := g.addrs[r.BrokerID]; old == "" {
		first = true
	}
	g.addrs[r.BrokerID] = r.BrokerAddr

	var res RegisterResult
	prev := t.mu.live[r.BrokerAddr]
	if r.BrokerID == protocol.MasterID {
		changed := prev == nil || prev.dataVersion != r.Topics.DataVersion
		if changed || first {
			t.updateTopicsLocked(g.name, r.Topics.TopicConfigTable)
			res.TopicsUpdated = true
		} else {
			res.TopicsUpdated = t.addMissingTopicsLocked(g.name, r.Topics.TopicConfigTable)
		}
	}

	timeout := r.HeartbeatTimeout
	if timeout <= 0 {
		timeout = t.cfg.BrokerExpiry
	}
	t.mu.live[r.BrokerAddr] = &liveBroker{
		Broker: Broker{
			ClusterName: r.ClusterName, BrokerName: r.BrokerName, BrokerAddr: r.BrokerAddr,
			BrokerID: r.BrokerID, ConnID: r.ConnID,
		},
		lastUpdate:   t.cfg.Now(),
		timeout:      timeout,
		dataVersion:  r.Topics.DataVersion,
		haServerAddr: r.HAServerAddr,
	}

	if r.BrokerID != protocol.MasterID {
		if master := g.addrs[protocol.MasterID]; master != "" {
			if ml := t.mu.live[master]; ml != nil {
				res.MasterAddr = master
				res.HAServerAddr = ml.haServerAddr
			}
		}
	}
	return res
}

func (t *Table) updateTopicsLocked(brokerName string, table map[string]protocol.TopicConfig) {
	t.putQueueDataLocked(brokerName, table)
	if !t.cfg.DeleteTopicsOnRegistration {
		return
	}
	for topic, qs := range t.mu.topics {
		if _, kept := table[topic]; kept {
			continue
		}
		if qs, ok := qs.del(brokerName); ok {
			t.setQueuesLocked(topic, qs)
		}
	}
}

// putQueueDataLocked writes the group's queue data of each topic in table
// and leaves its other topics as they are.
func (t *Table) putQueueDataLocked(brokerName string, table map[string]protocol.TopicConfig) {
	for name, tc := range table {
		if tc.TopicName != "" {
			name = tc.TopicName
		}
		t.mu.topics[name] = t.mu.topics[name].put(protocol.QueueData{
			BrokerName:     brokerName,
			ReadQueueNums:  tc.ReadQueueNums,
			WriteQueueNums: tc.WriteQueueNums,
			Perm:           tc.Perm,
			TopicSysFlag:   tc.TopicSysFlag,
		})
	}
}

// setQueuesLocked stores topic's list, dropping the topic when none is
// left.
func (t *Table) setQueuesLocked(topic string, qs topicQueues) {
	if len(qs) == 0 {
		delete(t.mu.topics, topic)
		return
	}
	t.mu.topics[topic] = qs
}

// addMissingTopicsLocked writes the queue data of the topics in table
// that this group has none for, and reports whether there were any: a
// registration whose data version the table already has still brings
// back a topic it lacks (Java's isTopicConfigChanged), such as one whose
// route was deleted here while the broker kept it, or one a broker
// registering only its changed topics sent before a lost answer.
func (t *Table) addMissingTopicsLocked(brokerName string, table map[string]protocol.TopicConfig) bool {
	var missing map[string]protocol.TopicConfig
	for name, tc := range table {
		if tc.TopicName != "" {
			name = tc.TopicName
		}
		if t.mu.topics[name].has(brokerName) {
			continue
		}
		if missing == nil {
			missing = make(map[string]protocol.TopicConfig)
		}
		missing[name] = tc
	}
	if missing == nil {
		return false
	}
	t.putQueueDataLocked(brokerName, missing)
	return true
}

// Heartbeat refreshes a registered broker's liveness. It reports whether
// the broker was known; an unknown broker must register.
func (t *Table) Heartbeat(clusterName, brokerAddr string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	lb := t.mu.live[brokerAddr]
	if lb == nil || (clusterName != "" && lb.ClusterName != clusterName) {
		return false
	}
	lb.lastUpdate = t.cfg.Now()
	return true
}

// UnregisterBroker removes one broker on its own request. It reports whether
// the broker's address was known.
func (t *Table) UnregisterBroker(clusterName, brokerAddr, brokerName string, brokerID int64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, known := t.mu.live[brokerAddr]
	delete(t.mu.live, brokerAddr)
	g := t.mu.groups[brokerName]
	if g == nil {
		return known
	}
	if g.addrs[brokerID] == brokerAddr {
		delete(g.addrs, brokerID)
		known = true
	}
	if len(g.addrs) == 0 {
		t.removeGroupLocked(g, clusterName)
	}
	return known
}

// RemoveBroker drops the broker at brokerAddr, as when its connection
// closes. It reports whether the address was known.
func (t *Table) RemoveBroker(brokerAddr string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.removeAddrLocked(brokerAddr)
}

// RemoveConn drops every broker whose latest registration came over the
// connection connID and returns them. A broker that has since registered
// over another connection is kept: a late close of its old connection must
// not drop it.
func (t *Table) RemoveConn(connID uint64) []Broker {
	if connID == 0 {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []Broker
	for addr, lb := range t.mu.live {
		if lb.ConnID == connID {
			out = append(out, lb.Broker)
			t.removeAddrLocked(addr)
		}
	}
	sortBrokers(out)
	return out
}

// ExpireBrokers drops every broker not heard from within its timeout and
// returns them, so the caller can close their connections.
func (t *Table) ExpireBrokers() []Broker {
	now := t.cfg.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []Broker
	for addr, lb := range t.mu.live {
		if lb.lastUpdate.Add(lb.timeout).Before(now) {
			out = append(out, lb.Broker)
			t.removeAddrLocked(addr)
		}
	}
	sortBrokers(out)
	return out
}

func sortBrokers(bs []Broker) {
	sort.Slice(bs, func(i, j int) bool { return bs[i].BrokerAddr < bs[j].BrokerAddr })
}

// removeAddrLocked drops brokerAddr from the live table and from the group
// that lists it, and the group itself if that was its last address.
func (t *Table) removeAddrLocked(brokerAddr string) bool {
	_, known := t.mu.live[brokerAddr]
	delete(t.mu.live, brokerAddr)
	for _, g := range t.mu.groups {
		for id, addr := range g.addrs {
			if addr == brokerAddr {
				delete(g.addrs, id)
				known = true
			}
		}
		if len(g.addrs) == 0 {
			t.removeGroupLocked(g, "")
		}
	}
	return known
}

// removeGroupLocked deletes an empty group, its name from its cluster (or
// from clusterName when given) and its queue data from every topic.
func (t *Table) removeGroupLocked(g *brokerGroup, clusterName string) {
	delete(t.mu.groups, g.name)
	for _, c := range []string{g.cluster, clusterName} {
		if names := t.mu.clusters[c]; names != nil {
			delete(names, g.name)
			if len(names) == 0 {
				delete(t.mu.clusters, c)
			}
		}
	}
	for topic, qs := range t.mu.topics {
		if qs, ok := qs.del(g.name); ok {
			t.setQueuesLocked(topic, qs)
		}
	}
}
