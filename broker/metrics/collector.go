package metrics

import (
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// collector computes the gauges (and the dead-letter counter) from the
// core when /metrics is scraped.
type collector struct {
	m *Metrics

	topicNum, groupNum       *prometheus.Desc
	producerConns, consConns *prometheus.Desc
	lagMsgs, lagLatency      *prometheus.Desc
	inflight, dlq, storage   *prometheus.Desc
	forced, forcedLost       *prometheus.Desc
}

func newCollector(m *Metrics) *collector {
	lag := []string{"consumer_group", "topic", "is_retry", "is_system"}
	return &collector{
		m:        m,
		topicNum: prometheus.NewDesc("rocketmq_topic_number", "Active topic number", nil, nil),
		groupNum: prometheus.NewDesc("rocketmq_consumer_group_number", "Active subscription group number", nil, nil),
		producerConns: prometheus.NewDesc("rocketmq_producer_connections", "Producer connections",
			[]string{"language", "version", "protocol_type"}, nil),
		consConns: prometheus.NewDesc("rocketmq_consumer_connections", "Consumer connections",
			[]string{"consumer_group", "language", "version", "consume_mode", "protocol_type", "is_system"}, nil),
		lagMsgs:    prometheus.NewDesc("rocketmq_consumer_lag_messages", "Consumer lag messages", lag, nil),
		lagLatency: prometheus.NewDesc("rocketmq_consumer_lag_latency", "Consumer lag time (milliseconds)", lag, nil),
		inflight:   prometheus.NewDesc("rocketmq_consumer_inflight_messages", "Consumer inflight messages", lag, nil),
		dlq: prometheus.NewDesc("rocketmq_send_to_dlq_messages_total", "Consumer send to DLQ messages",
			[]string{"consumer_group", "is_system"}, nil),
		storage: prometheus.NewDesc("rocketmq_storage_size", "Broker storage size (bytes on disk)",
			[]string{"storage_type", "storage_medium"}, nil),
		forced: prometheus.NewDesc("rocketmq_storage_forced_clean_messages_total",
			"Messages deleted by forced cleaning (disk above diskSpaceCleanForciblyRatio) whatever their age", nil, nil),
		forcedLost: prometheus.NewDesc("rocketmq_storage_forced_clean_unconsumed_messages_total",
			"Messages forced cleaning deleted before the consumer group consumed them",
			[]string{"consumer_group", "is_system"}, nil),
	}
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.topicNum, c.groupNum, c.producerConns, c.consConns,
		c.lagMsgs, c.lagLatency, c.inflight, c.dlq, c.storage, c.forced, c.forcedLost} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	co := c.m.core
	if co == nil { // an exporter of traffic alone (benchmarks, fuzzing)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.topicNum, prometheus.GaugeValue, float64(co.TopicCount()))
	ch <- prometheus.MustNewConstMetric(c.groupNum, prometheus.GaugeValue, float64(len(co.KnownGroups())))
	c.connections(ch)
	c.lag(ch)
	c.deadLetters(ch)
	c.forcedCleans(ch)
	if c.m.storeDir != "" {
		ch <- prometheus.MustNewConstMetric(c.storage, prometheus.GaugeValue, float64(dirSize(c.m.storeDir)), "local", "disk")
	}
}

func (c *collector) connections(ch chan<- prometheus.Metric) {
	type prodKey struct{ lang, version, protocol string }
	prods := map[prodKey]int{}
	for _, p := range c.m.core.ProducerCensus() {
		prods[prodKey{strings.ToLower(p.Language), versionLabel(p.Version), p.Protocol}] += p.Count
	}
	for k, n := range prods {
		ch <- prometheus.MustNewConstMetric(c.producerConns, prometheus.GaugeValue, float64(n), k.lang, k.version, k.protocol)
	}
	type consKey struct{ group, lang, version, mode, protocol string }
	cons := map[consKey]int{}
	for _, p := range c.m.core.ConsumerCensus() {
		k := consKey{c.m.groups.Value(p.Group), strings.ToLower(p.Language), versionLabel(p.Version), consumeMode(p.ConsumeType), p.Protocol}
		cons[k] += p.Count
	}
	for k, n := range cons {
		ch <- prometheus.MustNewConstMetric(c.consConns, prometheus.GaugeValue, float64(n),
			k.group, k.lang, k.version, k.mode, k.protocol, boolLabel(k.group != Other && core.IsSystemGroup(k.group)))
	}
}

// lag follows Java's ConsumerLagCalculator over the committed offsets:
// per group and topic, lag is the sum over queues of max offset minus
// committed offset; in-flight the pulled but uncommitted messages (pull
// offset minus committed offset); lag latency the age of the oldest
// unconsumed message.
func (c *collector) lag(ch chan<- prometheus.Metric) {
	type key struct{ group, topic string }
	type val struct{ lag, inflight, earliest int64 }
	st := c.m.core.Store()
	agg := map[key]*val{}
	for _, e := range c.m.core.ConsumerOffsets() {
		k := key{c.m.groups.Value(e.Group), c.m.topics.Value(e.Topic)}
		v := agg[k]
		if v == nil {
			v = &val{}
			agg[k] = v
		}
		hi := st.MaxOffset(e.Topic, e.QueueID)
		committed := max(e.Offset, st.MinOffset(e.Topic, e.QueueID))
		if hi > committed {
			v.lag += hi - committed
			if qe, err := st.QueueEntry(e.Topic, e.QueueID, committed); err == nil && (v.earliest == 0 || qe.StoreTimestamp < v.earliest) {
				v.earliest = qe.StoreTimestamp
			}
		}
		if pulled, ok := c.m.traffic.pullOffset(e.Group, e.Topic, e.QueueID); ok && pulled > e.Offset {
			v.inflight += min(pulled, hi) - e.Offset
		}
	}
	now := c.m.now().UnixMilli()
	for k, v := range agg {
		lv := []string{k.group, k.topic, boolLabel(strings.HasPrefix(k.topic, "%RETRY%")),
			boolLabel(k.topic != Other && core.IsSystemTopic(k.topic) || k.group != Other && core.IsSystemGroup(k.group))}
		var latency int64
		if v.earliest != 0 {
			latency = max(now-v.earliest, 0)
		}
		ch <- prometheus.MustNewConstMetric(c.lagMsgs, prometheus.GaugeValue, float64(v.lag), lv...)
		ch <- prometheus.MustNewConstMetric(c.lagLatency, prometheus.GaugeValue, float64(latency), lv...)
		ch <- prometheus.MustNewConstMetric(c.inflight, prometheus.GaugeValue, float64(v.inflight), lv...)
	}
}

// deadLetters counts, per group, the messages its %DLQ% topic ever took:
// the sum of its queues' max offsets, which only grows. Every path into
// the DLQ (a send-back past its retries, a retry send diverted) ends
// there, so the count is read rather than hooked into each.
func (c *collector) deadLetters(ch chan<- prometheus.Metric) {
	topics, _ := c.m.core.Topics()
	st := c.m.core.Store()
	agg := map[string]int64{}
	for name, tc := range topics {
		group, ok := strings.CutPrefix(name, "%DLQ%")
		if !ok {
			continue
		}
		var n int64
		for q := range int32(max(tc.WriteQueueNums, tc.ReadQueueNums)) {
			n += st.MaxOffset(name, q)
		}
		agg[c.m.groups.Value(group)] += n
	}
	for g, n := range agg {
		ch <- prometheus.MustNewConstMetric(c.dlq, prometheus.CounterValue, float64(n), g, boolLabel(g != Other && core.IsSystemGroup(g)))
	}
}

// forcedCleans counts what forced cleaning deleted, in all and by the
// group that had not consumed it.
func (c *collector) forcedCleans(ch chan<- prometheus.Metric) {
	fc := c.m.core.ForcedCleans()
	ch <- prometheus.MustNewConstMetric(c.forced, prometheus.CounterValue, float64(fc.Messages))
	agg := map[string]int64{}
	for g, n := range fc.Unconsumed {
		agg[c.m.groups.Value(g)] += n
	}
	for g, n := range agg {
		ch <- prometheus.MustNewConstMetric(c.forcedLost, prometheus.CounterValue, float64(n), g, boolLabel(g != Other && core.IsSystemGroup(g)))
	}
}

// versionLabel is Java's MQVersion.getVersionDesc in lower case.
func versionLabel(v int) string { return strings.ToLower(protocol.VersionName(v)) }

// consumeMode is Java's ConsumeType.getTypeCN in lower case.
func consumeMode(t string) string {
	switch t {
	case "CONSUME_PASSIVELY", "PUSH":
		return "push"
	case "CONSUME_ACTIVELY", "PULL":
		return "pull"
	case "CONSUME_POP", "POP":
		return "pop"
	}
	return strings.ToLower(t)
}

// dirSize sums the sizes of the files under dir.
func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // a file removed while walking
		}
		if d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
