package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/runnelmq/runnel/message"
)

// Stats bodies are read by Java's admin tools (mqadmin consumerProgress,
// topicStatus) with fastjson. Their tables are keyed by MessageQueue, which
// fastjson writes as an object used as a key:
//
//	{"offsetTable":{{"brokerName":"b","queueId":0,"topic":"T"}:{...},...}}
//
// That is not JSON, but it is what those tools parse, so the encoders below
// write it and the decoders read it. The official Go client has no reader
// for these bodies.

// OffsetWrapper is one queue's progress in ConsumeStats.
type OffsetWrapper struct {
	BrokerOffset   int64 `json:"brokerOffset"`   // max offset of the queue
	ConsumerOffset int64 `json:"consumerOffset"` // the group's committed offset
	PullOffset     int64 `json:"pullOffset"`     // the group's latest pull offset (RocketMQ 5)
	LastTimestamp  int64 `json:"lastTimestamp"`  // store time of the last consumed message, ms
}

// ConsumeStats is the body of a GET_CONSUME_STATS (208) response.
type ConsumeStats struct {
	OffsetTable map[MessageQueue]OffsetWrapper
	ConsumeTPS  float64
}

// Encode returns the body in fastjson's form, queues sorted.
func (s ConsumeStats) Encode() []byte {
	dst := []byte(`{"consumeTps":`)
	dst = strconv.AppendFloat(dst, s.ConsumeTPS, 'f', -1, 64)
	dst = append(dst, `,"offsetTable":`...)
	dst = appendQueueTable(dst, s.OffsetTable)
	return append(dst, '}')
}

// DecodeConsumeStats parses a GET_CONSUME_STATS body.
func DecodeConsumeStats(body []byte) (*ConsumeStats, error) {
	s := &ConsumeStats{}
	err := decodeQueueTableBody("GET_CONSUME_STATS", body, func(key string, v []byte) error {
		switch key {
		case "consumeTps":
			return json.Unmarshal(v, &s.ConsumeTPS)
		case "offsetTable":
			var err error
			s.OffsetTable, err = decodeQueueTable[OffsetWrapper](v)
			return err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// TopicOffset is one queue's range in TopicStatsTable.
type TopicOffset struct {
	MinOffset           int64 `json:"minOffset"`
	MaxOffset           int64 `json:"maxOffset"`
	LastUpdateTimestamp int64 `json:"lastUpdateTimestamp"` // store time of the newest message, ms
}

// TopicStatsTable is the body of a GET_TOPIC_STATS_INFO (202) response.
type TopicStatsTable struct {
	OffsetTable map[MessageQueue]TopicOffset
}

// Encode returns the body in fastjson's form, queues sorted.
func (t TopicStatsTable) Encode() []byte { return encodeOffsetTableBody(t.OffsetTable) }

// DecodeTopicStatsTable parses a GET_TOPIC_STATS_INFO body.
func DecodeTopicStatsTable(body []byte) (*TopicStatsTable, error) {
	table, _, err := decodeOffsetTableBody[TopicOffset]("GET_TOPIC_STATS_INFO", body)
	if err != nil {
		return nil, err
	}
	return &TopicStatsTable{OffsetTable: table}, nil
}

// encodeOffsetTableBody is the fastjson form of a body whose one field is
// an offsetTable, queues sorted.
func encodeOffsetTableBody[V any](table map[MessageQueue]V) []byte {
	dst := []byte(`{"offsetTable":`)
	dst = appendQueueTable(dst, table)
	return append(dst, '}')
}

// decodeOffsetTableBody parses a body whose one field is an offsetTable;
// seen says whether it had one.
func decodeOffsetTableBody[V any](name string, body []byte) (table map[MessageQueue]V, seen bool, err error) {
	err = decodeQueueTableBody(name, body, func(key string, v []byte) error {
		if key != "offsetTable" {
			return nil
		}
		seen = true
		var err error
		table, err = decodeQueueTable[V](v)
		return err
	})
	return table, seen, err
}

// appendQueueTable writes a MessageQueue-keyed map in fastjson's form.
func appendQueueTable[V any](dst []byte, table map[MessageQueue]V) []byte {
	keys := make([]MessageQueue, 0, len(table))
	for k := range table {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, message.CompareQueues)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendQueueKey(dst, k)
		dst = append(dst, ':')
		v, _ := json.Marshal(table[k]) // structs of numbers: cannot fail
		dst = append(dst, v...)
	}
	return append(dst, '}')
}

// decodeQueueTableBody walks the top-level object of a stats body, calling
// fn with each field's raw value.
func decodeQueueTableBody(name string, body []byte, fn func(key string, v []byte) error) error {
	err := walkObject(body, func(k, v []byte) error {
		if len(k) == 0 || k[0] != '"' {
			return fmt.Errorf("field name %s is not a string", k)
		}
		var key string
		if err := json.Unmarshal(k, &key); err != nil {
			return err
		}
		if err := fn(key, v); err != nil {
			return fmt.Errorf("%s: %v", key, err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrBadBody, name, err)
	}
	return nil
}

// decodeQueueTable reads a MessageQueue-keyed map whose keys are objects
// (fastjson) or JSON strings holding such an object.
func decodeQueueTable[V any](b []byte) (map[MessageQueue]V, error) {
	if string(b) == "null" {
		return nil, nil
	}
	table := make(map[MessageQueue]V)
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) > 0 && t[0] == '[' {
		// gson's form of a map with object keys: [[<mq>,<value>],...].
		var pairs [][2]json.RawMessage
		if err := json.Unmarshal(t, &pairs); err != nil {
			return nil, fmt.Errorf("queue table pairs: %v", err)
		}
		for _, p := range pairs {
			var mq MessageQueue
			if err := json.Unmarshal(p[0], &mq); err != nil {
				return nil, fmt.Errorf("queue key %s: %v", p[0], err)
			}
			var val V
			if err := json.Unmarshal(p[1], &val); err != nil {
				return nil, fmt.Errorf("queue %v: %v", mq, err)
			}
			table[mq] = val
		}
		return table, nil
	}
	err := walkObject(b, func(k, v []byte) error {
		if len(k) > 0 && k[0] == '"' {
			var s string
			if err := json.Unmarshal(k, &s); err != nil {
				return err
			}
			k = []byte(s)
		}
		var mq MessageQueue
		if err := json.Unmarshal(k, &mq); err != nil {
			return fmt.Errorf("queue key %s: %v", k, err)
		}
		var val V
		if err := json.Unmarshal(v, &val); err != nil {
			return fmt.Errorf("queue %v: %v", mq, err)
		}
		table[mq] = val
		return nil
	})
	return table, err
}

// walkObject scans one JSON object whose keys may be any JSON value
// (fastjson's extension) and calls fn with each raw key and value.
func walkObject(b []byte, fn func(k, v []byte) error) error {
	d := jsonDecoder{b: b, anyKeys: true}
	if err := d.expect('{'); err != nil {
		return err
	}
	if d.peek() == '}' {
		d.i++
	} else {
		for {
			d.ws()
			ks := d.i
			if err := d.skip(0); err != nil {
				return err
			}
			k := b[ks:d.i]
			if err := d.expect(':'); err != nil {
				return err
			}
			d.ws()
			vs := d.i
			if err := d.skip(0); err != nil {
				return err
			}
			if err := fn(k, b[vs:d.i]); err != nil {
				return err
			}
			if d.peek() == ',' {
				d.i++
				continue
			}
			if err := d.expect('}'); err != nil {
				return err
			}
			break
		}
	}
	d.ws()
	if d.i != len(b) {
		return d.errorf("trailing data")
	}
	return nil
}

// ResetOffsetBody is the body of RESET_CONSUMER_CLIENT_OFFSET (220, broker to
// consumer) and of the INVOKE_BROKER_TO_RESET_OFFSET response: the offset to
// restart each queue at. The official client parses it by splitting the
// compact fastjson text on ",{" and "}:" (internal/model.go
// parseFastJsonFormat), so Encode writes exactly that compact form.
type ResetOffsetBody struct {
	OffsetTable map[MessageQueue]int64
}

// Encode returns the body in fastjson's compact form, queues sorted.
func (r ResetOffsetBody) Encode() []byte { return encodeOffsetTableBody(r.OffsetTable) }

// DecodeResetOffsetBody parses the fastjson form, one with quoted keys, or
// gson's pair list ([[<mq>,offset],...], as Java 5 brokers write it). A
// body without an offsetTable is refused.
func DecodeResetOffsetBody(body []byte) (*ResetOffsetBody, error) {
	table, seen, err := decodeOffsetTableBody[int64]("RESET_CONSUMER_CLIENT_OFFSET", body)
	if err == nil && !seen {
		err = fmt.Errorf("protocol: RESET_CONSUMER_CLIENT_OFFSET body: no offsetTable")
	}
	if err != nil {
		return nil, err
	}
	return &ResetOffsetBody{OffsetTable: table}, nil
}
