package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

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
	adm := newRunnelAdmin(t, c)
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
