package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
	"github.com/runnelmq/runnel/store"
)

// groupAddrs is what the name server lists for broker-a: brokerId -> addr.
func groupAddrs(c *cluster.Cluster) map[int64]string {
	info := c.Namesrv().Table().ClusterInfo()
	return maps.Clone(info.BrokerAddrTable["broker-a"].BrokerAddrs)
}

// waitListed waits until the name server lists exactly node master as
// broker-a's master and every other running node as a slave.
func waitListed(t *testing.T, c *cluster.Cluster, master int, within time.Duration) {
	t.Helper()
	testwait.Until(t, within, fmt.Sprintf("node %d listed as the only master", master), func() error {
		addrs := groupAddrs(c)
		if addrs[protocol.MasterID] != c.BrokerAddr(master) {
			return fmt.Errorf("listed %v, want master %s", addrs, c.BrokerAddr(master))
		}
		for i := range c.Brokers() {
			if c.Broker(i) == nil || i == master {
				continue
			}
			if !slices.Contains(slices.Collect(maps.Values(addrs)), c.BrokerAddr(i)) {
				return fmt.Errorf("listed %v, want slave %s too", addrs, c.BrokerAddr(i))
			}
		}
		return nil
	})
}

// sendUntilOK sends body until the group acknowledges it (our client
// retries on its own; the route may still name the old master).
func sendUntilOK(t *testing.T, p *client.Producer, topic, body string) client.SendResult {
	t.Helper()
	var res client.SendResult
	testwait.Until(t, 30*time.Second, "a send acknowledged", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		var err error
		res, err = p.Send(ctx, &client.Message{Topic: topic, Body: []byte(body)})
		if err == nil && res.Status != client.SendOK {
			err = fmt.Errorf("status %v", res.Status)
		}
		return err
	})
	return res
}

// A replicated group of three: the leader is listed as master and the
// others as slaves; a slave refuses writes as a Java slave does; the
// leader killed, another is listed master and takes sends; the old one
// restarts as a slave and catches up; every acknowledged message is
// consumed.
func TestGroupFailover(t *testing.T) {
	c := rcCluster(t, cluster.Group(3))
	l := c.Leader()
	waitListed(t, c, l, 10*time.Second)

	p := rcProducer(t, c)
	var acked []string
	for i := range 20 {
		sendUntilOK(t, p, "Group", body(i))
		acked = append(acked, body(i))
	}

	// A slave's answer to a write: Java's SERVICE_NOT_AVAILABLE (the
	// remoting door answers core.Unavailable with it).
	f := (l + 1) % 3
	_, err := c.Broker(f).Core().Send(core.SendRequest{Topic: "Group", QueueID: 0, Messages: []core.SendMessage{{Body: []byte("x")}}})
	if e, ok := core.ReasonOf(err); !ok || e.Reason != core.Unavailable || !strings.Contains(e.Remark, "messages are put to the slave") {
		t.Fatalf("slave send: %v, want %v and Java's remark", err, core.Unavailable)
	}

	c.KillBroker(l)
	nl := c.Leader(l)
	waitListed(t, c, nl, 3*time.Second)
	for i := 20; i < 40; i++ {
		sendUntilOK(t, p, "Group", body(i))
		acked = append(acked, body(i))
	}

	c.StartBroker(l)
	testwait.Until(t, 10*time.Second, "the old leader back as a slave, caught up", func() error {
		b := c.Broker(l)
		st, _ := b.ReplicaStatus()
		ls, _ := c.Broker(nl).ReplicaStatus()
		if b.IsMaster() || st.AppliedIndex < ls.CommitIndex {
			return fmt.Errorf("old leader master=%v applied %d, leader commit %d", b.IsMaster(), st.AppliedIndex, ls.CommitIndex)
		}
		return nil
	})
	waitListed(t, c, nl, 10*time.Second)

	got := newRCCollector()
	rcConsumer(t, c, "g-group", "Group", "*", got.add)
	testwait.Until(t, 30*time.Second, "every acknowledged message consumed", func() error {
		var missing []string
		for _, b := range acked {
			if got.get(b) == nil {
				missing = append(missing, b)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("%d missing, first %s", len(missing), missing[0])
		}
		return nil
	})
}

// `runnelctl cluster list` shows each group node's role, raft term and
// applied index, as the nodes report them in GET_BROKER_RUNTIME_INFO.
func TestGroupClusterList(t *testing.T) {
	c := rcCluster(t, cluster.Group(3))
	l := c.Leader()
	waitListed(t, c, l, 10*time.Second)
	ctl := mustRunnelctl(t, c.NamesrvAddr())
	var rows []struct {
		Nodes []struct {
			ID      int64  `json:"brokerId"`
			Addr    string `json:"addr"`
			Role    string `json:"role"`
			Term    string `json:"raftTerm"`
			Applied string `json:"raftAppliedIndex"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(ctl("cluster", "list", "-o", "json")), &rows); err != nil || len(rows) != 1 || len(rows[0].Nodes) != 3 {
		t.Fatalf("cluster list: %+v %v", rows, err)
	}
	ls, _ := c.Broker(l).ReplicaStatus()
	for _, n := range rows[0].Nodes {
		wantRole := "SLAVE"
		if n.Addr == c.BrokerAddr(l) {
			wantRole = "MASTER"
		}
		if n.Role != wantRole || n.Term != strconv.FormatUint(ls.Term, 10) || n.Applied == "" || n.Applied == "0" {
			t.Errorf("node %+v, want role %s term %d and an applied index", n, wantRole, ls.Term)
		}
	}
	if out := ctl("cluster", "list"); !strings.Contains(out, "TERM") || !strings.Contains(out, "APPLIED") || !strings.Contains(out, "MASTER") {
		t.Errorf("cluster list text:\n%s", out)
	}
}

// Delayed messages move with leadership: sent to one master, due after it
// is killed, delivered by the next one (its delay service starts on
// promotion, from the progress in the log).
func TestGroupDelayedAcrossFailover(t *testing.T) {
	c := rcCluster(t, cluster.Group(3))
	l := c.Leader()
	waitListed(t, c, l, 10*time.Second)
	p := rcProducer(t, c)
	sendUntilOK(t, p, "GroupDelay", "now")
	const n = 10
	for i := range n {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		_, err := p.Send(ctx, &client.Message{Topic: "GroupDelay", Body: []byte(body(i)), DelayLevel: 2}) // 5 s
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	c.KillBroker(l)
	c.Leader(l)
	got := newRCCollector()
	rcConsumer(t, c, "g-group-delay", "GroupDelay", "*", got.add)
	testwait.Until(t, 30*time.Second, "every delayed message delivered by the new master", func() error {
		for i := range n {
			if got.get(body(i)) == nil {
				return fmt.Errorf("%s not consumed", body(i))
			}
		}
		return nil
	})
}

// A slave serving pulls (slaveReadEnable) refuses a group's pulls once the
// master stops the group (updateSubGroup consumeEnable=false), and serves
// them again once the master lets it consume: the slave's group table
// follows the configs its raft log writes, not only those it loaded when
// it was last master.
func TestGroupSlaveFollowsGroupConfigs(t *testing.T) {
	const topic, group = "SlaveGroups", "slave-groups-cg"
	c := rcCluster(t, cluster.Group(3), cluster.Configure(func(_ int, cfg *config.Config) { cfg.SlaveReadEnable = true }))
	l := c.Leader()
	waitListed(t, c, l, 10*time.Second)
	sendUntilOK(t, rcProducer(t, c), topic, "m")
	slave := (l + 1) % 3

	rc := remoting.NewClient(remoting.DefaultClientConfig())
	defer rc.Close()
	pullCode := func() (int16, string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		h := protocol.PullMessageRequestHeader{ConsumerGroup: group, Topic: topic, QueueID: 0, QueueOffset: 0,
			MaxMsgNums: 32, ExpressionType: protocol.ExpressionTypeTag, Subscription: "*"}
		resp, err := rc.Invoke(ctx, c.BrokerAddr(slave), protocol.NewRequest(protocol.ReqPullMessage, h.Encode(), nil))
		if err != nil {
			return 0, "", err
		}
		return resp.Code, resp.Remark, nil
	}
	adm := c.Admin(t)
	setConsume := func(on bool) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := adm.UpdateGroup(ctx, group, "", []string{c.BrokerAddr(l)}, func(g *protocol.SubscriptionGroupConfig) { g.ConsumeEnable = on }); err != nil {
			t.Fatal(err)
		}
	}
	refused := func(code int16) bool { return code == protocol.RespNoPermission }

	if code, remark, err := pullCode(); err != nil || refused(code) {
		t.Fatalf("pull on the slave before any group config: %d %q %v", code, remark, err)
	}
	setConsume(false)
	testwait.Until(t, 10*time.Second, "the slave refuses the stopped group's pulls", func() error {
		code, remark, err := pullCode()
		if err != nil || !refused(code) {
			return fmt.Errorf("pull answered %d %q %v, want NO_PERMISSION", code, remark, err)
		}
		return nil
	})
	setConsume(true)
	testwait.Until(t, 10*time.Second, "the slave serves the group again", func() error {
		code, remark, err := pullCode()
		if err != nil || refused(code) {
			return fmt.Errorf("pull answered %d %q %v", code, remark, err)
		}
		return nil
	})
}

// A group's follower cut off while the leader writes far past it, and the
// leader snapshots and drops its log but the last few entries (small
// snapshot thresholds), catches up from the snapshot once healed: its
// store is replaced by one restored from the leader's, and answers every
// read of both topics (one created while it was cut off) as the leader's
// does.
func TestGroupSnapshotCatchUp(t *testing.T) {
	c := rcCluster(t, cluster.Group(3), cluster.Configure(func(_ int, cfg *config.Config) {
		cfg.Replication.SnapshotInterval = 100 * time.Millisecond
		cfg.Replication.SnapshotThreshold = 16
		cfg.Replication.TrailingLogs = 4
	}))
	l := c.Leader()
	waitListed(t, c, l, 10*time.Second)
	p := rcProducer(t, c)
	sendUntilOK(t, p, "Snap", "first")

	f := (l + 1) % 3
	before := c.Broker(f).Store()
	c.Cut(f)
	for i := range 200 {
		sendUntilOK(t, p, []string{"Snap", "SnapNew"}[i%2], fmt.Sprintf("s-%03d", i))
	}
	// Raft snapshots on its own past 16 entries (every 100-200 ms); one
	// more now makes sure the log kept is the last 4 entries, far past
	// the follower's.
	nl := c.Leader(f)
	if err := c.Broker(nl).Node().Snapshot(); err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	c.Heal(f)

	testwait.Until(t, 30*time.Second, "the follower caught up from a snapshot", func() error {
		fs := c.Broker(f).Store()
		if fs == before {
			return errors.New("the follower's store is the one it had before the cut")
		}
		ls := c.Broker(c.Leader()).Store()
		for _, topic := range []string{"Snap", "SnapNew"} {
			want, err := topicReads(ls, topic)
			if err != nil {
				return err
			}
			got, err := topicReads(fs, topic)
			if err != nil {
				return err
			}
			if len(want) == 0 || !slices.Equal(got, want) {
				return fmt.Errorf("%s: follower reads %d messages, leader %d", topic, len(got), len(want))
			}
		}
		return nil
	})
}

// topicReads is every message of topic in st as "queue@offset body", in
// queue and offset order.
func topicReads(st *store.Store, topic string) ([]string, error) {
	var out []string
	for id, r := range st.Queues() {
		if id.Topic != topic {
			continue
		}
		for off := r.Min; off < r.Max; {
			res, err := st.Get(topic, id.ID, off, 32, 1<<20, nil)
			if err != nil {
				return nil, err
			}
			if res.Count == 0 {
				return nil, fmt.Errorf("get %s %d@%d: nothing below max %d", topic, id.ID, off, r.Max)
			}
			ms, err := message.DecodeMessages(res.Messages)
			if err != nil {
				return nil, err
			}
			for _, m := range ms {
				out = append(out, fmt.Sprintf("%d@%d %s", m.QueueID, m.QueueOffset, m.Body))
			}
			off = res.NextBeginOffset
		}
	}
	slices.Sort(out)
	return out, nil
}
