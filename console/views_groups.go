package console

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/runnelmq/runnel/client/admin"
)

type groupRow struct {
	groupView
	Lag  float64 `json:"lag"`               // -1 unknown
	Rate float64 `json:"consumedPerSecond"` // -1 unknown
}

type groupsModel struct {
	page[groupRow]
	Error *errView `json:"error,omitempty"`
}

var groupColumns = map[string]column[groupRow]{
	"name":      func(a, b groupRow) int { return strings.Compare(a.Name, b.Name) },
	"consumers": func(a, b groupRow) int { return cmp.Compare(a.Consumers, b.Consumers) },
	"lag":       func(a, b groupRow) int { return cmp.Compare(a.Lag, b.Lag) },
	"rate":      func(a, b groupRow) int { return cmp.Compare(a.Rate, b.Rate) },
}

func (c *Console) groupsView(_ context.Context, r *http.Request) (string, any, error) {
	s := c.snap.Load()
	q := parseList(r.URL.Query(), "name", c.cfg.PageSize)
	rows := make([]groupRow, len(s.Groups))
	for i, g := range s.Groups {
		rows[i] = groupRow{groupView: g, Lag: -1, Rate: -1}
	}
	fill := func(rs []groupRow) {
		for i := range rs {
			if p, ok := c.store.Last(keyGroupLag(rs[i].Name)); ok {
				rs[i].Lag = p.V
			}
			rs[i].Rate = c.rateOf(keyGroupRate(rs[i].Name))
		}
	}
	keep := func(g groupRow) bool { return (q.System || !g.System) && contains(g.Name, q.Q) }
	p, names := figuredPage(rows, q, []string{"lag", "rate"}, fill, keep, groupColumns, func(g groupRow) string { return g.Name })
	c.gather.view(nil, names)
	err := s.Err
	if err == nil {
		err = s.GroupsErr
	}
	return "Consumer groups", groupsModel{page: p, Error: describe(err)}, nil
}

// clientRow is one connected client of a group.
type clientRow struct {
	admin.ConsumerClient
	// Protocol is how the client speaks to the cluster, as people read
	// it: "remoting" or "gRPC" (a RocketMQ 5 SDK).
	Protocol string `json:"protocol"`
}

// protocolName is a client's protocol as the console shows it.
func protocolName(p string) string {
	if p == "grpc_v2" {
		return "gRPC"
	}
	return "remoting"
}

type groupConfigRow struct {
	Broker    string `json:"brokerName"`
	Found     bool   `json:"configured"`
	Enabled   bool   `json:"consumeEnable"`
	Retries   int    `json:"retryMaxTimes"`
	RetryQ    int    `json:"retryQueueNums"`
	Orderly   string `json:"fifo"` // "yes", "no" or "not reported"
	Policy    string `json:"retryPolicy"`
	Broadcast bool   `json:"consumeBroadcastEnable"`
}

type groupModel struct {
	Name          string                `json:"group"`
	Progress      []admin.QueueProgress `json:"progress"`
	Lag           int64                 `json:"lag"`
	Rate          float64               `json:"consumedPerSecond"`
	Topics        []string              `json:"topics"`
	Online        bool                  `json:"online"`
	ConsumeType   string                `json:"consumeType,omitempty"`
	MessageModel  string                `json:"messageModel,omitempty"`
	Clients       []clientRow           `json:"clients"`
	Subscriptions []admin.Subscription  `json:"subscriptions"`
	Configs       []groupConfigRow      `json:"configs"`
	DeadLetters   bool                  `json:"hasDeadLetters"`
	Notes         []string              `json:"notes,omitempty"`
	Errors        []*errView            `json:"errors,omitempty"`
	LagChart      template.HTML         `json:"-"`
	RateChart     template.HTML         `json:"-"`
	Now           string                `json:"-"`
}

func (c *Console) groupView(ctx context.Context, r *http.Request) (string, any, error) {
	name := r.URL.Query().Get("name")
	if name == "" {
		return "Consumer group", nil, badRequest("Which group? Give ?name=GROUP.")
	}
	m := groupModel{Name: name, Rate: c.rateOf(keyGroupRate(name)), Clients: []clientRow{}, Now: c.cfg.Now().Format("2006-01-02 15:04:05")}
	var err error
	m.Progress, err = c.adm.ConsumerProgress(ctx, name, "")
	switch {
	case errors.Is(err, admin.ErrNotFound):
		m.Notes = append(m.Notes, "No broker reports offsets for this group yet: it has not consumed, or the name is wrong.")
	case err != nil:
		return "Group " + name, m, err
	}
	m.Lag = admin.TotalLag(m.Progress)
	seen := map[string]bool{}
	for _, p := range m.Progress {
		if !seen[p.Topic] {
			seen[p.Topic] = true
			m.Topics = append(m.Topics, p.Topic)
		}
	}
	conn, err := c.adm.ConsumerConnections(ctx, name)
	switch {
	case errors.Is(err, admin.ErrNotOnline):
		m.Notes = append(m.Notes, "No client of this group is online.")
	case err != nil:
		m.Errors = append(m.Errors, describe(err))
	default:
		m.Online = true
		m.ConsumeType, m.MessageModel = conn.ConsumeType, conn.MessageModel
		for _, cl := range conn.Clients {
			m.Clients = append(m.Clients, clientRow{ConsumerClient: cl, Protocol: protocolName(cl.Protocol)})
		}
		m.Subscriptions = conn.Subscriptions
		for _, s := range conn.Subscriptions {
			if !seen[s.Topic] {
				seen[s.Topic] = true
				m.Topics = append(m.Topics, s.Topic)
			}
		}
	}
	// The group's own topics first, its retry topic last.
	slices.SortFunc(m.Topics, func(a, b string) int {
		ra, rb := strings.HasPrefix(a, admin.RetryGroupTopicPrefix), strings.HasPrefix(b, admin.RetryGroupTopicPrefix)
		if ra != rb {
			if ra {
				return 1
			}
			return -1
		}
		return strings.Compare(a, b)
	})
	nodes, err := c.adm.BrokerNodes(ctx, nil)
	if err != nil {
		m.Errors = append(m.Errors, describe(err))
	}
	for _, n := range nodes {
		s, found, err := c.adm.GroupSettingsOn(ctx, n, name)
		if err != nil {
			m.Errors = append(m.Errors, describe(err))
			continue
		}
		row := groupConfigRow{Broker: n.Name, Found: found, Enabled: s.ConsumeEnable, Retries: s.RetryMaxTimes, RetryQ: s.RetryQueueNums,
			Broadcast: s.ConsumeBroadcastEnable, Orderly: "no", Policy: "by delay level (1s 5s 10s 30s 1m ...)"}
		if s.ConsumeMessageOrderly {
			row.Orderly = "yes"
		}
		if len(s.GroupRetryPolicy) > 0 && string(s.GroupRetryPolicy) != "null" {
			row.Policy = string(s.GroupRetryPolicy)
		}
		m.Configs = append(m.Configs, row)
	}
	_, m.DeadLetters = c.snap.Load().topic(admin.DLQTopic(name))
	c.gather.view(nil, []string{name})
	m.LagChart = c.chart("Lag (messages not yet consumed)", "", "lag", keyGroupLag(name))
	m.RateChart = c.chart("Consumed per second", "msg/s", "consumed", keyGroupRate(name))
	if m.Progress == nil {
		m.Progress = []admin.QueueProgress{}
	}
	return "Group " + name, m, nil
}

func groupLink(name string) string { return "/group" + queryOf("name", name) }

func (c *Console) resetOffset(ctx context.Context, f url.Values) (any, string, string, error) {
	group, topic := f.Get("name"), f.Get("topic")
	if topic == "" {
		return nil, "", "", badRequest("Which topic's offsets? Pick one.")
	}
	var to admin.ResetTarget
	switch f.Get("to") {
	case "earliest", "head":
		to.Position = admin.ResetToEarliest
	case "latest", "tail":
		to.Position = admin.ResetToLatest
	case "time":
		t, err := parseTimeField(f.Get("time"))
		if err != nil {
			return nil, "", "", err
		}
		to = admin.ResetTarget{Position: admin.ResetToTime, Time: t}
	default:
		return nil, "", "", badRequest(fmt.Sprintf("reset to %q: want earliest, latest or time", f.Get("to")))
	}
	rows, err := c.adm.ResetOffset(ctx, group, topic, to)
	if err != nil {
		return nil, "", "", err
	}
	method := "the brokers reset them and told the online consumers"
	if len(rows) > 0 && rows[0].Method == admin.ResetDirect {
		method = "committed directly (no consumer was online)"
	}
	return rows, fmt.Sprintf("Offsets of %s on %s reset to %s on %d queue(s): %s.", group, topic, to, len(rows), method), groupLink(group), nil
}

// parseTimeField reads a time a form gives: the browser's datetime-local
// (local time), RFC 3339, or epoch milliseconds.
func parseTimeField(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{"2006-01-02T15:04", "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02 15:04", time.RFC3339} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	var ms int64
	if _, err := fmt.Sscanf(s, "%d", &ms); err == nil && ms > 0 && fmt.Sprint(ms) == s {
		return time.UnixMilli(ms), nil
	}
	return time.Time{}, badRequest(fmt.Sprintf("time %q: want YYYY-MM-DD HH:MM[:SS], RFC 3339 or epoch milliseconds", s))
}

func (c *Console) deleteGroup(ctx context.Context, f url.Values) (any, string, string, error) {
	name := f.Get("name")
	if name == "" || f.Get("confirm") != name {
		return nil, "", "", badRequest("Not deleted: type the group's name to confirm the deletion.")
	}
	nodes, topics, err := c.adm.DeleteGroup(ctx, name, "", true)
	if err != nil {
		return nil, "", "", err
	}
	return map[string]any{"brokers": nodes, "topics": topics},
		fmt.Sprintf("Group %s deleted from %d broker(s), with its offsets and %d topic(s).", name, len(nodes), len(topics)), "/groups", nil
}
