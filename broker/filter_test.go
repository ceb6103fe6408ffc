package broker

import (
	"fmt"
	"slices"
	"testing"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/internal/testwait"

	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// sendProps sends a message with properties to queue 0 of topic.
func (rc *rawClient) sendProps(topic string, props map[string]string, body string) {
	rc.t.Helper()
	expect(rc.t, rc.call(protocol.ReqSendMessage, sendHeader(topic, 0, props).Encode(), []byte(body)), protocol.RespSuccess, "")
}

// bodiesOf pulls queue 0 of topic from offset 0 and returns the bodies the
// broker sent.
func bodiesOf(t *testing.T, resp *protocol.Command) []string {
	t.Helper()
	if resp.Code == protocol.RespPullRetryImmediately || resp.Code == protocol.RespPullNotFound {
		return nil
	}
	expect(t, resp, protocol.RespSuccess, "")
	msgs, err := message.DecodeMessages(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range msgs {
		out = append(out, string(m.Body))
	}
	return out
}

// sqlMessages are sent to the SQL topic of the filter tests: a (number),
// b (string), TAGS, some without a or b.
var sqlMessages = []struct {
	body  string
	props map[string]string
}{
	{"m0", map[string]string{"a": "3", "b": "x", "TAGS": "A"}},
	{"m1", map[string]string{"a": "7", "b": "y", "TAGS": "B"}},
	{"m2", map[string]string{"a": "10", "TAGS": "A"}},
	{"m3", map[string]string{"b": "x"}},
	{"m4", map[string]string{"a": "6", "b": "zed", "TAGS": "C"}},
}

// The broker filters SQL92 pulls itself: the pull answer carries only the
// matching messages (a client cannot filter SQL92 again), over every
// operator family and the null cases.
func TestSQL92PullFiltersOnTheBroker(t *testing.T) {
	_, rc := withTopic(t, "SQL", 1)
	for _, m := range sqlMessages {
		rc.sendProps("SQL", m.props, m.body)
	}
	cases := []struct {
		expr string
		want []string
	}{
		{"a > 5", []string{"m1", "m2", "m4"}},
		{"a >= 7 AND a <= 10", []string{"m1", "m2"}},
		{"a BETWEEN 4 AND 8", []string{"m1", "m4"}},
		{"a NOT BETWEEN 4 AND 8", []string{"m0", "m2"}},
		{"b IN ('x', 'zed')", []string{"m0", "m3", "m4"}},
		{"b NOT IN ('x')", []string{"m1", "m4"}},
		{"b = 'x'", []string{"m0", "m3"}},
		{"NOT (b = 'x')", []string{"m1", "m4"}}, // no b: unknown, so neither
		{"b <> 'x'", []string{"m1", "m4"}},
		{"b IS NULL", []string{"m2"}},
		{"a IS NOT NULL AND b IS NOT NULL", []string{"m0", "m1", "m4"}},
		{"TAGS = 'A' OR b = 'y'", []string{"m0", "m1", "m2"}},
		{"b STARTSWITH 'z'", []string{"m4"}},
		{"b ENDSWITH 'ed'", []string{"m4"}},
		{"b CONTAINS 'e'", []string{"m4"}},
		{"TRUE", []string{"m0", "m1", "m2", "m3", "m4"}},
		{"FALSE", nil},
		{"a > 5 and (b = 'y' or TAGS = 'A')", []string{"m1", "m2"}}, // keywords in any case
	}
	for _, c := range cases {
		h := pullHeader("g", "SQL", 0, 0, 32, protocol.PullFlagSubscription)
		h.ExpressionType, h.Subscription = protocol.ExpressionTypeSQL92, c.expr
		got := bodiesOf(t, rc.call(protocol.ReqPullMessage, h.Encode(), nil))
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.expr, got, c.want)
		}
	}
}

// A push consumer's SQL92 subscription comes with its heartbeat; its pulls
// (which the official client labels TAG) are filtered by it.
func TestSQL92HeartbeatSubscriptionFilters(t *testing.T) {
	_, rc := withTopic(t, "SQLH", 1)
	for _, m := range sqlMessages {
		rc.sendProps("SQLH", m.props, m.body)
	}
	sub := protocol.SubscriptionData{Topic: "SQLH", SubString: "a > 5 AND b IS NOT NULL", ExpressionType: protocol.ExpressionTypeSQL92, SubVersion: 1}
	expect(t, rc.heartbeat("c1", "g", sub), protocol.RespSuccess, "")
	h := pullHeader("g", "SQLH", 0, 0, 32, 0)
	if got := bodiesOf(t, rc.call(protocol.ReqPullMessage, h.Encode(), nil)); !slices.Equal(got, []string{"m1", "m4"}) {
		t.Fatalf("got %v", got)
	}
	// A subscription that does not parse: its pulls say why.
	bad := protocol.SubscriptionData{Topic: "SQLH", SubString: "a >", ExpressionType: protocol.ExpressionTypeSQL92, SubVersion: 2}
	expect(t, rc.heartbeat("c1", "g", bad), protocol.RespSuccess, "")
	expect(t, rc.call(protocol.ReqPullMessage, h.Encode(), nil), protocol.RespSubscriptionParseFailed, "a >")
}

// With enablePropertyFilter off, SQL92 is refused as Java refuses it.
func TestSQL92RefusedWhenPropertyFilterIsOff(t *testing.T) {
	_, rc := withTopicConfig(t, "SQLOFF", 1, func(c *config.Config) { c.EnablePropertyFilter = false })
	rc.sendProps("SQLOFF", map[string]string{"a": "1"}, "m")
	h := pullHeader("g", "SQLOFF", 0, 0, 32, protocol.PullFlagSubscription)
	h.ExpressionType, h.Subscription = protocol.ExpressionTypeSQL92, "a = 1"
	expect(t, rc.call(protocol.ReqPullMessage, h.Encode(), nil), protocol.RespSystemError, "does not support consumer to filter message by SQL92")
}

// A held SQL92 pull is woken only by a matching arrival: non-matching ones
// hold it again past them.
func TestSQL92HeldPullWakesOnMatch(t *testing.T) {
	b, rc := withTopic(t, "SQLW", 1)
	h := pullHeader("g", "SQLW", 0, 0, 32, protocol.PullFlagSubscription|protocol.PullFlagSuspend)
	h.ExpressionType, h.Subscription = protocol.ExpressionTypeSQL92, "n >= 3"
	got := make(chan *protocol.Command, 1)
	go func() { got <- rc.call(protocol.ReqPullMessage, h.Encode(), nil) }()
	testwait.For(t, testwait.Default, "the pull to be held", func() bool { return b.core.HeldPulls() == 1 })
	for i := range 4 {
		rc.sendProps("SQLW", map[string]string{"n": fmt.Sprint(i)}, fmt.Sprint("n", i))
	}
	resp := <-got
	if bodies := bodiesOf(t, resp); !slices.Equal(bodies, []string{"n3"}) {
		t.Fatalf("woken with %v", bodies)
	}
}

// A bounded cache compiles each pull consumer's expression once.
func TestSQL92PullExpressionsCompiledOnce(t *testing.T) {
	b, rc := withTopic(t, "SQLC", 1)
	rc.sendProps("SQLC", map[string]string{"a": "1"}, "m")
	for range 3 {
		for _, e := range []string{"a = 1", "a = 2"} {
			h := pullHeader("g", "SQLC", 0, 0, 32, protocol.PullFlagSubscription)
			h.ExpressionType, h.Subscription = protocol.ExpressionTypeSQL92, e
			rc.call(protocol.ReqPullMessage, h.Encode(), nil)
		}
	}
	if n := b.core.CompiledExpressions(); n != 2 {
		t.Fatalf("%d expressions cached, want 2", n)
	}
}

// With filterSupportRetry, a group's retry queue is filtered by its SQL92
// subscription of the topic each retried message came from; without it,
// every retry is delivered (Java's default).
func TestSQL92FilterSupportRetry(t *testing.T) {
	for _, on := range []bool{false, true} {
		t.Run(fmt.Sprint("filterSupportRetry=", on), func(t *testing.T) {
			_, rc := withTopicConfig(t, "SQLR", 1, func(c *config.Config) { c.FilterSupportRetry = on })
			subs := []protocol.SubscriptionData{
				{Topic: "SQLR", SubString: "a > 5", ExpressionType: protocol.ExpressionTypeSQL92, SubVersion: 1},
				protocol.BuildSubscriptionData("%RETRY%g", "*"),
			}
			expect(t, rc.heartbeat("c1", "g", subs...), protocol.RespSuccess, "")
			for _, a := range []string{"1", "9"} {
				rc.sendProps("%RETRY%g", map[string]string{"a": a, protocol.PropertyRetryTopic: "SQLR"}, "a"+a)
			}
			h := pullHeader("g", "%RETRY%g", 0, 0, 32, 0)
			want := []string{"a1", "a9"}
			if on {
				want = []string{"a9"}
			}
			if got := bodiesOf(t, rc.call(protocol.ReqPullMessage, h.Encode(), nil)); !slices.Equal(got, want) {
				t.Fatalf("got %v, want %v", got, want)
			}
		})
	}
}
