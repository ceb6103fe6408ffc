package console

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/client/queue"
	"github.com/runnelmq/runnel/client/trace"
	"github.com/runnelmq/runnel/console/chart"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// msgRow is a message in a list of them.
type msgRow struct {
	Topic       string   `json:"topic"`
	Broker      string   `json:"brokerName"`
	QueueID     int32    `json:"queueId"`
	QueueOffset int64    `json:"queueOffset"`
	MsgID       string   `json:"msgId"`
	OffsetMsgID string   `json:"offsetMsgId"`
	Tags        string   `json:"tags,omitempty"`
	Keys        []string `json:"keys"`
	Stored      int64    `json:"storeTimestamp"`
	Size        int      `json:"bodySize"`
	Preview     string   `json:"preview"`
	// Origin is a dead letter's original topic.
	Origin     string `json:"originTopic,omitempty"`
	Reconsumed int32  `json:"reconsumeTimes"`
}

func rowOf(m *protocol.MessageExt, broker string) msgRow {
	r := msgRow{Topic: m.Topic, Broker: broker, QueueID: m.QueueID, QueueOffset: m.QueueOffset, MsgID: m.MsgID, OffsetMsgID: m.OffsetMsgID,
		Tags: m.Tags(), Keys: m.Keys(), Stored: m.StoreTimestamp, Size: len(m.Body), Reconsumed: m.ReconsumeTimes,
		Origin: m.Property(protocol.PropertyRetryTopic)}
	if r.Keys == nil {
		r.Keys = []string{}
	}
	r.Preview = preview(m.Body, 80)
	return r
}

// printable reports whether b is UTF-8 text without control bytes other
// than tab and newlines.
func printable(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0x7f {
			return false
		}
	}
	return true
}

func preview(b []byte, n int) string {
	if !printable(b) {
		return fmt.Sprintf("(%d bytes, binary)", len(b))
	}
	s := strings.Join(strings.Fields(string(b)), " ")
	if utf8.RuneCountInString(s) > n {
		rs := []rune(s)
		s = string(rs[:n]) + "…"
	}
	return s
}

type messagesModel struct {
	Mode   string   `json:"mode"` // key, id, browse
	Topic  string   `json:"topic"`
	Key    string   `json:"key,omitempty"`
	ID     string   `json:"id,omitempty"`
	Broker string   `json:"brokerName,omitempty"`
	Queue  string   `json:"queueId,omitempty"`
	Offset string   `json:"offset,omitempty"`
	Begin  string   `json:"begin,omitempty"`
	End    string   `json:"end,omitempty"`
	Count  int      `json:"count"`
	Rows   []msgRow `json:"messages"`
	Ran    bool     `json:"-"`
	Topics []string `json:"-"`
	Note   string   `json:"note,omitempty"`
}

// maxBrowse bounds the messages one browse returns.
const maxBrowse = 500

func (c *Console) messagesView(ctx context.Context, r *http.Request) (string, any, error) {
	v := r.URL.Query()
	m := messagesModel{Mode: v.Get("mode"), Topic: strings.TrimSpace(v.Get("topic")), Key: strings.TrimSpace(v.Get("key")),
		ID: strings.TrimSpace(v.Get("id")), Broker: v.Get("broker"), Queue: v.Get("queue"), Offset: v.Get("offset"),
		Begin: v.Get("begin"), End: v.Get("end"), Count: 32, Rows: []msgRow{}}
	if n, err := strconv.Atoi(v.Get("count")); err == nil && n > 0 {
		m.Count = min(n, maxBrowse)
	}
	for _, t := range c.snap.Load().Topics {
		if !t.System || strings.HasPrefix(t.Name, admin.DLQTopicPrefix) || t.Name == trace.Topic {
			m.Topics = append(m.Topics, t.Name)
		}
	}
	var err error
	switch m.Mode {
	case "":
		if m.Topic != "" {
			m.Mode = "browse"
		}
		return "Messages", m, nil
	case "key":
		err = c.findByKey(ctx, &m)
	case "id":
		err = c.findByID(ctx, &m)
	case "browse":
		err = c.browse(ctx, &m)
	default:
		err = badRequest(fmt.Sprintf("mode %q: want key, id or browse", m.Mode))
	}
	m.Ran = true
	return "Messages", m, err
}

func (c *Console) findByKey(ctx context.Context, m *messagesModel) error {
	if m.Topic == "" || m.Key == "" {
		return badRequest("A search by key needs the topic and the key.")
	}
	q := admin.KeyQuery{Topic: m.Topic, Key: m.Key, Max: m.Count}
	var err error
	if m.Begin != "" {
		if q.Begin, err = parseTimeField(m.Begin); err != nil {
			return err
		}
	}
	if m.End != "" {
		if q.End, err = parseTimeField(m.End); err != nil {
			return err
		}
	}
	msgs, err := c.adm.QueryMessageByKey(ctx, q)
	if err != nil {
		return err
	}
	for _, msg := range msgs {
		m.Rows = append(m.Rows, rowOf(msg, c.brokerOfHost(msg)))
	}
	if len(m.Rows) == 0 {
		m.Note = fmt.Sprintf("No message with key %q on topic %s.", m.Key, m.Topic)
	}
	return nil
}

func (c *Console) findByID(ctx context.Context, m *messagesModel) error {
	if m.ID == "" {
		return badRequest("Give the message id: its msgId (the id a producer reports) with the topic, or its offsetMsgId.")
	}
	msg, err := c.adm.QueryMessageByID(ctx, m.ID, m.Topic)
	if err != nil {
		return err
	}
	m.Rows = append(m.Rows, rowOf(msg, c.brokerOfHost(msg)))
	return nil
}

// brokerOfHost names the broker group whose node stored m.
func (c *Console) brokerOfHost(m *protocol.MessageExt) string {
	host := m.StoreHost.String()
	for _, b := range c.snap.Load().Brokers {
		if b.Addr == host {
			return b.Name
		}
	}
	return ""
}

// browse reads a topic's queues from an offset or over a time range.
func (c *Console) browse(ctx context.Context, m *messagesModel) error {
	if m.Topic == "" {
		return badRequest("Browse which topic?")
	}
	stats, err := c.adm.TopicStats(ctx, m.Topic)
	if err != nil {
		return err
	}
	var begin, end time.Time
	if m.Begin != "" {
		if begin, err = parseTimeField(m.Begin); err != nil {
			return err
		}
	}
	if m.End != "" {
		if end, err = parseTimeField(m.End); err != nil {
			return err
		}
	}
	var from int64 = -1
	if m.Offset != "" {
		if from, err = strconv.ParseInt(m.Offset, 10, 64); err != nil || from < 0 {
			return badRequest(fmt.Sprintf("offset %q: want a queue offset, 0 or more", m.Offset))
		}
	}
	for _, q := range stats {
		if m.Broker != "" && q.Broker != m.Broker || m.Queue != "" && strconv.Itoa(int(q.QueueID)) != m.Queue {
			continue
		}
		mq := queue.MessageQueue{Topic: m.Topic, BrokerName: q.Broker, QueueID: q.QueueID}
		lo, hi := q.MinOffset, q.MaxOffset
		switch {
		case from >= 0:
			lo = max(lo, from)
		case !begin.IsZero():
			if lo, err = c.adm.QueueOffsetAt(ctx, mq, begin); err != nil {
				return err
			}
		}
		if !end.IsZero() {
			e, err := c.adm.QueueOffsetAt(ctx, mq, end)
			if err != nil {
				return err
			}
			hi = min(hi, e)
		}
		if from < 0 && begin.IsZero() && end.IsZero() {
			lo = max(lo, hi-int64(m.Count)) // the newest of the queue
		}
		left := m.Count - len(m.Rows)
		if left <= 0 {
			break
		}
		err := c.adm.ScanQueue(ctx, mq, lo, min(hi, lo+int64(left)), func(msg *protocol.MessageExt) bool {
			if !end.IsZero() && msg.StoreTimestamp > end.UnixMilli() {
				return false
			}
			m.Rows = append(m.Rows, rowOf(msg, q.Broker))
			return len(m.Rows) < m.Count
		})
		if err != nil {
			return err
		}
	}
	if len(m.Rows) == 0 {
		m.Note = "No message in that range."
	}
	return nil
}

type propRow struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type messageModel struct {
	msgRow
	BornHost   string         `json:"bornHost"`
	StoreHost  string         `json:"storeHost"`
	Born       int64          `json:"bornTimestamp"`
	Properties []propRow      `json:"properties"`
	Body       string         `json:"body,omitempty"` // as text, when it is text
	BodyBase64 []byte         `json:"bodyBase64,omitempty"`
	JSON       string         `json:"-"`
	Hex        string         `json:"-"`
	Binary     bool           `json:"binary"`
	As         string         `json:"-"`
	Trace      []trace.Record `json:"trace"`
	TraceNote  string         `json:"traceNote,omitempty"`
	Timeline   template.HTML  `json:"-"`
	Groups     []string       `json:"groups"`
	Result     string         `json:"-"`
}

// maxHex bounds the body bytes the hex view shows.
const maxHex = 64 << 10

func (c *Console) messageView(ctx context.Context, r *http.Request) (string, any, error) {
	v := r.URL.Query()
	id, topic := strings.TrimSpace(v.Get("id")), strings.TrimSpace(v.Get("topic"))
	if id == "" {
		return "Message", nil, badRequest("Which message? Give ?id=ID (and &topic=TOPIC for a client message id).")
	}
	msg, err := c.adm.QueryMessageByID(ctx, id, topic)
	if err != nil {
		return "Message " + id, nil, err
	}
	m := messageModel{msgRow: rowOf(msg, c.brokerOfHost(msg)), BornHost: msg.BornHost.String(), StoreHost: msg.StoreHost.String(),
		Born: msg.BornTimestamp, As: v.Get("as"), Result: v.Get("result"), Trace: []trace.Record{}}
	for _, k := range slices.Sorted(maps.Keys(msg.Properties)) {
		m.Properties = append(m.Properties, propRow{k, msg.Properties[k]})
	}
	if printable(msg.Body) {
		m.Body = string(msg.Body)
		var buf bytes.Buffer
		if json.Valid(msg.Body) && json.Indent(&buf, msg.Body, "", "  ") == nil {
			m.JSON = buf.String()
		}
	} else {
		m.Binary, m.BodyBase64 = true, msg.Body
	}
	hx := msg.Body
	if len(hx) > maxHex {
		hx = hx[:maxHex]
	}
	m.Hex = hex.Dump(hx)
	switch m.As {
	case "text", "json", "hex":
	default:
		m.As = "text"
		if m.Binary {
			m.As = "hex"
		}
	}
	uniq := msg.UniqKey()
	if uniq == "" {
		uniq = msg.MsgID
	}
	m.Trace, err = c.adm.MessageTrace(ctx, admin.KeyQuery{Key: uniq})
	switch {
	case errors.Is(err, admin.ErrNotFound):
		m.TraceNote = "No trace topic (" + trace.Topic + "): tracing is off in this message's producer and consumers."
	case err != nil:
		m.TraceNote = "The trace could not be read: " + describe(err).Detail
	case len(m.Trace) == 0:
		m.TraceNote = "No trace records of this message (is tracing on in its producer and consumers?)."
	}
	if m.Trace == nil {
		m.Trace = []trace.Record{}
	}
	m.Timeline = timeline(m.Trace)
	if m.Groups, err = c.adm.TopicConsumers(ctx, msg.Topic); err != nil || m.Groups == nil {
		m.Groups = []string{}
	}
	return "Message " + msg.MsgID, m, nil
}

// timeline draws a message's trace: its send, and per consume the wait
// until delivery and the consume itself.
func timeline(recs []trace.Record) template.HTML {
	var spans []chart.Span
	var stored time.Time
	for _, r := range recs {
		t := time.UnixMilli(r.Time)
		failed := r.Success != nil && !*r.Success
		switch r.Type {
		case trace.Pub:
			stored = t.Add(time.Duration(r.CostMs) * time.Millisecond)
			spans = append(spans, chart.Span{Label: "sent", Start: t, Cost: time.Duration(r.CostMs) * time.Millisecond, Failed: failed,
				Detail: fmt.Sprintf("by %s from %s", r.Group, r.ClientHost)})
			spans = append(spans, chart.Span{Label: "stored", Start: stored, Detail: fmt.Sprintf("on %s", r.StoreHost)})
		case trace.SubBefore:
			spans = append(spans, chart.Span{Label: "delivered", Start: t, Detail: fmt.Sprintf("to %s at %s, retry %d", r.Group, r.ClientHost, r.RetryTimes)})
		case trace.SubAfter:
			start := t
			if r.Time == 0 && len(spans) > 0 {
				start = spans[len(spans)-1].Start
			}
			spans = append(spans, chart.Span{Label: "consumed", Start: start, Cost: time.Duration(r.CostMs) * time.Millisecond, Failed: failed,
				Detail: fmt.Sprintf("by %s", r.Group)})
		}
	}
	return chart.Timeline(spans)
}

func (c *Console) resendMessage(ctx context.Context, f url.Values) (any, string, string, error) {
	id, topic, group, client := f.Get("id"), f.Get("topic"), strings.TrimSpace(f.Get("group")), strings.TrimSpace(f.Get("client"))
	if group == "" {
		return nil, "", "", badRequest("Resend to which consumer group?")
	}
	msg, err := c.adm.QueryMessageByID(ctx, id, topic)
	if err != nil {
		return nil, "", "", err
	}
	if client == "" {
		conn, err := c.adm.ConsumerConnections(ctx, group)
		if err != nil {
			return nil, "", "", err
		}
		client = conn.Clients[0].ClientID
	}
	res, err := c.adm.ConsumeMessageDirectly(ctx, group, client, msg.OffsetMsgID)
	if err != nil {
		return nil, "", "", err
	}
	note := fmt.Sprintf("Client %s of %s consumed the message: %s in %d ms.", client, group, res.Result, res.SpentTime)
	if res.Remark != "" {
		note += " " + res.Remark
	}
	return res, note, "/message" + queryOf("id", msg.OffsetMsgID, "topic", msg.Topic), nil
}

type dlqModel struct {
	Group  string   `json:"group"`
	Rows   []msgRow `json:"deadLetters"`
	Total  int64    `json:"total"`
	Max    int      `json:"max"`
	Groups []string `json:"groups"` // groups with a dead-letter topic
	Note   string   `json:"note,omitempty"`
}

func (c *Console) dlqView(ctx context.Context, r *http.Request) (string, any, error) {
	m := dlqModel{Group: strings.TrimSpace(r.URL.Query().Get("group")), Max: 100, Rows: []msgRow{}, Groups: []string{}}
	if n, err := strconv.Atoi(r.URL.Query().Get("max")); err == nil && n > 0 {
		m.Max = min(n, maxBrowse)
	}
	for _, t := range c.snap.Load().Topics {
		if g, ok := strings.CutPrefix(t.Name, admin.DLQTopicPrefix); ok {
			m.Groups = append(m.Groups, g)
		}
	}
	if m.Group == "" {
		return "Dead letters", m, nil
	}
	msgs, total, err := c.adm.DeadLetters(ctx, m.Group, m.Max)
	switch {
	case errors.Is(err, admin.ErrNotFound):
		m.Note = fmt.Sprintf("Group %s has no dead letters (no topic %s).", m.Group, admin.DLQTopic(m.Group))
		return "Dead letters of " + m.Group, m, nil
	case err != nil:
		return "Dead letters of " + m.Group, m, err
	}
	m.Total = total
	for _, msg := range msgs {
		m.Rows = append(m.Rows, rowOf(msg, c.brokerOfHost(msg)))
	}
	if total == 0 {
		m.Note = fmt.Sprintf("Group %s has no dead letters.", m.Group)
	}
	return "Dead letters of " + m.Group, m, nil
}

func (c *Console) resendDeadLetters(ctx context.Context, f url.Values) (any, string, string, error) {
	group := f.Get("group")
	all := f.Get("all") == "1" || f.Get("all") == "true"
	var ids []string
	for _, id := range strings.FieldsFunc(f.Get("id"), func(r rune) bool { return r == ',' || r == ' ' }) {
		ids = append(ids, id)
	}
	if all && f.Get("confirm") != group {
		return nil, "", "", badRequest("Not re-sent: type the group's name to confirm re-sending all its dead letters.")
	}
	plan, err := c.adm.PlanResend(ctx, group, ids, all)
	if err != nil {
		return nil, "", "", err
	}
	resent := []admin.Resent{}
	n, err := c.adm.Resend(ctx, plan, func(r admin.Resent) error { resent = append(resent, r); return nil })
	if err != nil {
		return resent, "", "", err
	}
	next := "/dlq" + queryOf("group", group)
	if n == 0 {
		return resent, fmt.Sprintf("Group %s has no dead letters to re-send.", group), next, nil
	}
	return resent, fmt.Sprintf("Re-sent %d dead letter(s) of %s to %s (each a new message; the dead letters stay).", n, group, plan.Destinations()), next, nil
}
