package metrics

import (
	"encoding/binary"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// messageSizeBuckets are Java's: 1 KiB, 4 KiB, 512 KiB, 1, 2 and 4 MiB.
var messageSizeBuckets = []float64{1 << 10, 4 << 10, 512 << 10, 1 << 20, 2 << 20, 4 << 20}

// msgType is Java's TopicMessageType as a metrics label.
type msgType uint8

const (
	typeNormal msgType = iota
	typeFIFO
	typeDelay
	typeTransaction
	nTypes
)

var msgTypeNames = [nTypes]string{"normal", "fifo", "delay", "transaction"}

// maxPullOffsets bounds the pull offsets remembered for in-flight counts.
const maxPullOffsets = 1 << 16

// traffic counts messages in (sends stored) and out (pull answers).
type traffic struct {
	topics, groups *labelSet

	in, inBytes   *prometheus.CounterVec
	size          *prometheus.HistogramVec
	out, outBytes *prometheus.CounterVec

	// inSeries caches, per topic label value, the series of each type.
	inSeries sync.Map // string -> *inTopic
	// outSeries caches, per topic and group label values, their series.
	outSeries sync.Map // outKey -> *outPair

	// pulled is the next offset each group will pull on each queue, from
	// the nextBeginOffset of its last answered pull (Java's pull offset):
	// pullKey -> *atomic.Int64.
	pulled  sync.Map
	nPulled atomic.Int64
}

type inTopic struct {
	topic, system string
	types         [nTypes]atomic.Pointer[inSet]
}

type inSet struct {
	msgs, bytes prometheus.Counter
	size        prometheus.Observer
}

type outKey struct{ topic, group string }

type outPair struct{ msgs, bytes prometheus.Counter }

type pullKey struct {
	group, topic string
	queue        int32
}

func newTraffic(topics, groups *labelSet) *traffic {
	inLabels := []string{"topic", "message_type", "is_system"}
	outLabels := []string{"topic", "consumer_group", "is_retry", "is_system"}
	return &traffic{
		topics: topics, groups: groups,
		in:      counterVec("rocketmq_messages_in_total", "Total number of incoming messages", inLabels),
		inBytes: counterVec("rocketmq_throughput_in_total", "Total traffic of incoming messages (body bytes)", inLabels),
		size: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "rocketmq_message_size", Help: "Incoming messages size (body bytes)", Buckets: messageSizeBuckets,
		}, inLabels),
		out:      counterVec("rocketmq_messages_out_total", "Total number of outgoing messages", outLabels),
		outBytes: counterVec("rocketmq_throughput_out_total", "Total traffic of outgoing messages (stored bytes)", outLabels),
	}
}

func counterVec(name, help string, labels []string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

func (t *traffic) collectors() []prometheus.Collector {
	return []prometheus.Collector{t.in, t.inBytes, t.size, t.out, t.outBytes}
}

// sent counts a send the broker stored: req is SEND_MESSAGE(_V2) or
// SEND_BATCH_MESSAGE.
func (t *traffic) sent(req *protocol.Command) {
	// Ext reads an undecoded header without building its map, and copies
	// only the value it finds: two of them cost less than the typed decode.
	topic, props := req.Ext("b"), req.Ext("i") // V2 header
	if topic == "" {
		topic, props = req.Ext("topic"), req.Ext("properties")
	}
	set := t.inSet(topic, typeOf(props))
	if req.Code != protocol.ReqSendBatchMessage {
		n := float64(len(req.Body))
		set.msgs.Inc()
		set.bytes.Add(n)
		set.size.Observe(n)
		return
	}
	// A batch body is messages end to end (protocol.AppendBatch): totalSize
	// and bodyLen are enough to walk it; the broker has checked it.
	b := req.Body
	var msgs, bytes int
	for len(b) >= 20 {
		total := int(binary.BigEndian.Uint32(b))
		bodyLen := int(binary.BigEndian.Uint32(b[16:]))
		if total < 20 || total > len(b) {
			break
		}
		msgs++
		bytes += bodyLen
		set.size.Observe(float64(bodyLen))
		b = b[total:]
	}
	set.msgs.Add(float64(msgs))
	set.bytes.Add(float64(bytes))
}

// typeOf is Java's BrokerMetricsManager.getMessageType over the raw
// property string (name\x01value\x02...), in one pass without decoding
// it: a prepared transaction, else a sharding key (FIFO), else a delay
// or timer property, else normal.
func typeOf(props string) msgType {
	fifo, delay := false, false
	for props != "" {
		i := strings.IndexByte(props, message.NameValueSeparator)
		if i < 0 {
			break
		}
		name, val := props[:i], props[i+1:]
		if j := strings.IndexByte(val, message.PropertySeparator); j >= 0 {
			val, props = val[:j], val[j+1:]
		} else {
			props = ""
		}
		switch name {
		case protocol.PropertyTransactionPrepared:
			if val == "true" {
				return typeTransaction
			}
		case protocol.PropertyShardingKey:
			fifo = true
		case protocol.PropertyDelayTimeLevel, "__STARTDELIVERTIME", protocol.PropertyTimerDeliverMS,
			protocol.PropertyTimerDelaySec, "TIMER_DELAY_MS":
			delay = true
		}
	}
	switch {
	case fifo:
		return typeFIFO
	case delay:
		return typeDelay
	}
	return typeNormal
}

func (t *traffic) inSet(topic string, typ msgType) *inSet {
	v, ok := t.inSeries.Load(topic)
	if !ok {
		label := t.topics.Value(topic)
		if v, ok = t.inSeries.Load(label); !ok {
			system := boolLabel(label != Other && core.IsSystemTopic(label))
			v, _ = t.inSeries.LoadOrStore(label, &inTopic{topic: label, system: system})
		}
		// Only admitted topics get an entry under their own name, so the
		// map stays bounded.
	}
	it := v.(*inTopic)
	if s := it.types[typ].Load(); s != nil {
		return s
	}
	lv := []string{it.topic, msgTypeNames[typ], it.system}
	s := &inSet{msgs: t.in.WithLabelValues(lv...), bytes: t.inBytes.WithLabelValues(lv...), size: t.size.WithLabelValues(lv...)}
	if !it.types[typ].CompareAndSwap(nil, s) {
		return it.types[typ].Load()
	}
	return s
}

// pulledMsgs counts a pull answered with messages: req is PULL_MESSAGE or
// LITE_PULL_MESSAGE, resp its SUCCESS answer, whose body is stored
// records end to end, each starting with its total size.
func (t *traffic) pulledMsgs(req, resp *protocol.Command, h *protocol.PullMessageRequestHeader, herr error) {
	topic, group := h.Topic, h.ConsumerGroup
	b := resp.Body
	msgs := 0
	for len(b) >= 4 {
		total := int(binary.BigEndian.Uint32(b))
		if total <= 0 || total > len(b) {
			break
		}
		msgs++
		b = b[total:]
	}
	p := t.outPair(topic, group)
	p.msgs.Add(float64(msgs))
	p.bytes.Add(float64(len(resp.Body)))

	next, err := strconv.ParseInt(resp.Ext("nextBeginOffset"), 10, 64)
	if err != nil || herr != nil {
		return
	}
	k := pullKey{group: group, topic: topic, queue: h.QueueID}
	v, ok := t.pulled.Load(k)
	if !ok {
		if t.nPulled.Load() >= maxPullOffsets || t.groups.Value(group) == Other {
			return
		}
		var loaded bool
		if v, loaded = t.pulled.LoadOrStore(k, new(atomic.Int64)); !loaded {
			t.nPulled.Add(1)
		}
	}
	v.(*atomic.Int64).Store(next)
}

func (t *traffic) outPair(topic, group string) *outPair {
	k := outKey{topic, group}
	if v, ok := t.outSeries.Load(k); ok {
		return v.(*outPair)
	}
	lk := outKey{t.topics.Value(topic), t.groups.Value(group)}
	if v, ok := t.outSeries.Load(lk); ok {
		return v.(*outPair)
	}
	retry := strings.HasPrefix(lk.topic, "%RETRY%")
	system := lk.topic != Other && core.IsSystemTopic(lk.topic) || lk.group != Other && core.IsSystemGroup(lk.group)
	lv := []string{lk.topic, lk.group, boolLabel(retry), boolLabel(system)}
	v, _ := t.outSeries.LoadOrStore(lk, &outPair{msgs: t.out.WithLabelValues(lv...), bytes: t.outBytes.WithLabelValues(lv...)})
	return v.(*outPair)
}

// pullOffset returns the offset a group pulls next on a queue, if known.
func (t *traffic) pullOffset(group, topic string, queue int32) (int64, bool) {
	if v, ok := t.pulled.Load(pullKey{group, topic, queue}); ok {
		return v.(*atomic.Int64).Load(), true
	}
	return 0, false
}
