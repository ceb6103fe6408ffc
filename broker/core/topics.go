package core

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/runnelmq/runnel/broker/transaction"
	"github.com/runnelmq/runnel/internal/keyed"
	"github.com/runnelmq/runnel/store"
	"github.com/runnelmq/runnel/topicconf"
)

// System topic names (RocketMQ TopicValidator).
const (
	topicAutoCreate      = topicconf.DefaultTopic // TBW102
	topicSchedule        = "SCHEDULE_TOPIC_XXXX"
	topicScheduleV2      = "SCHEDULE_TOPIC_XXXX_V2"
	topicBenchmark       = "BenchmarkTest"
	topicTransHalf       = transaction.HalfTopic
	topicTrace           = "RMQ_SYS_TRACE_TOPIC"
	topicTransOpHalf     = transaction.OpHalfTopic
	topicTransCheckMax   = transaction.CheckMaxTopic
	topicSelfTest        = "SELF_TEST_TOPIC"
	topicOffsetMoved     = "OFFSET_MOVED_EVENT"
	systemTopicPrefix    = "rmq_sys_"
	retryGroupPrefix     = "%RETRY%"
	dlqGroupPrefix       = "%DLQ%"
	replyTopicSuffix     = "_REPLY_TOPIC"
	maxTopicLen          = 127
	maxQueueNums         = MaxQueueNums
	scheduleQueueNums    = 18
	defaultTopicPerm     = topicconf.PermRead | topicconf.PermWrite
	autoCreateTopicPerm  = topicconf.PermRead | topicconf.PermWrite | topicconf.PermInherit
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
	if !topicconf.ValidName(t) {
		return "The specified topic contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$", false
	}
	if len(t) > maxTopicLen {
		return fmt.Sprintf("The specified topic is longer than topic max length %d.", maxTopicLen), false
	}
	return "", true
}

// topicTable is the broker's topic configuration (RocketMQ
// TopicConfigManager): kept in memory, written through to the store, and
// versioned so the name servers re-read it only when it changed.
//
// Writers of one topic name are serialised by a lock of that name
// (writers), which they hold across the store's write and its sync, so the
// store and the map agree on the name's last config; writers of different
// names run at once, and their syncs share the WAL's fsync. mu guards the
// map and is held only to read or swap entries, so a send looking up its
// topic never waits for a creation's fsync.
//
// journal lists the names changed (created, updated or removed) since the
// last takeChanges, so a registration can carry only those; every change
// enters it under mu together with its version bump, so a version read
// with a taken journal covers exactly the changes taken so far.
type topicTable struct {
	// apply writes an op through the core's backend.
	apply func(*store.Op) error
	now   func() int64 // ms

	writers keyed.Mutexes[string]
	mu      struct {
		sync.RWMutex
		topics  map[string]topicconf.Config
		version topicconf.DataVersion
		journal []string
	}
}

func newTopicTable(apply func(*store.Op) error, nowMillis func() int64) *topicTable {
	t := &topicTable{apply: apply, now: nowMillis}
	t.mu.topics = make(map[string]topicconf.Config)
	t.mu.version = topicconf.DataVersion{Timestamp: nowMillis()}
	return t
}

// withDefaultFilter gives a config stored or sent without a filter type
// RocketMQ's default, SINGLE_TAG.
func withDefaultFilter(tc *topicconf.Config) {
	if tc.TopicFilterType == "" {
		tc.TopicFilterType = topicconf.FilterSingleTag
	}
}

// load makes the table hold exactly configs read from the store, without
// writing; the version moves on, so name servers take the table again. A
// config stored without a filter type has RocketMQ's default.
func (t *topicTable) load(cfgs []topicconf.Config) {
	t.mu.Lock()
	defer t.mu.Unlock()
	clear(t.mu.topics)
	t.mu.version = t.mu.version.Next(t.now())
	for _, c := range cfgs {
		withDefaultFilter(&c)
		t.mu.topics[c.TopicName] = c
	}
}

// get returns a topic's config.
func (t *topicTable) get(name string) (topicconf.Config, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	c, ok := t.mu.topics[name]
	return c, ok
}

// put creates or replaces a topic, persisting it first. It reports whether
// anything changed (an identical config is not rewritten).
func (t *topicTable) put(c topicconf.Config) (bool, error) {
	withDefaultFilter(&c)
	defer t.writers.Lock(c.TopicName)()
	if old, ok := t.get(c.TopicName); ok && sameTopic(old, c) {
		return false, nil
	}
	if err := t.apply(&store.Op{Kind: store.OpPutTopic, TopicConfig: &c}); err != nil {
		return false, fmt.Errorf("core: persist topic %s: %w", c.TopicName, err)
	}
	t.mu.Lock()
	t.mu.topics[c.TopicName] = c
	t.changedLocked(c.TopicName)
	t.mu.Unlock()
	return true, nil
}

// createIfAbsent creates c unless a topic of that name exists, and returns
// the config in force and whether it was created.
func (t *topicTable) createIfAbsent(c topicconf.Config) (topicconf.Config, bool, error) {
	if old, ok := t.get(c.TopicName); ok {
		return old, false, nil
	}
	defer t.writers.Lock(c.TopicName)()
	if old, ok := t.get(c.TopicName); ok {
		return old, false, nil // created while this one waited
	}
	withDefaultFilter(&c)
	if err := t.apply(&store.Op{Kind: store.OpPutTopic, TopicConfig: &c}); err != nil {
		return topicconf.Config{}, false, fmt.Errorf("core: persist topic %s: %w", c.TopicName, err)
	}
	t.mu.Lock()
	t.mu.topics[c.TopicName] = c
	t.changedLocked(c.TopicName)
	t.mu.Unlock()
	return c, true, nil
}

// remove deletes a topic and its messages. It reports whether it existed.
func (t *topicTable) remove(name string) (bool, error) {
	defer t.writers.Lock(name)()
	_, existed := t.get(name)
	if err := t.apply(&store.Op{Kind: store.OpDeleteTopic, Topic: name}); err != nil {
		return existed, fmt.Errorf("core: delete topic %s: %w", name, err)
	}
	if existed {
		t.mu.Lock()
		delete(t.mu.topics, name)
		t.changedLocked(name)
		t.mu.Unlock()
	}
	return existed, nil
}

// changedLocked records a change of name: a new version, and name in the
// journal.
func (t *topicTable) changedLocked(name string) {
	t.mu.version = t.mu.version.Next(t.now())
	t.mu.journal = append(t.mu.journal, name)
}

// takeChanges returns the configs of the topics changed since the last
// call that still exist, whether any changed topic no longer exists, and
// the version that includes those changes, and empties the journal.
func (t *topicTable) takeChanges() (changed map[string]topicconf.Config, removed bool, v topicconf.DataVersion) {
	t.mu.Lock()
	defer t.mu.Unlock()
	changed = make(map[string]topicconf.Config, len(t.mu.journal))
	for _, name := range t.mu.journal {
		if tc, ok := t.mu.topics[name]; ok {
			changed[name] = tc
		} else {
			removed = true
		}
	}
	t.mu.journal = t.mu.journal[:0]
	return changed, removed, t.mu.version
}

// snapshot returns a copy of the table and its version.
func (t *topicTable) snapshot() (map[string]topicconf.Config, topicconf.DataVersion) {
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

func sameTopic(a, b topicconf.Config) bool {
	return a.TopicName == b.TopicName && a.ReadQueueNums == b.ReadQueueNums && a.WriteQueueNums == b.WriteQueueNums &&
		a.Perm == b.Perm && a.TopicFilterType == b.TopicFilterType && a.TopicSysFlag == b.TopicSysFlag && a.Order == b.Order &&
		sameAttributes(a.Attributes, b.Attributes)
}

// newTopic returns a normal topic config.
func newTopic(name string, queues, perm int) topicconf.Config {
	return topicconf.Config{
		TopicName: name, ReadQueueNums: queues, WriteQueueNums: queues, Perm: perm,
		TopicFilterType: topicconf.FilterSingleTag,
	}
}

// systemTopicConfigs are the topics a broker owns from its start
// (TopicConfigManager's constructor): the auto-create template when
// auto-creation is on, the self-test, offset-moved, schedule and reply
// topics, and one topic named after the cluster and one after the broker,
// which tools use to address them.
func systemTopicConfigs(cfg *Config) []topicconf.Config {
	var out []topicconf.Config
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
