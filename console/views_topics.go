package console

import (
	"cmp"
	"context"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/remoting/protocol"
)

type topicRow struct {
	topicView
	In  float64 `json:"inPerSecond"`  // -1 unknown
	Out float64 `json:"outPerSecond"` // -1 unknown
}

type topicsModel struct {
	page[topicRow]
	Error *errView `json:"error,omitempty"`
	Types []string `json:"-"`
}

var topicColumns = map[string]column[topicRow]{
	"name":   func(a, b topicRow) int { return strings.Compare(a.Name, b.Name) },
	"type":   func(a, b topicRow) int { return strings.Compare(a.Type, b.Type) },
	"queues": func(a, b topicRow) int { return cmp.Compare(a.Queues, b.Queues) },
	"perm":   func(a, b topicRow) int { return strings.Compare(a.Perm, b.Perm) },
	"in":     func(a, b topicRow) int { return cmp.Compare(a.In, b.In) },
	"out":    func(a, b topicRow) int { return cmp.Compare(a.Out, b.Out) },
}

var messageTypes = []string{"NORMAL", "FIFO", "DELAY", "TRANSACTION"}

func (c *Console) topicsView(_ context.Context, r *http.Request) (string, any, error) {
	s := c.snap.Load()
	q := parseList(r.URL.Query(), "name", c.cfg.PageSize)
	rows := make([]topicRow, len(s.Topics))
	for i, t := range s.Topics {
		rows[i] = topicRow{topicView: t, In: -1, Out: -1}
	}
	fill := func(rs []topicRow) {
		for i := range rs {
			rs[i].In, rs[i].Out = c.rateOf(keyTopicIn(rs[i].Name)), c.rateOf(keyTopicOut(rs[i].Name))
		}
	}
	typ := strings.ToUpper(r.URL.Query().Get("type"))
	keep := func(t topicRow) bool {
		return (q.System || !t.System) && contains(t.Name, q.Q) && (typ == "" || t.Type == typ)
	}
	p, names := figuredPage(rows, q, []string{"in", "out"}, fill, keep, topicColumns, func(t topicRow) string { return t.Name })
	c.gather.view(names, nil)
	return "Topics", topicsModel{page: p, Error: describe(s.Err), Types: messageTypes}, nil
}

type routeRow struct {
	Broker string `json:"brokerName"`
	Addrs  string `json:"addrs"`
	Read   int    `json:"readQueues"`
	Write  int    `json:"writeQueues"`
	Perm   string `json:"perm"`
}

type topicModel struct {
	Name   string                   `json:"topic"`
	Topic  *topicView               `json:"config,omitempty"`
	Route  []routeRow               `json:"route"`
	Queues []admin.QueueStats       `json:"queues"`
	Stored int64                    `json:"stored"`
	Groups []string                 `json:"groups"`
	In     float64                  `json:"inPerSecond"`
	Out    float64                  `json:"outPerSecond"`
	Sent   *admin.SendResult        `json:"-"`
	Chart  template.HTML            `json:"-"`
	Errors []*errView               `json:"errors,omitempty"`
	Types  []string                 `json:"-"`
	Route0 *protocol.TopicRouteData `json:"-"`
}

func (c *Console) topicView(ctx context.Context, r *http.Request) (string, any, error) {
	name := r.URL.Query().Get("name")
	if name == "" {
		return "Topic", nil, badRequest("Which topic? Give ?name=TOPIC.")
	}
	m := topicModel{Name: name, In: c.rateOf(keyTopicIn(name)), Out: c.rateOf(keyTopicOut(name)), Types: messageTypes}
	if t, ok := c.snap.Load().topic(name); ok {
		m.Topic = &t
	}
	route, err := c.adm.TopicRoute(ctx, name)
	if err != nil {
		return "Topic " + name, m, err
	}
	m.Route0 = route
	for _, bd := range route.BrokerDatas {
		row := routeRow{Broker: bd.BrokerName}
		var addrs []string
		for id, a := range bd.BrokerAddrs {
			addrs = append(addrs, fmt.Sprintf("%d=%s", id, a))
		}
		slices.Sort(addrs)
		row.Addrs = strings.Join(addrs, " ")
		for _, qd := range route.QueueDatas {
			if qd.BrokerName == bd.BrokerName {
				row.Read, row.Write, row.Perm = qd.ReadQueueNums, qd.WriteQueueNums, permString(qd.Perm)
			}
		}
		m.Route = append(m.Route, row)
	}
	if m.Queues, err = c.adm.TopicStats(ctx, name); err != nil {
		m.Errors = append(m.Errors, describe(err))
	}
	for _, q := range m.Queues {
		m.Stored += q.MaxOffset - q.MinOffset
	}
	if m.Groups, err = c.adm.TopicConsumers(ctx, name); err != nil {
		m.Errors = append(m.Errors, describe(err))
	}
	if m.Groups == nil {
		m.Groups = []string{}
	}
	if sent := r.URL.Query().Get("sent"); sent != "" {
		m.Sent = &admin.SendResult{MsgID: sent, OffsetMsgID: r.URL.Query().Get("offsetMsgId"), Topic: name}
	}
	c.gather.view([]string{name}, nil)
	m.Chart = c.chart("Messages per second", "msg/s", "in", keyTopicIn(name), "out", keyTopicOut(name))
	return "Topic " + name, m, nil
}

// parsePerm reads R, W, RW (any case) or the bits as a number; none is 0
// (the topic's own, or the default).
func parsePerm(s string) (int, error) {
	s = strings.ToUpper(strings.TrimSpace(s))
	if n, err := strconv.Atoi(s); err == nil {
		return n, nil
	}
	perm := 0
	for _, r := range s {
		switch r {
		case 'R':
			perm |= protocol.PermRead
		case 'W':
			perm |= protocol.PermWrite
		default:
			return 0, badRequest(fmt.Sprintf("permission %q: want R, W or RW", s))
		}
	}
	return perm, nil
}

func intField(f url.Values, name string) (int, error) {
	s := strings.TrimSpace(f.Get(name))
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, badRequest(fmt.Sprintf("%s %q is not a number", name, s))
	}
	return n, nil
}

// topicForm is the topic name as a create or update form describes it:
// its queue counts (the fields read and write) and its permission.
func topicForm(f url.Values, name, read, write string) (admin.TopicSpec, error) {
	spec := admin.TopicSpec{Topic: name}
	var err error
	if spec.ReadQueueNums, err = intField(f, read); err != nil {
		return spec, err
	}
	if spec.WriteQueueNums, err = intField(f, write); err != nil {
		return spec, err
	}
	spec.Perm, err = parsePerm(f.Get("perm"))
	return spec, err
}

func topicLink(name string) string { return "/topic" + queryOf("name", name) }

func (c *Console) createTopic(ctx context.Context, f url.Values) (any, string, string, error) {
	name := strings.TrimSpace(f.Get("name"))
	if name == "" {
		return nil, "", "", badRequest("Give the new topic a name.")
	}
	spec, err := topicForm(f, name, "queues", "queues")
	if err != nil {
		return nil, "", "", err
	}
	switch typ := strings.ToUpper(f.Get("type")); typ {
	case "", "NORMAL":
	case "FIFO", "DELAY", "TRANSACTION":
		spec.Attributes = map[string]string{"+" + attrMessageType: typ} // a change: add message.type
		if typ == "FIFO" {
			order := true
			spec.Order = &order
		}
	default:
		return nil, "", "", badRequest(fmt.Sprintf("type %q: want NORMAL, FIFO, DELAY or TRANSACTION", typ))
	}
	if _, err := c.adm.TopicRoute(ctx, name); err == nil {
		return nil, "", "", badRequest(fmt.Sprintf("Topic %s exists already: change it on its own page.", name))
	}
	return c.writeTopic(ctx, spec, "created")
}

func (c *Console) updateTopic(ctx context.Context, f url.Values) (any, string, string, error) {
	name := f.Get("name")
	spec, err := topicForm(f, name, "readQueues", "writeQueues")
	if err != nil {
		return nil, "", "", err
	}
	if _, err := c.adm.TopicRoute(ctx, name); err != nil {
		return nil, "", "", err
	}
	var brokers []string
	if t, ok := c.snap.Load().topic(name); ok {
		brokers = t.Brokers // only where it is: an update must not spread it
	}
	spec.Brokers = brokers
	return c.writeTopic(ctx, spec, "updated")
}

// writeTopic creates or updates a topic as spec says, and says so with
// done.
func (c *Console) writeTopic(ctx context.Context, spec admin.TopicSpec, done string) (any, string, string, error) {
	writes, err := c.adm.CreateTopic(ctx, spec)
	if err != nil {
		return nil, "", "", err
	}
	return writes, fmt.Sprintf("Topic %s %s on %d broker(s).", spec.Topic, done, len(writes)), topicLink(spec.Topic), nil
}

func (c *Console) deleteTopic(ctx context.Context, f url.Values) (any, string, string, error) {
	name := f.Get("name")
	if name == "" || f.Get("confirm") != name {
		return nil, "", "", badRequest("Not deleted: type the topic's name to confirm the deletion.")
	}
	nodes, err := c.adm.DeleteTopic(ctx, name, "")
	if err != nil {
		return nil, "", "", err
	}
	return nodes, fmt.Sprintf("Topic %s deleted from %d broker(s) and the name servers.", name, len(nodes)), "/topics", nil
}

func (c *Console) sendMessage(ctx context.Context, f url.Values) (any, string, string, error) {
	name := f.Get("name")
	var keys []string
	for _, k := range strings.FieldsFunc(f.Get("keys"), func(r rune) bool { return r == ',' || r == ' ' }) {
		keys = append(keys, k)
	}
	res, err := c.adm.SendMessage(ctx, admin.Send{Topic: name, Tags: strings.TrimSpace(f.Get("tags")), Keys: keys, Body: []byte(f.Get("body"))})
	if err != nil {
		return nil, "", "", err
	}
	next := "/topic" + queryOf("name", name, "sent", res.MsgID, "offsetMsgId", res.OffsetMsgID)
	// The page names the message; the API's notice says where it went.
	return res, fmt.Sprintf("Sent to %s queue %d at offset %d: message id %s.", res.Broker, res.QueueID, res.QueueOffset, res.MsgID), next + "&quiet=1", nil
}
