package integration

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/client"
	ouradmin "github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// authGroup is a replicated group of 3 with ACL 2.0 on, root its initial
// (super) user.
func authGroup(t *testing.T) *cluster.Cluster {
	t.Helper()
	return rcCluster(t, cluster.Group(3), authOn(t))
}

// ACL 2.0 in a replicated group: the initial user is created by the
// group's master once it leads (a slave's own write would not reach the
// others), and users and rules written on the master reach every slave
// through the log, so after the master is killed the new one
// authenticates and authorizes as the old one did.
func TestAuthGroupSharesUsersAndRules(t *testing.T) {
	c := authGroup(t)
	l := c.Leader()
	waitListed(t, c, l, 10*time.Second)
	root := aclAdmin(t, c, authRootAK, authRootSK)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// onEvery waits until every running node answers that it holds user.
	onEvery := func(user string) {
		t.Helper()
		for i := range c.Brokers() {
			if c.Broker(i) == nil {
				continue
			}
			at := ouradmin.Where{Broker: c.BrokerAddr(i)}
			testwait.Until(t, 10*time.Second, fmt.Sprintf("node %d holds user %s", i, user), func() error {
				u, found, err := root.GetUser(ctx, at, user)
				if err != nil || !found || u.Username != user {
					return fmt.Errorf("user %+v found %v err %v", u, found, err)
				}
				return nil
			})
		}
	}
	onEvery(authRootAK)

	testwait.Until(t, 10*time.Second, "the topic created by root", func() error {
		_, err := root.CreateTopic(ctx, ouradmin.TopicSpec{Topic: "GroupAuth", ReadQueueNums: 2, WriteQueueNums: 2})
		return err
	})
	createUserWith(t, ctx, root, "carol", "carolSecret1", protocol.PolicyEntryInfo{Resource: "Topic:GroupAuth", Actions: []string{"Pub"}, Decision: "Allow"})
	onEvery("carol")

	c.KillBroker(l)
	nl := c.Leader(l)
	waitListed(t, c, nl, 5*time.Second)
	rules, found, err := root.GetACL(ctx, ouradmin.Where{Broker: c.BrokerAddr(nl)}, "User:carol")
	if err != nil || !found || len(rules.Policies) != 1 || rules.Policies[0].Entries[0].Resource != "Topic:GroupAuth" {
		t.Fatalf("carol's ACL on the new master: %+v found %v err %v", rules, found, err)
	}

	p := rcProducerWith(t, c, func(cfg *client.ProducerConfig) {
		cfg.Client.Credentials = acl.Credentials{AccessKey: "carol", SecretKey: "carolSecret1"}
		cfg.Group = "rc-auth-pg"
	})
	res := sendUntilOK(t, p, "GroupAuth", "after failover")
	if host, _, err := message.ParseOffsetMsgID(res.OffsetMsgID); err != nil || host.String() != c.BrokerAddr(nl) {
		t.Fatalf("stored by %v (%v), want the new master %s", host, err, c.BrokerAddr(nl))
	}
}

// A slave refuses ACL 2.0 writes as it refuses every write, with
// SERVICE_NOT_AVAILABLE (Java's answer to a write on a slave) and not
// SYSTEM_ERROR: the refusal comes from the core and goes through the
// broker's one error-to-response mapping, like an auth refusal.
func TestAuthGroupSlaveRefusesWrites(t *testing.T) {
	c := authGroup(t)
	l := c.Leader()
	waitListed(t, c, l, 10*time.Second)
	slave := (l + 1) % 3
	root := aclAdmin(t, c, authRootAK, authRootSK)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	at := ouradmin.Where{Broker: c.BrokerAddr(slave)}
	testwait.Until(t, 10*time.Second, "the slave holds the root user", func() error {
		_, found, err := root.GetUser(ctx, at, authRootAK)
		if err != nil || !found {
			return fmt.Errorf("found %v err %v", found, err)
		}
		return nil
	})
	for name, write := range map[string]func() error{
		"create user": func() error {
			_, err := root.CreateUser(ctx, at, protocol.UserInfo{Username: "dave", Password: "daveSecret1"})
			return err
		},
		"create acl": func() error {
			_, err := root.CreateACL(ctx, at, protocol.ACLInfo{Subject: "User:" + authRootAK, Policies: []protocol.PolicyInfo{{
				Entries: []protocol.PolicyEntryInfo{{Resource: "Topic:T", Actions: []string{"Pub"}, Decision: "Allow"}}}}})
			return err
		},
	} {
		var re *ouradmin.ResponseError
		if err := write(); !errors.As(err, &re) || re.Code != protocol.RespServiceNotAvailable {
			t.Errorf("%s on the slave: %v, want SERVICE_NOT_AVAILABLE (%d)", name, err, protocol.RespServiceNotAvailable)
		}
	}
}
