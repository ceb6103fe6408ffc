package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/runnelmq/runnel/broker/config"
	ouradmin "github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// The ACL 2.0 tests' super user, created at start as broker.conf's
// initAuthenticationUser creates it.
const authRootAK, authRootSK = "root", "rootSecret1"

// startAuthCluster starts a cluster whose broker authenticates and
// authorizes with ACL 2.0 (the name server checks nothing, as Java's).
func startAuthCluster(t testing.TB, more ...cluster.Option) *cluster.Cluster {
	t.Helper()
	return cluster.Start(t, append([]cluster.Option{authOn(t)}, more...)...)
}

// authOn turns ACL 2.0 on in every broker, root its initial (super) user,
// as broker.conf's keys do.
func authOn(t testing.TB) cluster.Option {
	return cluster.Configure(func(_ int, cfg *config.Config) {
		for _, kv := range [][2]string{
			{"authenticationEnabled", "true"}, {"authorizationEnabled", "true"},
			{"initAuthenticationUser", `{"username":"` + authRootAK + `","password":"` + authRootSK + `"}`},
		} {
			if _, err := cfg.Auth.ApplyKey(kv[0], kv[1]); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// createUserWith creates user (its password password) and its ACL of
// entries, as root.
func createUserWith(t testing.TB, ctx context.Context, root *ouradmin.Admin, user, password string, entries ...protocol.PolicyEntryInfo) {
	t.Helper()
	if _, err := root.CreateUser(ctx, ouradmin.Where{}, protocol.UserInfo{Username: user, Password: password}); err != nil {
		t.Fatal(err)
	}
	if _, err := root.CreateACL(ctx, ouradmin.Where{}, protocol.ACLInfo{Subject: "User:" + user,
		Policies: []protocol.PolicyInfo{{Entries: entries}}}); err != nil {
		t.Fatal(err)
	}
}

// wantAuthError checks an official producer's error: Java's NO_PERMISSION
// and remark.
func wantAuthError(t testing.TB, err error, remark string) {
	t.Helper()
	if err == nil {
		t.Fatalf("sent; want refused with %q", remark)
	}
	if want := "CODE: 16, DESC: " + remark; !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q, want it to contain %q", err, want)
	}
}

// TestAuthUsersAndRulesFromRunnelctl manages ACL 2.0 with runnelctl against
// a running broker and sends with the official producer after each
// change: a user created can send where a rule lets it, a Deny rule and
// a missing rule refuse with Java's remark and store nothing, a prefixed
// rule covers the topics it prefixes, and deleting a rule or the user
// takes effect at once.
func TestAuthUsersAndRulesFromRunnelctl(t *testing.T) {
	c := startAuthCluster(t)
	createTopicsAs(t, c, authRootAK, authRootSK, "orders", "shop-books", "shop-secret", "other")
	ctl := mustRunnelctl(t, c.NamesrvAddr())
	asRoot := []string{"--ak", authRootAK, "--sk", authRootSK}
	ctl(append(asRoot, "user", "create", "alice", "--password", "aliceSecret1")...)
	ctl(append(asRoot, "acl", "create", "alice", "--resource", "Topic:orders,Topic:shop*", "--actions", "Pub")...)
	ctl(append(asRoot, "acl", "create", "User:alice", "--resource", "Topic:shop-secret", "--actions", "Pub", "--decision", "Deny")...)
	if out := ctl(append(asRoot, "acl", "get", "alice")...); !strings.Contains(out, "Topic:shop*") || !strings.Contains(out, "Deny") {
		t.Fatalf("acl get:\n%s", out)
	}

	alice := aclProducer(t, c, &primitive.Credentials{AccessKey: "alice", SecretKey: "aliceSecret1"})
	for _, topic := range []string{"orders", "shop-books"} {
		if err := sendOne(alice, topic); err != nil {
			t.Fatalf("alice sends to %s: %v", topic, err)
		}
	}
	wantAuthError(t, sendOne(alice, "shop-secret"),
		"User:alice has no permission to access Topic:shop-secret from 127.0.0.1, the decision is deny.")
	wantAuthError(t, sendOne(alice, "other"),
		"User:alice has no permission to access Topic:other from 127.0.0.1, no matched policies.")
	wrong := aclProducer(t, c, &primitive.Credentials{AccessKey: "alice", SecretKey: "not-hers"})
	wantAuthError(t, sendOne(wrong, "orders"), "check signature failed.")
	for topic, want := range map[string]int64{"orders": 1, "shop-books": 1, "shop-secret": 0, "other": 0} {
		if n := stored(c, topic); n != want {
			t.Errorf("%s holds %d messages, want %d", topic, n, want)
		}
	}

	// A normal user cannot manage users: that needs Update on the cluster.
	run := runnelctl(t, c.NamesrvAddr())
	_, errOut, err := run("--ak", "alice", "--sk", "aliceSecret1", "user", "create", "mallory", "--password", "x")
	if err == nil || !strings.Contains(errOut, "User:alice has no permission to access Cluster:"+c.Broker(0).Config().ClusterName) {
		t.Fatalf("alice creating a user: err %v, stderr %s", err, errOut)
	}

	// Deleting the rule for orders refuses the next send, no restart.
	ctl(append(asRoot, "acl", "delete", "alice", "--resource", "Topic:orders")...)
	wantAuthError(t, sendOne(alice, "orders"),
		"User:alice has no permission to access Topic:orders from 127.0.0.1, no matched policies.")
	if err := sendOne(alice, "shop-books"); err != nil {
		t.Fatalf("the prefixed rule went with the deleted one: %v", err)
	}
	// Deleting the user refuses its signature altogether.
	ctl(append(asRoot, "user", "delete", "alice")...)
	wantAuthError(t, sendOne(alice, "shop-books"), "User:alice is not found.")
	if n := stored(c, "orders"); n != 1 {
		t.Errorf("orders holds %d messages after the refusals, want 1", n)
	}
	if out := ctl(append(asRoot, "user", "list")...); strings.Contains(out, "alice") || !strings.Contains(out, authRootAK) {
		t.Fatalf("user list after deleting alice:\n%s", out)
	}
}

// TestAuthRecordsSurviveRestart checks that users and rules are stored
// (not only cached): after a restart on the same store they still decide.
func TestAuthRecordsSurviveRestart(t *testing.T) {
	c := startAuthCluster(t)
	createTopicsAs(t, c, authRootAK, authRootSK, "kept")
	root := aclAdmin(t, c, authRootAK, authRootSK)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	createUserWith(t, ctx, root, "bob", "bobSecret1", protocol.PolicyEntryInfo{Resource: "Topic:kept", Actions: []string{"Pub"}, Decision: "Allow"})
	c.RestartBroker(0)
	got, found, err := root.GetACL(ctx, ouradmin.Where{}, "User:bob")
	if err != nil || !found || len(got.Policies) != 1 || got.Policies[0].Entries[0].Resource != "Topic:kept" {
		t.Fatalf("acl of bob after restart: %+v found %v err %v", got, found, err)
	}
	bob := aclProducer(t, c, &primitive.Credentials{AccessKey: "bob", SecretKey: "bobSecret1"})
	if err := sendOne(bob, "kept"); err != nil {
		t.Fatalf("bob after restart: %v", err)
	}
}
