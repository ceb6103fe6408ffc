package console

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// snapshot is what one sample read of the cluster's shape. It is built
// whole by gather and never changed after, so pages read it without locks.
type snapshot struct {
	At time.Time
	// Err is why the cluster could not be read at all (no name server
	// answered); the lists below are then empty.
	Err      error
	Namesrvs []admin.NamesrvState
	Brokers  []brokerView
	Topics   []topicView // by name
	topicIdx map[string]int
	Groups   []groupView // by name
	// GroupsErr is why the group list could not be read.
	GroupsErr error
	// clusterTopics are the topics named after clusters and brokers.
	clusterTopics map[string]bool
}

func (s *snapshot) topic(name string) (topicView, bool) {
	if i, ok := s.topicIdx[name]; ok {
		return s.Topics[i], true
	}
	return topicView{}, false
}

// brokerView is one broker node as the Cluster page shows it.
type brokerView struct {
	Cluster string `json:"cluster"`
	Name    string `json:"brokerName"`
	ID      int64  `json:"brokerId"`
	Addr    string `json:"addr"`
	// Role is MASTER or SLAVE, as the node reports it or its id says.
	Role string `json:"role"`
	// RaftState and RaftTerm are a replicated group node's raft figures.
	RaftState string `json:"raftState,omitempty"`
	RaftTerm  string `json:"raftTerm,omitempty"`
	RaftLead  string `json:"raftLeader,omitempty"`
	Version   string `json:"version"`
	// Boot is when the node started; zero when it does not say.
	Boot time.Time `json:"bootTime"`
	// DiskRatio is the commit log disk's used fraction, -1 when the node
	// does not report it; DiskLimit the fraction past which it refuses
	// writes (diskSpaceWarningLevelRatio, as Java), -1 when unknown.
	DiskRatio float64 `json:"diskRatio"`
	DiskLimit float64 `json:"diskLimit"`
	// WritesRefused says the node refuses sends now, and Why.
	WritesRefused bool   `json:"writesRefused"`
	Why           string `json:"writesRefusedWhy,omitempty"`
	// Err is why the node's runtime info could not be read.
	Err error `json:"-"`
	// counters: Java's running totals, when the node gives them.
	putTotal, getTotal float64
	hasTotals          bool
}

// topicView is one topic as the Topics page lists it.
type topicView struct {
	Name string `json:"topic"`
	// Type is NORMAL, FIFO, DELAY, TRANSACTION or MIXED; TypeFrom says
	// whether the message.type attribute or the flags told.
	Type     string            `json:"type"`
	TypeFrom string            `json:"typeFrom"`
	System   bool              `json:"system"`
	Queues   int               `json:"writeQueues"` // over every broker
	Read     int               `json:"readQueues"`
	Perm     string            `json:"perm"`
	Order    bool              `json:"order"`
	Brokers  []string          `json:"brokers"`
	Attrs    map[string]string `json:"attributes,omitempty"`
}

// groupView is one consumer group as the Groups page lists it.
type groupView struct {
	Name      string   `json:"group"`
	Brokers   []string `json:"brokers"`
	Consumers int      `json:"consumers"` // -1 unknown
	System    bool     `json:"system"`
}

// Attribute keys of RocketMQ 5 topics. An admin sends them with a
// leading '+' (add) or '-' (remove); a broker may store them either way.
const attrMessageType = "message.type"

func attribute(attrs map[string]string, key string) string {
	if v, ok := attrs[key]; ok {
		return v
	}
	return attrs["+"+key]
}

// topicType says what kind a topic is: its message.type attribute when it
// has one, else what its flags say (an ordered topic is FIFO).
func topicType(tc protocol.TopicConfig) (typ, from string) {
	if v := strings.ToUpper(attribute(tc.Attributes, attrMessageType)); v != "" {
		return v, "attribute"
	}
	if tc.Order {
		return "FIFO", "order flag"
	}
	return "NORMAL", "flags"
}

// permString writes perm bits as RocketMQ's tools do: R, W, RW, or "-".
func permString(perm int) string {
	s := ""
	if perm&protocol.PermRead != 0 {
		s += "R"
	}
	if perm&protocol.PermWrite != 0 {
		s += "W"
	}
	if s == "" {
		return "-"
	}
	return s
}

// gatherer reads the cluster into snapshots and series. One gather runs
// at a time.
type gatherer struct {
	c  *Console
	mu sync.Mutex // serialises gathers; guards the cursors
	// topicCursor and groupCursor turn the sampling budget over the lists.
	topicCursor, groupCursor int
	// viewed are the topics and groups shown lately, sampled first.
	viewed struct {
		sync.Mutex
		topics, groups map[string]time.Time
	}
}

func newGatherer(c *Console) *gatherer {
	g := &gatherer{c: c}
	g.viewed.topics, g.viewed.groups = map[string]time.Time{}, map[string]time.Time{}
	return g
}

// view marks topics and groups as shown, so that the next samples read
// their offsets before the others'.
func (g *gatherer) view(topics, groups []string) {
	now := g.c.cfg.Now()
	g.viewed.Lock()
	defer g.viewed.Unlock()
	for _, t := range topics {
		g.viewed.topics[t] = now
	}
	for _, gr := range groups {
		g.viewed.groups[gr] = now
	}
}

// recent returns the names viewed within the history window, dropping
// the older ones.
func (g *gatherer) recent(m map[string]time.Time) []string {
	cut := g.c.cfg.Now().Add(-g.c.cfg.History)
	g.viewed.Lock()
	defer g.viewed.Unlock()
	var out []string
	for k, t := range m {
		if t.Before(cut) {
			delete(m, k)
			continue
		}
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// shape reads the cluster's shape (name servers, brokers, topics, groups)
// and publishes it as the console's snapshot.
func (g *gatherer) shape(ctx context.Context) *snapshot {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.shapeLocked(ctx)
}

func (g *gatherer) shapeLocked(ctx context.Context) *snapshot {
	adm := g.c.adm
	s := &snapshot{At: g.c.cfg.Now(), topicIdx: map[string]int{}}
	defer g.c.snap.Store(s)
	s.Namesrvs = adm.NamesrvStates(ctx)
	brokers, err := adm.Brokers(ctx)
	if err != nil {
		s.Err = err
		return s
	}
	s.clusterTopics = admin.ClusterTopics(brokers)
	for _, b := range brokers {
		s.Brokers = append(s.Brokers, g.brokerView(ctx, b))
	}
	topics := map[string]*topicView{}
	for _, b := range s.Brokers {
		if b.Role != "MASTER" {
			continue // a slave's table is its master's
		}
		tcs, err := adm.TopicConfigs(ctx, admin.Node{Name: b.Name, Addr: b.Addr})
		if err != nil {
			g.c.cfg.Logger.Warn("console: topic configs", "broker", b.Addr, "err", err)
			continue
		}
		for name, tc := range tcs {
			tv := topics[name]
			if tv == nil {
				typ, from := topicType(tc)
				tv = &topicView{Name: name, Type: typ, TypeFrom: from, Perm: permString(tc.Perm), Order: tc.Order, Attrs: tc.Attributes,
					System: admin.IsSystemTopic(name) || s.clusterTopics[name] || tc.TopicSysFlag != 0}
				topics[name] = tv
			}
			tv.Queues += tc.WriteQueueNums
			tv.Read += tc.ReadQueueNums
			tv.Brokers = append(tv.Brokers, b.Name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(topics)) {
		tv := topics[name]
		slices.Sort(tv.Brokers)
		s.topicIdx[name] = len(s.Topics)
		s.Topics = append(s.Topics, *tv)
	}
	groups, err := adm.ConsumerGroups(ctx)
	if err != nil {
		s.GroupsErr = err
	}
	for _, gr := range groups {
		s.Groups = append(s.Groups, groupView{Name: gr.Name, Brokers: gr.Brokers, Consumers: gr.Consumers, System: admin.IsSystemGroup(gr.Name)})
	}
	return s
}

// Runtime info keys: RocketMQ's (Java brokers give the running totals and
// the disk ratio), and the replicated group's (Runnel).
const (
	infoBoot      = "bootTimestamp"
	infoVersion   = "brokerVersionDesc"
	infoRole      = "brokerRole"
	infoRaftState = "raftState"
	infoRaftTerm  = "raftTerm"
	infoRaftLead  = "raftLeaderId"
	infoPutTotal  = "msgPutTotalTodayNow"
	infoGetTotal  = "msgGetTotalTodayNow"
	infoDiskRatio = "commitLogDiskRatio"
	infoDiskFull  = "diskFull"
)

func (g *gatherer) brokerView(ctx context.Context, b admin.Broker) brokerView {
	v := brokerView{Cluster: b.Cluster, Name: b.Name, ID: b.ID, Addr: b.Addr, Role: "SLAVE", DiskRatio: -1, DiskLimit: -1}
	if b.IsMaster() {
		v.Role = "MASTER"
	}
	n := admin.Node{Name: b.Name, Addr: b.Addr}
	info, err := g.c.adm.BrokerRuntimeInfo(ctx, n)
	if err != nil {
		v.Err = err
		return v
	}
	if r := info[infoRole]; r != "" {
		v.Role = r
	}
	v.RaftState, v.RaftTerm, v.RaftLead = info[infoRaftState], info[infoRaftTerm], info[infoRaftLead]
	v.Version = info[infoVersion]
	if ms, err := strconv.ParseInt(info[infoBoot], 10, 64); err == nil && ms > 0 {
		v.Boot = time.UnixMilli(ms)
	}
	if r, err := strconv.ParseFloat(info[infoDiskRatio], 64); err == nil {
		v.DiskRatio = r
	}
	put, perr := strconv.ParseFloat(info[infoPutTotal], 64)
	get, gerr := strconv.ParseFloat(info[infoGetTotal], 64)
	if perr == nil && gerr == nil {
		v.putTotal, v.getTotal, v.hasTotals = put, get, true
	}
	cfg, err := g.c.adm.BrokerConfig(ctx, n)
	if err == nil {
		if p, err := strconv.Atoi(cfg["brokerPermission"]); err == nil && p&protocol.PermWrite == 0 {
			v.WritesRefused, v.Why = true, "brokerPermission "+cfg["brokerPermission"]+" has no write bit"
		}
		if r, err := strconv.ParseFloat(cfg["diskSpaceWarningLevelRatio"], 64); err == nil {
			v.DiskLimit = r / 100
		}
	}
	diskFull := info[infoDiskFull] == "true" || // Runnel says so
		info[infoDiskFull] == "" && v.DiskRatio >= 0 && v.DiskLimit > 0 && v.DiskRatio >= v.DiskLimit
	if diskFull && !v.WritesRefused {
		v.WritesRefused, v.Why = true, "the store's disk is past diskSpaceWarningLevelRatio"
	}
	if v.Role == "SLAVE" && !v.WritesRefused {
		v.WritesRefused, v.Why = true, "a slave takes no sends"
	}
	return v
}

// Series keys.
func keyBrokerIn(name string) string  { return "broker.in/" + name }
func keyBrokerOut(name string) string { return "broker.out/" + name }
func keyTopicIn(t string) string      { return "topic.in/" + t }
func keyTopicOut(t string) string     { return "topic.out/" + t }
func keyGroupLag(g string) string     { return "group.lag/" + g }
func keyGroupRate(g string) string    { return "group.rate/" + g }

const (
	keyClusterIn  = "cluster.in"
	keyClusterOut = "cluster.out"
)

// sample reads the shape, then the offsets of up to the budgets' topics
// and groups, and records them as series.
func (g *gatherer) sample(ctx context.Context) {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.shapeLocked(ctx)
	if s.Err != nil {
		return
	}
	st, now := g.c.store, s.At
	// Topics: stored messages (the sum of max offsets) per topic.
	var names []string
	for _, t := range s.Topics {
		names = append(names, t.Name)
	}
	picked, full := g.pick(names, g.recent(g.viewed.topics), g.c.cfg.TopicBudget, &g.topicCursor)
	perBroker := map[string]float64{}
	for _, t := range picked {
		stats, err := g.c.adm.TopicStats(ctx, t)
		if err != nil {
			full = false
			continue
		}
		total := 0.0
		for _, q := range stats {
			total += float64(q.MaxOffset)
			perBroker[q.Broker] += float64(q.MaxOffset)
		}
		st.Counter(keyTopicIn(t), now, total)
	}
	// Groups: committed offsets (their rate is consumption) and lag.
	var gnames []string
	for _, gr := range s.Groups {
		gnames = append(gnames, gr.Name)
	}
	gpicked, gfull := g.pick(gnames, g.recent(g.viewed.groups), g.c.cfg.GroupBudget, &g.groupCursor)
	consumed := map[string]float64{} // per topic
	consumedBroker := map[string]float64{}
	for _, gr := range gpicked {
		rows, err := g.c.adm.ConsumerProgress(ctx, gr, "")
		if errors.Is(err, admin.ErrNotFound) {
			st.Gauge(keyGroupLag(gr), now, 0)
			continue
		}
		if err != nil {
			gfull = false
			continue
		}
		var off float64
		for _, r := range rows {
			off += float64(max(r.ConsumerOffset, 0))
			if !strings.HasPrefix(r.Topic, admin.RetryGroupTopicPrefix) {
				consumed[r.Topic] += float64(max(r.ConsumerOffset, 0))
				consumedBroker[r.Broker] += float64(max(r.ConsumerOffset, 0))
			}
		}
		st.Counter(keyGroupRate(gr), now, off)
		st.Gauge(keyGroupLag(gr), now, float64(admin.TotalLag(rows)))
	}
	if gfull {
		// Every group was read: a topic's consumption is the sum of its
		// groups'. With a partial read the sum would jump, so none is kept.
		for _, t := range names {
			st.Counter(keyTopicOut(t), now, consumed[t])
		}
	}
	var in, out float64
	totals := full && gfull
	for _, b := range s.Brokers {
		if b.Role != "MASTER" {
			continue
		}
		switch {
		case b.hasTotals:
			st.Counter(keyBrokerIn(b.Name), now, b.putTotal)
			st.Counter(keyBrokerOut(b.Name), now, b.getTotal)
			in, out = in+b.putTotal, out+b.getTotal
		case full && gfull:
			st.Counter(keyBrokerIn(b.Name), now, perBroker[b.Name])
			st.Counter(keyBrokerOut(b.Name), now, consumedBroker[b.Name])
			in, out = in+perBroker[b.Name], out+consumedBroker[b.Name]
		default:
			totals = false
		}
	}
	if totals || allTotals(s.Brokers) {
		st.Counter(keyClusterIn, now, in)
		st.Counter(keyClusterOut, now, out)
	}
	st.Prune(now)
}

func allTotals(bs []brokerView) bool {
	for _, b := range bs {
		if b.Role == "MASTER" && !b.hasTotals {
			return false
		}
	}
	return len(bs) > 0
}

// pick chooses up to budget names: the recently viewed first, then the
// others in turn from *cursor. full says every name was picked.
func (g *gatherer) pick(all, viewed []string, budget int, cursor *int) (picked []string, full bool) {
	if len(all) <= budget {
		return all, true
	}
	seen := map[string]bool{}
	exists := map[string]bool{}
	for _, n := range all {
		exists[n] = true
	}
	for _, n := range viewed {
		if len(picked) < budget && exists[n] {
			picked, seen[n] = append(picked, n), true
		}
	}
	for i := 0; len(picked) < budget && i < len(all); i++ {
		n := all[(*cursor+i)%len(all)]
		if !seen[n] {
			picked, seen[n] = append(picked, n), true
		}
		if i == len(all)-1 || len(picked) == budget {
			*cursor = (*cursor + i + 1) % len(all)
		}
	}
	return picked, false
}
