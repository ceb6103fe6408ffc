package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/internal/msgtext"
)

// record is one message as --format json writes it, one object per line.
// Field names are a stable interface for scripts: add, never rename.
// Exactly one of body and bodyBase64 is present: body when the body is
// printable text (see msgtext.IsText), bodyBase64 (standard encoding) otherwise.
type record struct {
	Topic          string            `json:"topic"`
	BrokerName     string            `json:"brokerName"`
	QueueID        int32             `json:"queueId"`
	QueueOffset    int64             `json:"queueOffset"`
	MsgID          string            `json:"msgId"`
	OffsetMsgID    string            `json:"offsetMsgId"`
	Keys           []string          `json:"keys"`
	Tags           string            `json:"tags"`
	Properties     map[string]string `json:"properties"`
	BornTimestamp  int64             `json:"bornTimestamp"`
	StoreTimestamp int64             `json:"storeTimestamp"`
	ReconsumeTimes int32             `json:"reconsumeTimes"`
	BodySize       int               `json:"bodySize"`
	Body           *string           `json:"body,omitempty"`
	BodyBase64     []byte            `json:"bodyBase64,omitempty"` // encoding/json writes []byte as base64
}

func newRecord(m *client.MessageExt) record {
	r := record{
		Topic:          m.Topic,
		BrokerName:     m.Queue.BrokerName,
		QueueID:        m.QueueID,
		QueueOffset:    m.QueueOffset,
		MsgID:          m.MsgID,
		OffsetMsgID:    m.OffsetMsgID,
		Keys:           m.Keys(),
		Tags:           m.Tags(),
		Properties:     maps.Clone(m.Properties),
		BornTimestamp:  m.BornTimestamp,
		StoreTimestamp: m.StoreTimestamp,
		ReconsumeTimes: m.ReconsumeTimes,
		BodySize:       len(m.Body),
	}
	// Scripts get [] and {} rather than null.
	if r.Keys == nil {
		r.Keys = []string{}
	}
	if r.Properties == nil {
		r.Properties = map[string]string{}
	}
	r.Body, r.BodyBase64 = msgtext.JSONBody(m.Body)
	return r
}

// appendJSON appends m as one line of JSON. It cannot fail in practice:
// the record holds only strings, numbers and bytes, and json.Marshal
// replaces invalid UTF-8 in strings.
func appendJSON(dst []byte, m *client.MessageExt) ([]byte, error) {
	b, err := json.Marshal(newRecord(m))
	if err != nil {
		return dst, fmt.Errorf("encode message %s: %w", m.MsgID, err)
	}
	return append(append(dst, b...), '\n'), nil
}

// isLineText is msgtext.IsText without line breaks: text that fits on the
// body's one line of --format text.
func isLineText(body []byte) bool {
	return msgtext.IsText(body) && !strings.ContainsAny(string(body), "\n\r")
}

// timeLayout shows timestamps to the millisecond with their zone.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// appendText appends m in the human format, four lines per message:
//
//	topic=T brokerName=B queueId=Q queueOffset=O msgId=M offsetMsgId=S
//	  keys=[k1 k2] tags=T reconsumeTimes=0 born=... stored=...
//	  properties: K=V K="v w" ...
//	  body (N bytes): text
//
// The body is shown as it is when it is one line of printable UTF-8;
// otherwise the label says "quoted" and the body is a Go string literal
// (strconv.Quote: \n, \x00, \u2028 and invalid bytes escaped), so binary
// and multi-line bodies never break the layout. Property values are quoted
// the same way when they are empty or hold spaces, '=', '"' or
// unprintable characters. Times are in loc.
func appendText(dst []byte, m *client.MessageExt, loc *time.Location) []byte {
	dst = append(dst, "topic="...)
	dst = append(dst, m.Topic...)
	dst = append(dst, " brokerName="...)
	dst = append(dst, m.Queue.BrokerName...)
	dst = append(dst, " queueId="...)
	dst = strconv.AppendInt(dst, int64(m.QueueID), 10)
	dst = append(dst, " queueOffset="...)
	dst = strconv.AppendInt(dst, m.QueueOffset, 10)
	dst = append(dst, " msgId="...)
	dst = append(dst, m.MsgID...)
	dst = append(dst, " offsetMsgId="...)
	dst = append(dst, m.OffsetMsgID...)

	dst = append(dst, "\n  keys=["...)
	dst = append(dst, strings.Join(m.Keys(), " ")...)
	dst = append(dst, "] tags="...)
	dst = appendValue(dst, m.Tags())
	dst = append(dst, " reconsumeTimes="...)
	dst = strconv.AppendInt(dst, int64(m.ReconsumeTimes), 10)
	dst = append(dst, " born="...)
	dst = appendTime(dst, m.BornTimestamp, loc)
	dst = append(dst, " stored="...)
	dst = appendTime(dst, m.StoreTimestamp, loc)

	dst = append(dst, "\n  properties:"...)
	for _, k := range slices.Sorted(maps.Keys(m.Properties)) {
		dst = append(dst, ' ')
		dst = appendValue(dst, k)
		dst = append(dst, '=')
		dst = appendValue(dst, m.Properties[k])
	}

	dst = append(dst, "\n  body ("...)
	dst = strconv.AppendInt(dst, int64(len(m.Body)), 10)
	if isLineText(m.Body) {
		dst = append(dst, " bytes): "...)
		dst = append(dst, m.Body...)
	} else {
		dst = append(dst, " bytes, quoted): "...)
		dst = strconv.AppendQuote(dst, string(m.Body))
	}
	return append(dst, '\n')
}

// appendValue appends s bare when that is unambiguous, else quoted.
func appendValue(dst []byte, s string) []byte {
	if s == "" || strings.ContainsAny(s, " =\"") || !isLineText([]byte(s)) || strings.Contains(s, "\t") {
		return strconv.AppendQuote(dst, s)
	}
	return append(dst, s...)
}

func appendTime(dst []byte, ms int64, loc *time.Location) []byte {
	if ms <= 0 {
		return append(dst, '-')
	}
	return time.UnixMilli(ms).In(loc).AppendFormat(dst, timeLayout)
}
