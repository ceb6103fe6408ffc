//go:build !race

package integration

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/internal/testwait"
)

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
