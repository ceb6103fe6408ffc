package core

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/runnelmq/runnel/remoting/protocol"
	"github.com/runnelmq/runnel/store"
	"github.com/runnelmq/runnel/store/meta"
)

// System topic names (RocketMQ TopicValidator).
const (
	topicAutoCreate      = protocol.DefaultTopicKey // TBW102
	topicSchedule        = "SCHEDULE_TOPIC_XXXX"
	topicScheduleV2      = "SCHEDULE_TOPIC_XXXX_V2"
	topicBenchmark       = "BenchmarkTest"
	topicTransHalf       = "RMQ_SYS_TRANS_HALF_TOPIC"
	topicTrace           = "RMQ_SYS_TRACE_TOPIC"
	topicTransOpHalf     = "RMQ_SYS_TRANS_OP_HALF_TOPIC"
	topicTransCheckMax   = "TRANS_CHECK_MAX_TIME_TOPIC"
	topicSelfTest        = "SELF_TEST_TOPIC"
	topicOffsetMoved     = "OFFSET_MOVED_EVENT"
	systemTopicPrefix    = "rmq_sys_"
	retryGroupPrefix     = "%RETRY%"
	dlqGroupPrefix       = "%DLQ%"
	replyTopicSuffix     = "_REPLY_TOPIC"
	maxTopicLen          = 127
	maxQueueNums         = MaxQueueNums
	scheduleQueueNums    = 18
	retryQueueNums       = 1
	defaultTopicPerm     = protocol.PermRead | protocol.PermWrite
	autoCreateTopicPerm  = protocol.PermRead | protocol.PermWrite | protocol.PermInherit
	defaultAdminQueueNum = 8
)

// notAllowedSendTopics cannot be sent to by clients (TopicValidator
// NOT_ALLOWED_SEND_TOPIC_SET).
var notAllowedSendTopics = map[string]bool{
	topicSchedule: true, topicTransHalf: true, topicTransOpHalf: true, topicTransCheckMax: true,
	topicSelfTest: true, topicOffsetMoved: true, topicScheduleV2: true,
}

// systemTopics cannot be created or deleted through the admin API
// (TopicValidator SYSTEM_TOPIC_SET, plus the rmq_sys_ prefix).
var systemTopics = map[string]bool{
	topicAutoCreate: true, topicSchedule: true, topicBenchmark: true, topicTransHalf: true,
	topicTrace: true, topicTransOpHalf: true, topicTransCheckMax: true, topicSelfTest: true,
	topicOffsetMoved: true, topicScheduleV2: true,
}

func isSystemTopic(t string) bool { return systemTopics[t] || strings.HasPrefix(t, systemTopicPrefix) }

// checkTopicName applies RocketMQ's topic rule: ^[%|a-zA-Z0-9_-]+$, at most
// 127 characters. The remark is Java's.
func checkTopicName(t string) (remark string, ok bool) {
	if strings.TrimSpace(t) == "" {
		return "The specified topic is blank.", false
	}
	for i := 0; i < len(t); i++ {
		if !validNameChar(t[i]) {
			return "The specified topic contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$", false
		}
	}
	if len(t) > maxTopicLen {
		return fmt.Sprintf("The specified topic is longer than topic max length %d.", maxTopicLen), false
	}
	return "", true
}

func validNameChar(ch byte) bool {
	return ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' ||
		ch == '%' || ch == '|' || ch == '_' || ch == '-'
}

// topicTable is the broker's topic configuration (RocketMQ
// TopicConfigManager): kept in memory, written through to the store, and
// versioned so the name servers re-read it only when it changed.
//
// Writers are serialised by writeMu, which they hold across the store's
// write (and its sync); mu guards the map and is held only to read or swap
// entries, so a send looking up its topic never waits for a creation's
// fsync.
type topicTable struct {
	// apply writes an op through the core's backend.
	apply func(*store.Op) error
	now   func() int64 // ms

	writeMu sync.Mutex
	mu      struct {
		sync.RWMutex
		topics  map[string]protocol.TopicConfig
		version protocol.DataVersion
	}
}

func newTopicTable(apply func(*store.Op) error, nowMillis func() int64) *topicTable {
	t := &topicTable{apply: apply, now: nowMillis}
	t.mu.topics = make(map[string]protocol.TopicConfig)
	t.mu.version = protocol.DataVersion{Timestamp: nowMillis()}
	return t
}

// load makes the table hold exactly configs read from the store, without
// writing; the version moves on, so name servers take the table again.
func (t *topicTable) load(cfgs []meta.TopicConfig) {
	t.mu.Lock()
	defer t.mu.Unlock()
	clear(t.mu.topics)
	t.mu.version = t.mu.version.Next(t.now())
	for _, c := range cfgs {
		t.mu.topics[c.Name] = fromMeta(c)
	}
}

func fromMeta(c meta.TopicConfig) protocol.TopicConfig {
	f := c.TopicFilterType
	if f == "" {
		f = protocol.TopicFilterSingleTag
	}
	return protocol.TopicConfig{
		TopicName: c.Name, ReadQueueNums: int(c.ReadQueueNums), WriteQueueNums: int(c.WriteQueueNums),
		Perm: int(c.Perm), TopicFilterType: f, TopicSysFlag: int(c.TopicSysFlag), Order: c.Order,
	}
}

func toMeta(c protocol.TopicConfig) meta.TopicConfig {
	return meta.TopicConfig{
		Name: c.TopicName, ReadQueueNums: int32(c.ReadQueueNums), WriteQueueNums: int32(c.WriteQueueNums),
		Perm: int32(c.Perm), TopicFilterType: c.TopicFilterType, TopicSysFlag: int32(c.TopicSysFlag), Order: c.Order,
	}
}

// get returns a topic's config.
func (t *topicTable) get(name string) (protocol.TopicConfig, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	c, ok := t.mu.topics[name]
	return c, ok
}

// put creates or replaces a topic, persisting it first. It reports whether
// anything changed (an identical config is not rewritten).
func (t *topicTable) put(c protocol.TopicConfig) (bool, error) {
	if c.TopicFilterType == "" {
		c.TopicFilterType = protocol.TopicFilterSingleTag
	}
	t.writeMu.Lock()
	defer t.writeMu.Unlock()
	if old, ok := t.get(c.TopicName); ok && sameTopic(old, c) {
		return false, nil
	}
	m := toMeta(c)
	if err := t.apply(&store.Op{Kind: store.OpPutTopic, TopicConfig: &m}); err != nil {
		return false, fmt.Errorf("core: persist topic %s: %w", c.TopicName, err)
	}
	t.mu.Lock()
	t.mu.topics[c.TopicName] = c
	t.mu.version = t.mu.version.Next(t.now())
	t.mu.Unlock()
	return true, nil
}

// createIfAbsent creates c unless a topic of that name exists, and returns
// the config in force and whether it was created.
func (t *topicTable) createIfAbsent(c protocol.TopicConfig) (protocol.TopicConfig, bool, error) {
	if old, ok := t.get(c.TopicName); ok {
		return old, false, nil
	}
	t.writeMu.Lock()
	defer t.writeMu.Unlock()
	if old, ok := t.get(c.TopicName); ok {
		return old, false, nil // created while this one waited
	}
	if c.TopicFilterType == "" {
		c.TopicFilterType = protocol.TopicFilterSingleTag
	}
	m := toMeta(c)
	if err := t.apply(&store.Op{Kind: store.OpPutTopic, TopicConfig: &m}); err != nil {
		return protocol.TopicConfig{}, false, fmt.Errorf("core: persist topic %s: %w", c.TopicName, err)
	}
	t.mu.Lock()
	t.mu.topics[c.TopicName] = c
	t.mu.version = t.mu.version.Next(t.now())
	t.mu.Unlock()
	return c, true, nil
}

// remove deletes a topic and its messages. It reports whether it existed.
func (t *topicTable) remove(name string) (bool, error) {
	t.writeMu.Lock()
	defer t.writeMu.Unlock()
	_, existed := t.get(name)
	if err := t.apply(&store.Op{Kind: store.OpDeleteTopic, Topic: name}); err != nil {
		return existed, fmt.Errorf("core: delete topic %s: %w", name, err)
	}
	if existed {
		t.mu.Lock()
		delete(t.mu.topics, name)
		t.mu.version = t.mu.version.Next(t.now())
		t.mu.Unlock()
	}
	return existed, nil
}

// snapshot returns a copy of the table and its version.
func (t *topicTable) snapshot() (map[string]protocol.TopicConfig, protocol.DataVersion) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return maps.Clone(t.mu.topics), t.mu.version
}

// names returns the topic names, sorted.
func (t *topicTable) names() []string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return slices.Sorted(maps.Keys(t.mu.topics))
}

func sameTopic(a, b protocol.TopicConfig) bool {
	return a.TopicName == b.TopicName && a.ReadQueueNums == b.ReadQueueNums && a.WriteQueueNums == b.WriteQueueNums &&
		a.Perm == b.Perm && a.TopicFilterType == b.TopicFilterType && a.TopicSysFlag == b.TopicSysFlag && a.Order == b.Order
}

// newTopic returns a normal topic config.
func newTopic(name string, queues, perm int) protocol.TopicConfig {
	return protocol.TopicConfig{
		TopicName: name, ReadQueueNums: queues, WriteQueueNums: queues, Perm: perm,
		TopicFilterType: protocol.TopicFilterSingleTag,
	}
}

// systemTopicConfigs are the topics a broker owns from its start
// (TopicConfigManager's constructor): the auto-create template when
// auto-creation is on, the self-test, offset-moved, schedule and reply
// topics, and one topic named after the cluster and one after the broker,
// which tools use to address them.
func systemTopicConfigs(cfg *Config) []protocol.TopicConfig {
	var out []protocol.TopicConfig
	if cfg.AutoCreateTopicEnable {
		out = append(out, newTopic(topicAutoCreate, cfg.DefaultTopicQueueNums, autoCreateTopicPerm))
	}
	out = append(out,
		newTopic(topicSelfTest, 1, defaultTopicPerm),
		newTopic(cfg.ClusterName, 1, autoCreateTopicPerm),
		newTopic(cfg.BrokerName, 1, autoCreateTopicPerm),
		newTopic(topicOffsetMoved, 1, defaultTopicPerm),
		newTopic(topicSchedule, scheduleQueueNums, defaultTopicPerm),
		newTopic(cfg.ClusterName+replyTopicSuffix, 1, defaultTopicPerm),
		newTopic(topicTrace, 1, defaultTopicPerm), // Java: when traceTopicEnable; here always, for WithTrace clients
	)
	return out
}

// MaxQueueNums is the most queues a topic may have.
const MaxQueueNums = 1024
