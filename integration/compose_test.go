//go:build !race

// The compose test drives the official client's push consumer, which reports
// data races inside itself under -race; it runs in the test command's
// second, race-free pass.

package integration

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/internal/testwait"
)

// TestCompose builds the FROM-scratch images and brings docker-compose.yml
// up under its own project, network and ports. It shows that the one
// address the brokers advertise (the compose network's gateway) works from
// both sides: the host produces and consumes with the official client and
// with ours, and the tools image, run on the compose network, sends
// messages and consumes every message the host sent. Then it replaces
// broker-a's container and checks that every queue and every group's
// committed offsets came back unchanged, that a group resumes where it
// stopped, and that messages are still found by id. The project goes down
// with its volumes however the test ends. It needs a Docker engine and runs
// only when RUNNEL_COMPOSE_TEST=1 (.ci/run sets it where docker works).
func TestCompose(t *testing.T) {
	p := newComposeProject(t)
	t.Logf("project %s: network %s.0/24, name server 127.0.0.1:%d, brokers %s %s",
		composeProjectName, p.net, p.nsPort, p.brokerAAddr, p.brokerBAddr)

	t.Log(strings.TrimSpace(p.mustScript("images")))
	t.Logf("images: %s", p.imageSizes())
	t.Cleanup(p.down) // registered before up, so a failed up is cleaned too
	start := time.Now()
	up := p.mustScript("start")
	t.Logf("up to healthy: %v (%s)", time.Since(start).Round(100*time.Millisecond), lineWith(up, "up to healthy"))

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	adm := p.admin()

	// The name server hands out the gateway address for both brokers.
	waitBrokers(t, ctx, adm, []string{p.brokerAAddr, p.brokerBAddr})
	// The ports are also published on loopback, for host tools that assume it.
	for _, addr := range []string{p.namesrvAddr, fmt.Sprintf("127.0.0.1:%d", p.aPort), fmt.Sprintf("127.0.0.1:%d", p.bPort)} {
		if out, _, err := p.exec(filepath.Join(p.root, "bin", "static", "healthcheck"), addr); err != nil {
			t.Fatalf("healthcheck %s from the host: %v\n%s", addr, err, out)
		}
	}
	topic := fmt.Sprintf("ComposeTopic%d", time.Now().UnixNano()%1e9)
	if _, err := adm.CreateTopic(ctx, admin.TopicSpec{Topic: topic, ReadQueueNums: 4, WriteQueueNums: 4}); err != nil {
		t.Fatalf("create topic: %v", err)
	}
	const n = 40
	var sent []string // every body, in the order sent

	// From the host: official producer -> our consumer.
	official := composeBodies("official-", n)
	sendOfficial(t, ctx, p.namesrvAddr, topic, official)
	sent = append(sent, official...)
	rcCfg := composeConsumerConfig(p.namesrvAddr, "compose-rc-group")
	got := consumeOurs(t, ctx, adm, rcCfg, topic, official, n)
	if extra := got.without(official); len(extra) > 0 {
		t.Fatalf("our consumer received messages that were not sent: %q", extra)
	}

	// From the host: our producer -> the official consumer.
	ours := composeBodies("ours-", n)
	sendOurs(t, ctx, p.namesrvAddr, topic, ours)
	sent = append(sent, ours...)
	consumeOfficial(t, ctx, adm, p.namesrvAddr, "compose-official-group", topic, slices.Concat(official, ours))

	// From a container on the compose network: runnelctl sends, and the
	// consumer CLI reads back exactly what was sent from both sides.
	container := composeBodies("container-", 10)
	rows := p.tool("runnelctl", append([]string{"send", "--topic", topic, "--keys", "from-container", "-o", "json"}, container...)...)
	sentRows := decodeLines[struct {
		Status      string `json:"status"`
		OffsetMsgID string `json:"offsetMsgId"`
		Broker      string `json:"brokerName"`
	}](t, rows)
	if len(sentRows) != len(container) {
		t.Fatalf("runnelctl send in a container printed %d rows, want %d:\n%s", len(sentRows), len(container), rows)
	}
	sent = append(sent, container...)
	out := p.run("--profile", "consumer", "run", "--rm", "-T", "consumer", "--topic", topic,
		"--group", "compose-cli-group", "--from", "first", "--max", fmt.Sprint(len(sent)),
		"--idle-timeout", "60s", "--format", "json")
	var printed []string
	brokersSeen := map[string]bool{}
	for _, r := range decodeLines[struct {
		Body   *string `json:"body"`
		Broker string  `json:"brokerName"`
	}](t, out) {
		if r.Body == nil {
			t.Fatalf("consumer printed a record without a text body:\n%s", out)
		}
		printed = append(printed, *r.Body)
		brokersSeen[r.Broker] = true
	}
	if !sameSet(printed, sent) {
		t.Fatalf("the consumer container printed %d messages, want the %d sent:\n got %q\nwant %q", len(printed), len(sent), sorted(printed), sorted(sent))
	}
	if len(brokersSeen) != 2 {
		t.Fatalf("the consumer container read from brokers %v, want both", brokersSeen)
	}
	// A container on another network (Docker's default bridge) reaches the
	// brokers at the same address.
	for _, addr := range []string{p.brokerAAddr, p.brokerBAddr} {
		if out, errOut, err := p.exec("docker", "run", "--rm", "--entrypoint", "/bin/healthcheck", "runnel/tools:dev", addr); err != nil {
			t.Fatalf("healthcheck %s from the default bridge: %v\n%s%s", addr, err, out, errOut)
		}
	}

	// Each group's committed offsets are what it consumed (the CLI commits
	// as it exits).
	committed := map[string]int64{"compose-rc-group": n, "compose-official-group": 2 * n, "compose-cli-group": int64(len(sent))}
	groups := slices.Sorted(maps.Keys(committed))
	for _, g := range groups {
		waitCommittedTotal(t, ctx, adm, g, topic, committed[g])
	}
	queuesBefore := topicQueues(t, ctx, adm, topic)
	if total := storedTotal(queuesBefore); total != int64(len(sent)) {
		t.Fatalf("%d messages stored, want %d: %+v", total, len(sent), queuesBefore)
	}
	offsetsBefore := map[string][]admin.QueueProgress{}
	for _, g := range groups {
		offsetsBefore[g] = groupOffsets(t, ctx, adm, g, topic)
	}
	t.Logf("memory: %s", p.memory())

	// Replace broker-a's container with a new one (a clean stop, then a
	// fresh container with fresh anonymous volumes): its messages and the
	// groups' offsets must come back from its named volume.
	p.run("up", "-d", "--no-deps", "--force-recreate", "--renew-anon-volumes", "broker-a")
	p.mustScript("wait")
	waitBrokers(t, ctx, adm, []string{p.brokerAAddr, p.brokerBAddr})
	// Both brokers are registered, so the route names broker-a again; the
	// stats ask it for its queues.
	queuesAfter, err := adm.TopicStats(ctx, topic)
	if err != nil {
		t.Fatalf("topic stats after broker-a's restart: %v", err)
	}
	if queuesAfter = stripStats(queuesAfter); !slices.Equal(queuesAfter, queuesBefore) {
		t.Fatalf("queues changed across broker-a's restart:\nbefore %+v\nafter  %+v", queuesBefore, queuesAfter)
	}
	for _, g := range groups {
		if after := groupOffsets(t, ctx, adm, g, topic); !slices.Equal(after, offsetsBefore[g]) {
			t.Fatalf("group %s's offsets changed across broker-a's restart:\nbefore %+v\nafter  %+v", g, offsetsBefore[g], after)
		}
	}
	onA := 0
	for i, r := range sentRows {
		if r.Broker != "broker-a" {
			continue
		}
		onA++
		m, err := adm.QueryMessageByID(ctx, r.OffsetMsgID, "")
		if err != nil || string(m.Body) != container[i] {
			t.Fatalf("message %s on broker-a after its restart: %v, %+v", r.OffsetMsgID, err, m)
		}
	}
	if onA == 0 {
		t.Fatalf("no message of the container's went to broker-a: %+v", sentRows)
	}

	// A host client still works after the restart, and a group resumes at
	// its committed offsets: compose-rc-group gets what it had not
	// consumed, and none of the official producer's messages again.
	after := composeBodies("after-", 10)
	sendOurs(t, ctx, p.namesrvAddr, topic, after)
	want := slices.Concat(ours, container, after)
	got = consumeOurs(t, ctx, adm, rcCfg, topic, want, n+int64(len(want)))
	if extra := got.without(want); len(extra) > 0 {
		t.Fatalf("compose-rc-group received messages it had consumed before the restart: %q", extra)
	}
}

// waitBrokers waits until the name server lists exactly the brokers at
// addrs (sorted by name).
func waitBrokers(t *testing.T, ctx context.Context, adm *admin.Admin, addrs []string) {
	t.Helper()
	testwait.Until(t, 30*time.Second, fmt.Sprintf("the name server to list the brokers %v", addrs), func() error {
		bs, err := adm.Brokers(ctx)
		var listed []string
		for _, b := range bs {
			listed = append(listed, b.Addr)
		}
		if err != nil || !slices.Equal(listed, addrs) {
			return fmt.Errorf("it lists %v (%v)", listed, err)
		}
		return nil
	})
}

// TestComposeGroup brings docker-compose.yml up with its group profile: the
// three nodes of broker-g, from RocketMQ's DLedger settings, elect a leader,
// and the name server lists one master and two slaves at the nodes'
// advertised addresses. Our producer sends through the master; then the
// master's container is killed (SIGKILL): the name server lists another
// node as master, our producer's sends succeed again, and our consumer
// reads every message that was acknowledged. Like TestCompose it needs a
// Docker engine and runs only when RUNNEL_COMPOSE_TEST=1.
func TestComposeGroup(t *testing.T) {
	p := newComposeProject(t)
	gPorts := freePorts(t, 3)
	services := map[string]string{} // advertised address -> compose service
	var nodes []string
	for i, port := range gPorts {
		p.env = append(p.env, fmt.Sprintf("RUNNEL_BROKER_G%d_PORT=%d", i, port))
		addr := fmt.Sprintf("%s:%d", p.gateway, port)
		services[addr] = fmt.Sprintf("broker-g%d", i)
		nodes = append(nodes, addr)
	}
	slices.Sort(nodes)
	p.env = append(p.env, "COMPOSE_PROFILES=group")

	t.Log(p.mustScript("images"))
	t.Cleanup(p.down)
	p.mustScript("start")

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	adm := p.admin()

	master := waitGroupMaster(t, ctx, adm, nodes, "")
	topic := fmt.Sprintf("GroupTopic%d", time.Now().UnixNano()%1e9)
	if _, err := adm.CreateTopic(ctx, admin.TopicSpec{Topic: topic, Brokers: []string{"broker-g"}, ReadQueueNums: 2, WriteQueueNums: 2}); err != nil {
		t.Fatalf("create topic: %v", err)
	}

	prod := composeProducer(t, ctx, p.namesrvAddr, "compose-group-p", "compose-group-pg")
	defer prod.Shutdown(context.Background())
	var acked []string
	send := func(body string) error {
		res, err := prod.Send(ctx, &client.Message{Topic: topic, Body: []byte(body)})
		if err == nil {
			if res.Queue.BrokerName != "broker-g" {
				t.Fatalf("sent to %s, want broker-g", res.Queue.BrokerName)
			}
			acked = append(acked, body)
		}
		return err
	}
	for _, b := range composeBodies("before-", 20) {
		if err := send(b); err != nil {
			t.Fatalf("send %s: %v", b, err)
		}
	}

	p.run("kill", services[master])
	newMaster := waitGroupMaster(t, ctx, adm, nil, master)
	t.Logf("master %s (%s) killed; new master %s (%s)", master, services[master], newMaster, services[newMaster])
	// Our producer finds the new master itself, well before its 30 s
	// periodic route refresh.
	i := 0
	testwait.Until(t, 15*time.Second, "our producer's sends to succeed after the kill", func() error {
		i++
		return send(fmt.Sprintf("after-%05d", i))
	})
	for _, b := range composeBodies("later-", 20) {
		if err := send(b); err != nil {
			t.Fatalf("send %s after the failover: %v", b, err)
		}
	}
	// A send that failed may still have been stored (an answer lost with
	// the node): the group commits what the queues hold.
	stored := storedTotal(topicQueues(t, ctx, adm, topic))
	if stored < int64(len(acked)) {
		t.Fatalf("broker-g holds %d messages, fewer than the %d acknowledged", stored, len(acked))
	}
	consumeOurs(t, ctx, adm, composeConsumerConfig(p.namesrvAddr, "compose-group-c"), topic, acked, stored)
}

// waitGroupMaster waits until the name server lists broker-g with a master
// other than not ("" for any) and returns its address. With nodes set it
// also waits for the master and slaves to be exactly those addresses.
func waitGroupMaster(t *testing.T, ctx context.Context, adm *admin.Admin, nodes []string, not string) string {
	t.Helper()
	var master string
	testwait.Until(t, 60*time.Second, "the name server to list a master of broker-g", func() error {
		bs, err := adm.Brokers(ctx)
		if err != nil {
			return err
		}
		master = ""
		var listed []string
		for _, b := range bs {
			if b.Name != "broker-g" {
				continue
			}
			listed = append(listed, b.Addr)
			if b.IsMaster() {
				master = b.Addr
			}
		}
		slices.Sort(listed)
		switch {
		case master == "" || master == not:
			return fmt.Errorf("broker-g nodes %v, master %q", listed, master)
		case nodes != nil && !slices.Equal(listed, nodes):
			return fmt.Errorf("broker-g nodes %v, want %v", listed, nodes)
		}
		return nil
	})
	return master
}
