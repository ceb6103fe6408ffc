package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// routePerm is topic's perm on broker in `topic route -o json`.
func routePerm(t *testing.T, ctl func(...string) result, topic, broker string) int {
	t.Helper()
	r := ctl("topic", "route", topic, "-o", "json")
	if r.code != 0 {
		t.Fatalf("topic route %s: %+v", topic, r)
	}
	var route protocol.TopicRouteData
	if err := json.Unmarshal([]byte(r.stdout), &route); err != nil {
		t.Fatalf("route JSON %q: %v", r.stdout, err)
	}
	for _, qd := range route.QueueDatas {
		if qd.BrokerName == broker {
			return qd.Perm
		}
	}
	t.Fatalf("topic %s has no queues on %s: %+v", topic, broker, route)
	return 0
}

// TestWipeAndAddWritePermCommands: wipe-write-perm takes write from every
// topic of the broker group in the name server's routes, so `send` finds
// no queue to write; add-write-perm gives it back. The mqadmin names do
// the same, and an unknown group changes nothing and says so.
func TestWipeAndAddWritePermCommands(t *testing.T) {
	cl, env := onCluster(t)
	ctl := ctlWith(t, env)
	name := cl.Broker(0).Config().BrokerName
	okRun(t, env, "", "topic", "create", "wp", "--queues", "2")
	if r := ctl("send", "--topic", "wp", "before"); r.code != 0 {
		t.Fatalf("send before the wipe: %+v", r)
	}

	r := ctl("broker", "wipe-write-perm", "--broker", name, "-o", "json")
	var res []admin.NamesrvTopics
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &res) != nil || len(res) != 1 || res[0].Topics < 2 {
		t.Fatalf("wipe-write-perm: %+v (decoded %+v)", r, res) // wp and the system topics
	}
	if p := routePerm(t, ctl, "wp", name); p != protocol.PermRead {
		t.Fatalf("wp's perm after the wipe: %s", protocol.PermString(p))
	}
	if r := ctl("send", "--topic", "wp", "during"); r.code == 0 {
		t.Fatalf("send after the wipe succeeded: %+v", r)
	}
	if got := cl.Broker(0).Store().MaxOffset("wp", 0) + cl.Broker(0).Store().MaxOffset("wp", 1); got != 1 {
		t.Fatalf("wp holds %d messages after the refused send, want 1", got)
	}

	if r := ctl("broker", "add-write-perm", "--broker", name); r.code != 0 || !strings.Contains(r.stdout, cl.NamesrvAddr()) {
		t.Fatalf("add-write-perm: %+v", r)
	}
	if p := routePerm(t, ctl, "wp", name); p != protocol.PermRead|protocol.PermWrite {
		t.Fatalf("wp's perm after the add: %s", protocol.PermString(p))
	}
	if r := ctl("send", "--topic", "wp", "after"); r.code != 0 {
		t.Fatalf("send after the add: %+v", r)
	}

	if r := ctl("wipeWritePerm", "-b", name); r.code != 0 || routePerm(t, ctl, "wp", name) != protocol.PermRead {
		t.Fatalf("wipeWritePerm: %+v", r)
	}
	if r := ctl("addWritePerm", "-b", name); r.code != 0 || routePerm(t, ctl, "wp", name) != 6 {
		t.Fatalf("addWritePerm: %+v", r)
	}
	if r := ctl("broker", "wipe-write-perm", "--broker", "nosuch"); r.code != 0 || !strings.Contains(r.stderr, "routes no topic of broker") {
		t.Fatalf("wipe of an unknown group: %+v", r)
	}
	assertFailed(t, ctl("broker", "wipe-write-perm"), "needs --broker")
}

// TestBrokerUpdateConfigCommand: update-config changes a running broker's
// maxMessageSize (a larger send is then refused with Java's remark) and
// brokerPermission (4: every topic registers read-only, so sends find no
// writable queue while consumers still read); `broker config` shows the
// values; a restart keeps them; keys that cannot change are refused
// naming those that can.
func TestBrokerUpdateConfigCommand(t *testing.T) {
	cl, env := onCluster(t)
	ctl := ctlWith(t, env)
	name := cl.Broker(0).Config().BrokerName
	okRun(t, env, "", "topic", "create", "uc", "--queues", "1")
	big := strings.Repeat("x", 3000)
	if r := ctl("send", "--topic", "uc", big); r.code != 0 {
		t.Fatalf("send of 3000 bytes before the update: %+v", r)
	}
	config := func() map[string]string {
		t.Helper()
		r := ctl("broker", "config", "-o", "json")
		var out []brokerTable
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &out) != nil || len(out) != 1 {
			t.Fatalf("broker config: %+v", r)
		}
		return out[0].Values
	}

	if r := ctl("broker", "update-config", "maxMessageSize=2048"); r.code != 0 || !strings.Contains(r.stdout, "updated") {
		t.Fatalf("update-config: %+v", r)
	}
	if v := config()["maxMessageSize"]; v != "2048" {
		t.Fatalf("maxMessageSize after the update: %q", v)
	}
	assertFailed(t, ctl("send", "--topic", "uc", big), "msg body length limit 2048B")

	// The mqadmin form: read-only broker.
	if r := ctl("updateBrokerConfig", "-b", name, "-k", "brokerPermission", "-v", "4"); r.code != 0 {
		t.Fatalf("updateBrokerConfig: %+v", r)
	}
	if p := routePerm(t, ctl, "uc", name); p != protocol.PermRead {
		t.Fatalf("uc's perm on a read-only broker: %s", protocol.PermString(p))
	}
	if r := ctl("send", "--topic", "uc", "small"); r.code == 0 {
		t.Fatalf("send to a read-only broker succeeded: %+v", r)
	}
	if n := pulled(t, cl.NamesrvAddr(), "uc"); n != 1 {
		t.Fatalf("a read-only broker gave %d messages to a pull, want 1", n)
	}
	if r := ctl("broker", "update-config", "brokerPermission=6"); r.code != 0 || routePerm(t, ctl, "uc", name) != 6 {
		t.Fatalf("back to read-write: %+v", r)
	}
	if r := ctl("send", "--topic", "uc", "small"); r.code != 0 {
		t.Fatalf("send after write came back: %+v", r)
	}

	assertFailed(t, ctl("broker", "update-config", "brokerName=x"), `"brokerName" cannot change at run time`)
	assertFailed(t, ctl("broker", "update-config", "sendMessageThreadPoolNums=4"), "brokerPermission, maxMessageSize, timerMaxDelaySec")
	assertFailed(t, ctl("broker", "update-config"), "needs KEY=VALUE")
	assertFailed(t, ctl("broker", "update-config", "maxMessageSize"), "want KEY=VALUE")

	cl.RestartBroker(0)
	if c := config(); c["maxMessageSize"] != "2048" || c["brokerPermission"] != "6" {
		t.Fatalf("config after a restart: %v", c)
	}
	assertFailed(t, ctl("send", "--topic", "uc", big), "msg body length limit 2048B")
}

// pulled pulls topic's queue 0 from the start with our pull consumer and
// returns how many messages came.
func pulled(t *testing.T, namesrv, topic string) int {
	t.Helper()
	n, err := pullAs(t, namesrv, "DEFAULT_CONSUMER", topic)
	if err != nil {
		var be *client.BrokerError
		if errors.As(err, &be) {
			t.Fatalf("pull refused: code %d %s", be.Code, be.Remark)
		}
		t.Fatal(err)
	}
	return n
}

// pullAs is one pull of topic's queue 0 from the start as group.
func pullAs(t *testing.T, namesrv, group, topic string) (int, error) {
	t.Helper()
	cfg := client.DefaultPullConsumerConfig()
	cfg.Group = group
	cfg.Client.NameServerAddrs = []string{namesrv}
	cfg.Client.InstanceName = fmt.Sprintf("%s-pull-%s", t.Name(), group)
	cfg.Client.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	pc, err := client.NewPullConsumer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := pc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = pc.Shutdown(ctx) }()
	mqs, err := pc.MessageQueues(ctx, topic)
	if err != nil || len(mqs) == 0 {
		t.Fatalf("queues of %s: %v %v", topic, mqs, err)
	}
	res, err := pc.Pull(ctx, mqs[0], 0, 32, client.PullOptions{Expression: "*"})
	if err != nil {
		return 0, err
	}
	return len(res.Messages), nil
}

// TestGroupUpdateCommand: `group update` stores a group's config on the
// broker; --consume-enable=false makes the broker refuse the group's pulls
// (NO_PERMISSION, Java's remark) while other groups pull; a second update
// changes only the flag it gives; the config survives a restart, and
// `group delete` removes it.
func TestGroupUpdateCommand(t *testing.T) {
	cl, env := onCluster(t)
	ctl := ctlWith(t, env)
	okRun(t, env, "", "topic", "create", "gu", "--queues", "1")
	if r := ctl("send", "--topic", "gu", "m"); r.code != 0 {
		t.Fatalf("send: %+v", r)
	}
	stored := func() protocol.SubscriptionGroupConfig {
		t.Helper()
		g, ok := cl.Broker(0).Core().GroupConfig("gu-off")
		if !ok {
			t.Fatal("gu-off has no stored config")
		}
		return g
	}

	if r := ctl("group", "update", "--group", "gu-off", "--consume-enable=false"); r.code != 0 || !strings.Contains(r.stdout, "updated") {
		t.Fatalf("group update: %+v", r)
	}
	if g := stored(); g.ConsumeEnable || g.RetryMaxTimes != 16 {
		t.Fatalf("stored config %+v", g)
	}
	_, err := pullAs(t, cl.NamesrvAddr(), "gu-off", "gu")
	var be *client.BrokerError
	if !errors.As(err, &be) || be.Code != protocol.RespNoPermission || be.Remark != "subscription group no permission, gu-off" {
		t.Fatalf("pull of a disabled group: %v", err)
	}
	if n, err := pullAs(t, cl.NamesrvAddr(), "gu-on", "gu"); err != nil || n != 1 {
		t.Fatalf("pull of another group: %d, %v", n, err)
	}

	// The mqadmin name, changing only retryMaxTimes.
	if r := ctl("updateSubGroup", "-g", "gu-off", "-r", "3"); r.code != 0 {
		t.Fatalf("updateSubGroup: %+v", r)
	}
	if g := stored(); g.ConsumeEnable || g.RetryMaxTimes != 3 {
		t.Fatalf("the second update did not keep consumeEnable or set retryMaxTimes: %+v", g)
	}

	cl.RestartBroker(0)
	if g := stored(); g.ConsumeEnable || g.RetryMaxTimes != 3 {
		t.Fatalf("config after a restart: %+v", g)
	}
	if _, err := pullAs(t, cl.NamesrvAddr(), "gu-off", "gu"); !errors.As(err, &be) || be.Code != protocol.RespNoPermission {
		t.Fatalf("pull of a disabled group after a restart: %v", err)
	}

	if r := ctl("group", "delete", "--group", "gu-off", "--yes"); r.code != 0 {
		t.Fatalf("group delete: %+v", r)
	}
	if _, ok := cl.Broker(0).Core().GroupConfig("gu-off"); ok {
		t.Fatal("the deleted group's config is still stored")
	}
	if n, err := pullAs(t, cl.NamesrvAddr(), "gu-off", "gu"); err != nil || n != 1 {
		t.Fatalf("pull after the group's deletion: %d, %v", n, err)
	}

	assertFailed(t, ctl("group", "update", "--consume-enable=false"), "needs --group")
	assertFailed(t, ctl("group", "update", "--group", "bad group"), "bad group")
	assertFailed(t, ctl("group", "update", "--group", "g", "--retry-queues", "-1"), "retryQueueNums -1")
}
