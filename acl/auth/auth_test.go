package auth

import (
	"errors"
	"fmt"
	"testing"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/internal/frametest"
	"github.com/runnelmq/runnel/remoting/protocol"
)

func newMemStore() *MemStore { return NewMemStore() }

const remote = "10.1.2.3:51234"

func open(t *testing.T, st Store) *Manager {
	t.Helper()
	m, err := Open(Config{AuthenticationEnabled: true, AuthorizationEnabled: true,
		InitUsers: []protocol.UserInfo{{Username: "root", Password: "rootSecret"}}}, st)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func signed(ak, sk string, code int16, ext map[string]string) *protocol.Command {
	req := protocol.NewRequest(code, ext, []byte("body"))
	if ak != "" {
		acl.Credentials{AccessKey: ak, SecretKey: sk}.Sign(req)
	}
	return req
}

func send(ak, sk, topic string) *protocol.Command {
	return signed(ak, sk, protocol.ReqSendMessageV2, map[string]string{"a": "pg", "b": topic})
}

// testCodes map the requests these tests send as the broker's remoting
// door does (its table is tested there); runtime info stands for a code
// that needs nothing.
var testCodes = acl.Codes{
	protocol.ReqSendMessageV2: func(dst []acl.Need, _ *protocol.Command, f acl.Fields) ([]acl.Need, error) {
		return append(dst, acl.TopicNeed(f.View("b"), acl.Pub)), nil
	},
	protocol.ReqPullMessage: func(dst []acl.Need, _ *protocol.Command, f acl.Fields) ([]acl.Need, error) {
		return append(dst, acl.TopicNeed(f.View("topic"), acl.Sub), acl.GroupNeed(f.View("consumerGroup"), acl.Sub)), nil
	},
	protocol.ReqAuthCreateUser: func(dst []acl.Need, _ *protocol.Command, _ acl.Fields) ([]acl.Need, error) {
		return append(dst, acl.ClusterNeed("DefaultCluster", acl.Update)), nil
	},
	protocol.ReqGetBrokerConfig: func(dst []acl.Need, _ *protocol.Command, _ acl.Fields) ([]acl.Need, error) {
		return append(dst, acl.ClusterNeed("DefaultCluster", acl.Get)), nil
	},
	protocol.ReqGetBrokerRuntimeInfo: func(dst []acl.Need, _ *protocol.Command, _ acl.Fields) ([]acl.Need, error) { return dst, nil },
}

// check decides req from remote with m alone, its needs from testCodes.
func check(m *Manager, remote string, req *protocol.Command) error {
	return acl.NewCheckpoint(acl.Guard{m}, testCodes, "DefaultCluster").Check(remote, req)
}

func wantRefusal(t *testing.T, err error, code int16, msg string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Code != code || e.Msg != msg {
		t.Fatalf("got %v, want code %d %q", err, code, msg)
	}
}

func entry(resource string, decision string, actions ...string) protocol.PolicyEntryInfo {
	return protocol.PolicyEntryInfo{Resource: resource, Actions: actions, Decision: decision}
}

func TestAuthenticate(t *testing.T) {
	m := open(t, newMemStore())
	if err := m.CreateUser(protocol.UserInfo{Username: "alice", Password: "aliceSecret"}, "root"); err != nil {
		t.Fatal(err)
	}
	if err := check(m, remote, send("root", "rootSecret", "anything")); err != nil {
		t.Fatalf("super user: %v", err)
	}
	wantRefusal(t, check(m, remote, send("", "", "t")), protocol.RespNoPermission, "username cannot be null.")
	wantRefusal(t, check(m, remote, send("bob", "x", "t")), protocol.RespNoPermission, "User:bob is not found.")
	wantRefusal(t, check(m, remote, send("alice", "wrong", "t")), protocol.RespNoPermission, "check signature failed.")
	if err := m.UpdateUser(protocol.UserInfo{Username: "alice", UserStatus: "disable"}, "root"); err != nil {
		t.Fatal(err)
	}
	wantRefusal(t, check(m, remote, send("alice", "aliceSecret", "t")), protocol.RespNoPermission, "User:alice is disabled.")
}

func TestAuthorizeMostSpecificWins(t *testing.T) {
	m := open(t, newMemStore())
	if err := m.CreateUser(protocol.UserInfo{Username: "alice", Password: "pw"}, "root"); err != nil {
		t.Fatal(err)
	}
	err := m.PutACL("User:alice", protocol.ACLInfo{Policies: []protocol.PolicyInfo{{Entries: []protocol.PolicyEntryInfo{
		entry("Topic:order*", "Allow", "Pub"),
		entry("Topic:orders-secret", "Deny", "Pub"), // literal beats the prefix
		entry("Topic:orders-a*", "Deny", "Pub"),     // a longer prefix beats a shorter
		entry("Topic:both", "Allow", "Pub"),
		entry("Topic:*", "Allow", "Sub"),
	}}}})
	if err != nil {
		t.Fatal(err)
	}
	// An any-resource rule ranks below every typed one: it decides only
	// where none of them matches.
	if err := m.PutACL("User:alice", protocol.ACLInfo{Policies: []protocol.PolicyInfo{{Entries: []protocol.PolicyEntryInfo{
		entry("*", "Deny", "Pub"),
	}}}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ topic, detail string }{
		{"orders", ""},
		{"orders-b", ""},
		{"both", ""},
		{"orders-secret", "the decision is deny."},
		{"orders-abc", "the decision is deny."},
		{"invoices", "the decision is deny."}, // only "*" Deny matches Pub
	} {
		err := check(m, remote, send("alice", "pw", tc.topic))
		// As the broker's interceptor sees it: decoded from the wire, ext
		// fields undecoded, and left so (UndecodedExt).
		got := wire(t, send("alice", "pw", tc.topic))
		if werr := check(m, remote, got); fmt.Sprint(werr) != fmt.Sprint(err) || got.ExtFields != nil {
			t.Errorf("send to %s from the wire: %v (ext decoded: %v), want %v", tc.topic, werr, got.ExtFields != nil, err)
		}
		if tc.detail == "" {
			if err != nil {
				t.Errorf("send to %s: %v", tc.topic, err)
			}
			continue
		}
		wantRefusal(t, err, protocol.RespNoPermission,
			"User:alice has no permission to access Topic:"+tc.topic+" from 10.1.2.3, "+tc.detail)
	}
	// A pull needs Sub on the topic and the group: Topic:* grants the
	// first, nothing the second.
	pull := signed("alice", "pw", protocol.ReqPullMessage, map[string]string{"topic": "orders", "consumerGroup": "g1"})
	wantRefusal(t, check(m, remote, pull), protocol.RespNoPermission,
		"User:alice has no permission to access Group:g1 from 10.1.2.3, no matched policies.")
	// Admin requests need the cluster.
	create := signed("alice", "pw", protocol.ReqAuthCreateUser, map[string]string{"username": "x"})
	wantRefusal(t, check(m, remote, create), protocol.RespNoPermission,
		"User:alice has no permission to access Cluster:DefaultCluster from 10.1.2.3, no matched policies.")
}

func TestSourceIPsAndDefaultPolicy(t *testing.T) {
	m := open(t, newMemStore())
	_ = m.CreateUser(protocol.UserInfo{Username: "u", Password: "pw"}, "")
	e := entry("Topic:t", "Allow", "Pub")
	e.SourceIps = []string{"10.1.0.0/16"}
	if err := m.PutACL("User:u", protocol.ACLInfo{Policies: []protocol.PolicyInfo{
		{Entries: []protocol.PolicyEntryInfo{e}},
		{PolicyType: "Default", Entries: []protocol.PolicyEntryInfo{entry("Topic:t", "Deny", "All")}},
	}}); err != nil {
		t.Fatal(err)
	}
	if err := check(m, "10.1.9.9:1", send("u", "pw", "t")); err != nil {
		t.Fatalf("inside the range: %v", err)
	}
	// Outside it the Custom entry does not match, so the Default one decides.
	wantRefusal(t, check(m, "192.168.0.1:1", send("u", "pw", "t")), protocol.RespNoPermission,
		"User:u has no permission to access Topic:t from 192.168.0.1, the decision is deny.")
}

func TestAdminErrors(t *testing.T) {
	m := open(t, newMemStore())
	wantRefusal(t, m.CreateUser(protocol.UserInfo{}, "root"), protocol.RespInvalidParameter, "The username is blank")
	wantRefusal(t, m.CreateUser(protocol.UserInfo{Username: "root", Password: "x"}, "root"), protocol.RespNoPermission, "The user is existed")
	wantRefusal(t, m.CreateUser(protocol.UserInfo{Username: "n"}, "root"), protocol.RespNoPermission, "password can not be blank")
	if err := m.CreateUser(protocol.UserInfo{Username: "n", Password: "x"}, "root"); err != nil {
		t.Fatal(err)
	}
	wantRefusal(t, m.CreateUser(protocol.UserInfo{Username: "s", Password: "x", UserType: "Super"}, "n"),
		protocol.RespSystemError, "The super user can only be create by super user")
	wantRefusal(t, m.DeleteUser("root", "n"), protocol.RespNoPermission, "The super user can only be update by super user")
	wantRefusal(t, m.PutACL("User:ghost", protocol.ACLInfo{Policies: []protocol.PolicyInfo{{Entries: []protocol.PolicyEntryInfo{entry("Topic:t", "Allow", "Pub")}}}}),
		protocol.RespNoPermission, "The subject of User:ghost is not exist.")
	wantRefusal(t, m.PutACL("User:n", protocol.ACLInfo{Policies: []protocol.PolicyInfo{{Entries: []protocol.PolicyEntryInfo{entry("Topic:t", "Allow", "Any")}}}}),
		protocol.RespNoPermission, "The actions can not be Any.")
	wantRefusal(t, m.PutACL("User:n", protocol.ACLInfo{Policies: []protocol.PolicyInfo{{Entries: []protocol.PolicyEntryInfo{entry("Topic:t", "Maybe", "Pub")}}}}),
		protocol.RespNoPermission, "The decision is null or illegal.")
	wantRefusal(t, m.DeleteACL("User:n", "", ""), protocol.RespNoPermission, "The acl is not exist.")
}

// TestReloadOnVersion checks that records written by another path (a
// replica applying the group's log) take effect at the next check.
func TestReloadOnVersion(t *testing.T) {
	st := newMemStore()
	m := open(t, st)
	other := open(t, st) // a second manager over the same records
	if err := other.CreateUser(protocol.UserInfo{Username: "late", Password: "pw"}, ""); err != nil {
		t.Fatal(err)
	}
	if err := other.PutACL("User:late", protocol.ACLInfo{Policies: []protocol.PolicyInfo{{Entries: []protocol.PolicyEntryInfo{entry("Topic:t", "Allow", "Pub")}}}}); err != nil {
		t.Fatal(err)
	}
	if err := check(m, remote, send("late", "pw", "t")); err != nil {
		t.Fatalf("after another writer: %v", err)
	}
	if err := other.DeleteACL("User:late", "", "Topic:t"); err != nil {
		t.Fatal(err)
	}
	wantRefusal(t, check(m, remote, send("late", "pw", "t")), protocol.RespNoPermission,
		"User:late has no permission to access Topic:t from 10.1.2.3, no matched policies.")
	if _, ok, _ := m.GetACL("User:late"); ok {
		t.Error("the ACL with its last entry deleted is still there")
	}
}

func TestApplyKey(t *testing.T) {
	var c Config
	for _, kv := range [][2]string{
		{"authenticationEnabled", "true"}, {"authorizationEnabled", "true"},
		{"initAuthenticationUser", `{"username":"rocketmq","password":"12345678"}`},
		{"innerClientAuthenticationCredentials", `{"accessKey":"inner","secretKey":"innerSecret"}`},
		{"authenticationWhitelist", "28, 11"},
		{"authenticationProvider", "org.apache.rocketmq.auth.authentication.provider.DefaultAuthenticationProvider"},
	} {
		if ok, err := c.ApplyKey(kv[0], kv[1]); !ok || err != nil {
			t.Fatalf("%s=%s: %v %v", kv[0], kv[1], ok, err)
		}
	}
	if !c.AuthenticationEnabled || !c.AuthorizationEnabled || len(c.InitUsers) != 1 || c.InitUsers[0].Password != "12345678" ||
		c.InnerCredentials.AccessKey != "inner" || len(c.AuthenticationWhitelist) != 2 {
		t.Fatalf("config %+v", c)
	}
	if ok, err := c.ApplyKey("authenticationProvider", "com.example.Mine"); !ok || err == nil {
		t.Error("an unknown provider was accepted")
	}
	if ok, _ := c.ApplyKey("brokerName", "b"); ok {
		t.Error("brokerName taken as an auth key")
	}
	st := newMemStore()
	m, err := Open(c, st)
	if err != nil {
		t.Fatal(err)
	}
	// The inner account is a super user: it passes authorization.
	if err := check(m, remote, signed("inner", "innerSecret", protocol.ReqAuthCreateUser, map[string]string{"username": "x"})); err != nil {
		t.Fatalf("inner account: %v", err)
	}
	// A whitelisted code passes unsigned (runtime info needs nothing in testCodes);
	// another does not.
	if err := check(m, remote, protocol.NewRequest(protocol.ReqGetBrokerRuntimeInfo, nil, nil)); err != nil {
		t.Errorf("whitelisted code: %v", err)
	}
	wantRefusal(t, check(m, remote, protocol.NewRequest(protocol.ReqGetBrokerConfig, nil, nil)),
		protocol.RespNoPermission, "username cannot be null.")
}

// wire returns req as a server decodes it, in RocketMQ's binary encoding.
func wire(t *testing.T, req *protocol.Command) *protocol.Command {
	t.Helper()
	req.SerializeType = protocol.SerializeRocketMQ
	return frametest.Reframe(t, req)
}
