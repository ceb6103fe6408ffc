package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/clitest"
	"github.com/runnelmq/runnel/internal/testwait"
)

// buildBinary builds cmd/runnelctl into a temporary directory.
func buildBinary(t *testing.T) string { return clitest.Build(t, ".", "runnelctl") }

// ctl runs the runnelctl binary against one name server.
type ctl struct {
	t       *testing.T
	bin     string
	namesrv string
}

func (c ctl) run(stdin string, args ...string) result {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, args...)
	cmd.Env = append(os.Environ(), "NAMESRV_ADDR="+c.namesrv)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		c.t.Fatalf("runnelctl %v: %v", args, err)
	}
	return result{code, out.String(), errOut.String()}
}

// ok runs args and fails the test unless they exit 0 with an empty stderr.
func (c ctl) ok(stdin string, args ...string) string {
	c.t.Helper()
	r := c.run(stdin, args...)
	if r.code != 0 {
		c.t.Fatalf("runnelctl %s: exit %d\nstderr: %s\nstdout: %s", strings.Join(args, " "), r.code, r.stderr, r.stdout)
	}
	return r.stdout
}

// okJSON runs args with -o json and decodes stdout into v.
func (c ctl) okJSON(v any, args ...string) {
	c.t.Helper()
	out := c.ok("", append(args, "-o", "json")...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		c.t.Fatalf("runnelctl %v: bad JSON %q: %v", args, out, err)
	}
}

// delivered waits up to 20 s for message get to find the message of msgID
// in topic (a delayed or timer message reaching its real topic) and
// returns it.
func (c ctl) delivered(msgID, topic string) messageView {
	c.t.Helper()
	var m messageView
	testwait.Until(c.t, 20*time.Second, "message "+msgID+" to reach "+topic, func() error {
		r := c.run("", "message", "get", msgID, "--topic", topic, "-o", "json")
		if r.code == 0 && json.Unmarshal([]byte(r.stdout), &m) == nil && m.Topic == topic {
			return nil
		}
		return fmt.Errorf("last %+v", r)
	})
	return m
}

func (c ctl) progress(group, topic string) progressOutput {
	c.t.Helper()
	var p progressOutput
	c.okJSON(&p, "group", "progress", "--group", group, "--topic", topic)
	return p
}

// TestProcessAgainstCluster drives the built binary against an in-process
// cluster of two brokers through the life of a topic: create, list, send
// from arguments and stdin, stats, a group's lag before and after a
// consume, offset resets, lookups by key and id, delete.
func TestProcessAgainstCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts a cluster")
	}
	bin := buildBinary(t)
	// Two short delay levels, so a delayed send is delivered within the
	// test and a level above 2 is out of the brokers' range.
	cl := cluster.Start(t, cluster.Brokers(2), cluster.Configure(func(_ int, cfg *config.Config) {
		cfg.MessageDelayLevel = testDelayLevels
	}))
	c := ctl{t: t, bin: bin, namesrv: cl.NamesrvAddr()}

	var brokers []admin.Broker
	c.okJSON(&brokers, "broker", "list")
	if len(brokers) != 2 || brokers[0].Addr != cl.BrokerAddr(0) || brokers[1].Addr != cl.BrokerAddr(1) || !brokers[0].IsMaster() {
		t.Fatalf("broker list %+v, want the two masters %s %s", brokers, cl.BrokerAddr(0), cl.BrokerAddr(1))
	}
	if out := c.ok("", "cluster", "list"); !strings.Contains(out, "DefaultCluster") || !strings.Contains(out, cl.BrokerName(0)+","+cl.BrokerName(1)) {
		t.Fatalf("cluster list:\n%s", out)
	}

	// Create: written to both masters, visible in list and route at once
	// (the broker registers before it answers).
	out := c.ok("", "topic", "create", "orders", "--queues", "2")
	for i := range 2 {
		if !strings.Contains(out, cl.BrokerAddr(i)) {
			t.Fatalf("topic create output lacks broker %d:\n%s", i, out)
		}
	}
	if out := c.ok("", "topic", "list"); !strings.Contains("\n"+out, "\norders\n") {
		t.Fatalf("topic list:\n%s", out)
	}
	var route struct {
		QueueDatas []struct {
			BrokerName    string `json:"brokerName"`
			ReadQueueNums int    `json:"readQueueNums"`
		} `json:"queueDatas"`
	}
	c.okJSON(&route, "topic", "route", "orders")
	if len(route.QueueDatas) != 2 || route.QueueDatas[0].ReadQueueNums != 2 {
		t.Fatalf("route %+v", route)
	}

	// Send 3 messages from arguments with a key and tag, 5 from stdin.
	sent := parseSent(t, c.ok("", "send", "--topic", "orders", "--keys", "order-1", "--tag", "created", "-o", "json", "one", "two", "three"))
	sent = append(sent, parseSent(t, c.ok("a\nb\n\nc\nd\ne\n", "send", "--topic", "orders", "--keys", "batch", "-o", "json"))...)
	if len(sent) != 8 {
		t.Fatalf("sent %d messages, want 8", len(sent))
	}
	if out := c.ok("", "send", "--topic", "orders", "table-row"); !strings.Contains(out, "SEND_OK") || !strings.Contains(out, "MSG ID") {
		t.Fatalf("send table output:\n%s", out)
	}
	const total = 9

	var stats []admin.QueueStats
	c.okJSON(&stats, "topic", "stats", "orders")
	var stored int64
	for _, s := range stats {
		stored += s.MaxOffset - s.MinOffset
	}
	if len(stats) != 4 || stored != total {
		t.Fatalf("stats %+v: %d messages in %d queues, want %d in 4", stats, stored, len(stats), total)
	}

	// A new group, offsets set to the start while it is offline: all of
	// the topic is lag.
	out = c.ok("", "group", "reset-offset", "--group", "billing", "--topic", "orders", "--to", "earliest", "--create")
	if !strings.Contains(out, "direct") {
		t.Fatalf("reset-offset output:\n%s", out)
	}
	if p := c.progress("billing", "orders"); p.TotalLag != total || len(p.Queues) != 4 {
		t.Fatalf("progress before consuming: %+v", p)
	}

	consumeAll(t, cl.NamesrvAddr(), "billing", "orders", total)
	p := c.progress("billing", "orders")
	if p.TotalLag != 0 {
		t.Fatalf("lag after consuming everything: %+v", p)
	}
	for _, q := range p.Queues {
		if q.ConsumerOffset != q.BrokerOffset {
			t.Fatalf("queue %+v not fully committed", q)
		}
	}
	if out := c.ok("", "group", "progress", "--group", "billing"); !strings.Contains(out, "TOTAL") || !strings.Contains(out, "orders") {
		t.Fatalf("progress table:\n%s", out)
	}
	var groups []admin.Group
	c.okJSON(&groups, "group", "list")
	if !containsGroup(groups, "billing") {
		t.Fatalf("group list %+v lacks billing", groups)
	}

	// Offline group: latest and earliest resets move the lag.
	c.ok("", "send", "--topic", "orders", "late-1", "late-2")
	if p := c.progress("billing", "orders"); p.TotalLag != 2 {
		t.Fatalf("lag after 2 more sends: %d", p.TotalLag)
	}
	c.ok("", "group", "reset-offset", "--group", "billing", "--topic", "orders", "--to", "latest")
	if p := c.progress("billing", "orders"); p.TotalLag != 0 {
		t.Fatalf("lag after reset to latest: %d", p.TotalLag)
	}
	c.ok("", "group", "reset-offset", "--group", "billing", "--topic", "orders", "--to", fmt.Sprint(time.Now().Add(-time.Hour).UnixMilli()))
	if p := c.progress("billing", "orders"); p.TotalLag != total+2 {
		t.Fatalf("lag after reset to an hour ago: %d, want %d", p.TotalLag, total+2)
	}

	t.Run("message lookups", func(t *testing.T) {
		c := ctl{t: t, bin: bin, namesrv: cl.NamesrvAddr()}
		r := c.run("", "message", "query", "--topic", "orders", "--key", "order-1", "-o", "json")
		var msgs []messageView
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &msgs) != nil {
			t.Fatalf("message query: %+v", r)
		}
		var bodies []string
		for _, m := range msgs {
			bodies = append(bodies, *m.Body)
		}
		// Results are ordered by store time, in milliseconds: messages
		// stored on two brokers in the same millisecond have no order.
		slices.Sort(bodies)
		if strings.Join(bodies, ",") != "one,three,two" {
			t.Fatalf("messages with key order-1: %q", bodies)
		}

		var m messageView
		r = c.run("", "message", "get", sent[4].OffsetMsgID, "-o", "json")
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &m) != nil || *m.Body != "b" || m.MsgID != sent[4].MsgID {
			t.Fatalf("message get by offsetMsgId: %+v", r)
		}
		c.okJSON(&m, "message", "get", sent[0].MsgID, "--topic", "orders")
		if *m.Body != "one" || m.OffsetMsgID != sent[0].OffsetMsgID || strings.Join(m.Keys, ",") != "order-1" || m.Tags != "created" {
			t.Fatalf("message get by client id: %+v", m)
		}
		if out := c.ok("", "message", "get", sent[0].OffsetMsgID); !strings.Contains(out, "Body (3 bytes):\none") {
			t.Fatalf("message get text:\n%s", out)
		}
	})

	t.Run("delayed send", func(t *testing.T) {
		testDelayedSend(t, ctl{t: t, bin: bin, namesrv: cl.NamesrvAddr()})
	})
	t.Run("timer send", func(t *testing.T) {
		testTimerSend(t, ctl{t: t, bin: bin, namesrv: cl.NamesrvAddr()})
	})
	t.Run("timer recall", func(t *testing.T) {
		testTimerRecall(t, ctl{t: t, bin: bin, namesrv: cl.NamesrvAddr()})
	})

	// Delete: gone from the list and the route.
	c.ok("", "topic", "delete", "orders")
	if out := c.ok("", "topic", "list"); strings.Contains(out, "orders") {
		t.Fatalf("topic list after delete:\n%s", out)
	}
	r := c.run("", "topic", "route", "orders")
	if r.code != 1 || !strings.Contains(r.stderr, "TOPIC_NOT_EXIST") {
		t.Fatalf("route after delete: %+v", r)
	}
}

// testDelayLevels is the brokers' messageDelayLevel in
// TestProcessAgainstCluster.
const testDelayLevels = "300ms 600ms"

// testDelayedSend sends with --delay and a user property: the message is
// stored in the schedule topic with its DELAY level, real topic and the
// property, and later arrives in its topic with the property. A level above
// the brokers' highest is stored at the highest, with a warning.
func testDelayedSend(t *testing.T, c ctl) {
	c.ok("", "topic", "create", "reminders", "--queues", "1")
	r := c.run("", "send", "--topic", "reminders", "--delay", "1", "--property", "k=v", "-o", "json", "later")
	if r.code != 0 || !strings.HasPrefix(r.stderr, "sent 1 in ") || strings.Count(r.stderr, "\n") != 1 {
		t.Fatalf("delayed send: %+v", r)
	}
	sent := parseSent(t, r.stdout)

	var scheduled messageView
	c.okJSON(&scheduled, "message", "get", sent[0].OffsetMsgID)
	props := scheduled.Properties
	if scheduled.Topic != "SCHEDULE_TOPIC_XXXX" || scheduled.QueueID != 0 || props["DELAY"] != "1" ||
		props["REAL_TOPIC"] != "reminders" || props["k"] != "v" || *scheduled.Body != "later" {
		t.Fatalf("the stored copy of a message sent with --delay 1: %+v", scheduled)
	}
	if out := c.ok("", "message", "get", sent[0].OffsetMsgID); !strings.Contains(out, "  DELAY=1\n") || !strings.Contains(out, "  k=v\n") {
		t.Fatalf("message get text of a delayed message:\n%s", out)
	}

	// Delivered once due: the same client id, now in the real topic.
	delivered := c.delivered(sent[0].MsgID, "reminders")
	if delivered.Properties["k"] != "v" || delivered.Properties["DELAY"] != "" || *delivered.Body != "later" {
		t.Fatalf("delivered copy %+v", delivered)
	}

	// Level 5 of 2: the broker stores it at level 2 and send says so.
	r = c.run("", "send", "--topic", "reminders", "--delay", "5", "-o", "json", "too-late")
	if r.code != 0 {
		t.Fatalf("send with a level above the broker's: %+v", r)
	}
	clamped := parseSent(t, r.stdout)
	if want := "runnelctl: warning: broker " + clamped[0].Broker + " has no delay level 5; it stored the message at its highest level, 2\n"; !strings.HasPrefix(r.stderr, want) {
		t.Fatalf("stderr of a level-5 send %q, want %q", r.stderr, want)
	}
	c.okJSON(&scheduled, "message", "get", clamped[0].OffsetMsgID)
	if scheduled.Properties["DELAY"] != "2" || scheduled.QueueID != 1 {
		t.Fatalf("stored copy of a level-5 send: %+v", scheduled)
	}
}

func parseSent(t *testing.T, out string) []sentRow {
	t.Helper()
	var rows []sentRow
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var r sentRow
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("send output %q: %v", out, err)
		}
		if r.Status != "SEND_OK" || len(r.MsgID) != 32 || len(r.OffsetMsgID) != 32 {
			t.Fatalf("send row %+v", r)
		}
		rows = append(rows, r)
	}
	return rows
}

func containsGroup(gs []admin.Group, name string) bool {
	for _, g := range gs {
		if g.Name == name {
			return true
		}
	}
	return false
}

// consumeAll consumes topic with our push consumer in group until n
// messages arrived, then shuts it down, which commits the offsets.
func consumeAll(t *testing.T, namesrv, group, topic string, n int) {
	t.Helper()
	cons, _, got := pushConsumer(t, namesrv, "runnelctl-test-"+group, group, topic, n)
	select {
	case <-got:
	case <-time.After(20 * time.Second):
		t.Fatalf("%d messages were not consumed in 20s", n)
	}
	if err := cons.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}
