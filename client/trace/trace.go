// Package trace owns the message-trace record format RocketMQ clients
// write when tracing is on (the official clients' WithTrace; Java's
// TraceDataEncoder, rocketmq-client-go internal/trace.go): a trace message
// on RMQ_SYS_TRACE_TOPIC, keyed (KEYS) by the ids of the messages it
// traces, whose body holds records separated by \x02, each of fields
// separated by \x01:
//
//	Pub       time region group topic msgId tags keys storeHost bodyLength cost msgType offsetMsgId success clientHost
//	SubBefore time region group requestId msgId retryTimes keys clientHost
//	SubAfter  requestId msgId cost success keys contextCode time group
//
// Clients append fields over the versions (clientHost, the SubAfter time
// and group); Parse reads what is there and ignores what follows.
package trace

import (
	"strconv"
	"strings"
)

// Topic is where clients write traces by default.
const Topic = "RMQ_SYS_TRACE_TOPIC"

// The separators of the format.
const (
	FieldSeparator  = "\x01"
	RecordSeparator = "\x02"
)

// Record types.
const (
	Pub       = "Pub"
	SubBefore = "SubBefore"
	SubAfter  = "SubAfter"
)

// Record is one produce (Pub) or consume (SubBefore, SubAfter) record of a
// message.
type Record struct {
	Type string `json:"type"`
	// Time is epoch ms: when the send or the consume started.
	Time       int64  `json:"time"`
	Group      string `json:"group"`
	ClientHost string `json:"clientHost,omitempty"`
	// CostMs is the send's or the consume's duration (Pub, SubAfter).
	CostMs int64 `json:"costMs"`
	// Success is the send's or the consume's outcome; nil when the record
	// does not say (SubBefore).
	Success *bool  `json:"success,omitempty"`
	Topic   string `json:"topic,omitempty"`
	MsgID   string `json:"msgId"`
	Tags    string `json:"tags,omitempty"`
	Keys    string `json:"keys,omitempty"`
	// StoreHost and OffsetMsgID are the broker's, from a Pub record.
	StoreHost   string `json:"storeHost,omitempty"`
	OffsetMsgID string `json:"offsetMsgId,omitempty"`
	BodyLength  int    `json:"bodyLength,omitempty"`
	// RequestID ties a SubBefore to its SubAfter.
	RequestID  string `json:"requestId,omitempty"`
	RetryTimes int    `json:"retryTimes,omitempty"`
}

// Parse reads the records of one trace message body. Records of an
// unknown type, or too short to name their message, are skipped.
func Parse(body string) []Record {
	var out []Record
	for _, rec := range strings.Split(body, RecordSeparator) {
		f := fields(strings.Split(rec, FieldSeparator))
		switch f.str(0) {
		case Pub:
			if len(f) < 13 {
				continue
			}
			out = append(out, Record{Type: Pub, Time: f.num(1), Group: f.str(3), Topic: f.str(4), MsgID: f.str(5),
				Tags: f.str(6), Keys: f.str(7), StoreHost: f.str(8), BodyLength: int(f.num(9)), CostMs: f.num(10),
				OffsetMsgID: f.str(12), Success: f.flag(13), ClientHost: f.str(14)})
		case SubBefore:
			if len(f) < 6 {
				continue
			}
			out = append(out, Record{Type: SubBefore, Time: f.num(1), Group: f.str(3), RequestID: f.str(4),
				MsgID: f.str(5), RetryTimes: int(f.num(6)), Keys: nullUnwrap(f.str(7)), ClientHost: f.str(8)})
		case SubAfter:
			if len(f) < 5 {
				continue
			}
			out = append(out, Record{Type: SubAfter, RequestID: f.str(1), MsgID: f.str(2), CostMs: f.num(3),
				Success: f.flag(4), Keys: nullUnwrap(f.str(5)), Time: f.num(7), Group: f.str(8)})
		}
	}
	return out
}

// Of returns the records of message id from trace message bodies, in the
// order given; a SubAfter takes its client host, and its group and time
// when it lacks them, from its SubBefore.
func Of(id string, bodies []string) []Record {
	var out []Record
	before := map[string]Record{}
	for _, b := range bodies {
		for _, r := range Parse(b) {
			if r.MsgID != id {
				continue
			}
			if r.Type == SubBefore {
				before[r.RequestID] = r
			}
			out = append(out, r)
		}
	}
	for i, r := range out {
		b, ok := before[r.RequestID]
		if !ok || r.Type != SubAfter {
			continue
		}
		out[i].ClientHost = b.ClientHost
		if r.Group == "" {
			out[i].Group = b.Group
		}
		if r.Time == 0 {
			out[i].Time = b.Time
		}
	}
	return out
}

type fields []string

func (f fields) str(i int) string {
	if i < len(f) {
		return f[i]
	}
	return ""
}

func (f fields) num(i int) int64 {
	v, _ := strconv.ParseInt(f.str(i), 10, 64)
	return v
}

func (f fields) flag(i int) *bool {
	if i >= len(f) {
		return nil
	}
	b := f[i] == "true"
	return &b
}

// nullUnwrap undoes the clients' "null" for an empty field (written for
// Java's console).
func nullUnwrap(s string) string {
	if s == "null" {
		return ""
	}
	return s
}
