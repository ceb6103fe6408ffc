package integration

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/client"
	ouradmin "github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/clitest"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/namesrv"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// The accounts of the ACL tests. The broker signs with the admin account;
// 127.0.0.1 (every client here) is in no white list, except the account
// whiteAK's, so everything else must be signed and permitted.
const (
	aclAdminAK, aclAdminSK = "brokerAdmin", "brokerSecret1"
	aclUserAK, aclUserSK   = "producerAK", "producerSK1"
	aclWhiteAK             = "whiteAK1"
	aclRemarkPrefix        = "org.apache.rocketmq.acl.common.AclException: "
)

func aclYAML(extraGlobal, deniedTopicPerm string) string {
	return `globalWhiteRemoteAddresses:
  - 10.255.255.*
` + extraGlobal + `accounts:
  - accessKey: ` + aclAdminAK + `
    secretKey: ` + aclAdminSK + `
    admin: true
  - accessKey: ` + aclUserAK + `
    secretKey: ` + aclUserSK + `
    defaultTopicPerm: DENY
    defaultGroupPerm: SUB
    topicPerms:
      - aclTopic=PUB|SUB
      - deniedTopic=` + deniedTopicPerm + `
    groupPerms:
      - deniedGroup=DENY
  - accessKey: ` + aclWhiteAK + `
    secretKey: whiteSecret1
    whiteRemoteAddress: 127.0.0.1
`
}

// lenientNamesrvYAML lets every loopback client through the name server, so
// that the broker's refusals are what the tests see.
const lenientNamesrvYAML = "globalWhiteRemoteAddresses: [127.0.0.1]\n"

// writeACL writes a plain_acl.yml the way an operator's editor would
// (replace, not truncate in place), so a poll never reads half a file.
func writeACL(t testing.TB, file, yaml string) {
	t.Helper()
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, file); err != nil {
		t.Fatal(err)
	}
}

// startACLCluster starts a cluster whose broker checks brokerYAML and
// whose name server checks nsYAML; the broker signs with the admin
// account. It returns the broker's plain_acl.yml path.
func startACLCluster(t testing.TB, brokerYAML, nsYAML string, more ...cluster.Option) (*cluster.Cluster, string) {
	t.Helper()
	dir := t.TempDir()
	bfile, nfile := filepath.Join(dir, "plain_acl.yml"), filepath.Join(dir, "namesrv_acl.yml")
	writeACL(t, bfile, brokerYAML)
	writeACL(t, nfile, nsYAML)
	opts := append([]cluster.Option{
		cluster.ConfigureNamesrv(func(cfg *namesrv.Config) { cfg.ACLFile = nfile }),
		cluster.Configure(func(_ int, cfg *config.Config) {
			cfg.ACLEnable, cfg.ACLFile = true, bfile
			cfg.Credentials = acl.Credentials{AccessKey: aclAdminAK, SecretKey: aclAdminSK}
		})}, more...)
	return cluster.Start(t, opts...), bfile
}

// aclAdmin is our admin client signing with ak/sk.
func aclAdmin(t testing.TB, c *cluster.Cluster, ak, sk string) *ouradmin.Admin {
	t.Helper()
	return c.AdminAs(t, acl.Credentials{AccessKey: ak, SecretKey: sk})
}

func aclCreateTopics(t testing.TB, c *cluster.Cluster, topics ...string) {
	t.Helper()
	createTopicsAs(t, c, aclAdminAK, aclAdminSK, topics...)
}

// createTopicsAs creates topics with 2 queues each, signed with ak/sk (an
// admin account, or an ACL 2.0 super user).
func createTopicsAs(t testing.TB, c *cluster.Cluster, ak, sk string, topics ...string) {
	t.Helper()
	a := aclAdmin(t, c, ak, sk)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, topic := range topics {
		if _, err := a.CreateTopic(ctx, ouradmin.TopicSpec{Topic: topic, ReadQueueNums: 2, WriteQueueNums: 2}); err != nil {
			t.Fatalf("create topic %s as admin: %v", topic, err)
		}
	}
}

// stored is the number of messages the broker holds in topic.
func stored(c *cluster.Cluster, topic string) int64 {
	var n int64
	for q := int32(0); q < 2; q++ {
		n += c.Broker(0).Core().MaxOffset(topic, q)
	}
	return n
}

func aclProducer(t testing.TB, c *cluster.Cluster, creds *primitive.Credentials) (p interface {
	SendSync(context.Context, ...*primitive.Message) (*primitive.SendResult, error)
}) {
	t.Helper()
	opts := []producer.Option{withNoRetry()}
	if creds != nil {
		opts = append(opts, producer.WithCredentials(*creds))
	}
	return newProducer(t, c, opts...)
}

func wantACLError(t testing.TB, err error, msg string) {
	t.Helper()
	if err == nil {
		t.Fatalf("succeeded, want refusal %q", msg)
	}
	if want := "CODE: 1, DESC: " + aclRemarkPrefix + msg; !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q, want one containing %q", err, want)
	}
}

func sendOne(p interface {
	SendSync(context.Context, ...*primitive.Message) (*primitive.SendResult, error)
}, topic string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := p.SendSync(ctx, primitive.NewMessage(topic, []byte("acl body")))
	if err == nil && res.Status != primitive.SendOK {
		err = errors.New("send status " + res.String())
	}
	return err
}

// TestACLSendRefusals sends with the official producer under every
// account shape: each refusal carries Java's code and remark, and nothing
// refused is stored.
func TestACLSendRefusals(t *testing.T) {
	c, _ := startACLCluster(t, aclYAML("", "DENY"), lenientNamesrvYAML)
	aclCreateTopics(t, c, "aclTopic", "deniedTopic", "otherTopic")

	good := aclProducer(t, c, &primitive.Credentials{AccessKey: aclUserAK, SecretKey: aclUserSK})
	if err := sendOne(good, "aclTopic"); err != nil {
		t.Fatalf("send with the right credentials: %v", err)
	}
	wantACLError(t, sendOne(good, "deniedTopic"), "No permission for topic:deniedTopic")
	wantACLError(t, sendOne(good, "otherTopic"), "No default permission for topic:otherTopic")

	// The official client sends a SecurityToken without signing it; that
	// passes, as Java's token-signing clients do.
	token := aclProducer(t, c, &primitive.Credentials{AccessKey: aclUserAK, SecretKey: aclUserSK, SecurityToken: "sts-token"})
	if err := sendOne(token, "aclTopic"); err != nil {
		t.Fatalf("send with a SecurityToken: %v", err)
	}

	wrong := aclProducer(t, c, &primitive.Credentials{AccessKey: aclUserAK, SecretKey: "not-the-secret"})
	wantACLError(t, sendOne(wrong, "aclTopic"), "Check signature failed for accessKey="+aclUserAK)

	unknown := aclProducer(t, c, &primitive.Credentials{AccessKey: "strangerAK", SecretKey: aclUserSK})
	wantACLError(t, sendOne(unknown, "aclTopic"), "No acl config for strangerAK")

	// Outside every white list, an unsigned client is refused.
	unsigned := aclProducer(t, c, nil)
	wantACLError(t, sendOne(unsigned, "aclTopic"), "No accessKey is configured")

	// Inside its account's white list a client passes whatever it signed,
	// as in Java: the white list grants, the signature is not checked.
	white := aclProducer(t, c, &primitive.Credentials{AccessKey: aclWhiteAK, SecretKey: "whatever-secret"})
	if err := sendOne(white, "otherTopic"); err != nil {
		t.Fatalf("send from the account's white list: %v", err)
	}

	if n := stored(c, "aclTopic"); n != 2 {
		t.Errorf("aclTopic holds %d messages, want the 2 accepted", n)
	}
	if n := stored(c, "deniedTopic"); n != 0 {
		t.Errorf("deniedTopic holds %d messages, want 0", n)
	}
	if n := stored(c, "otherTopic"); n != 1 {
		t.Errorf("otherTopic holds %d messages, want only the white-listed one", n)
	}
}

// TestACLAdminNeedsAdminAccount creates topics as a normal account and as
// the admin.
func TestACLAdminNeedsAdminAccount(t *testing.T) {
	c, _ := startACLCluster(t, aclYAML("", "DENY"), lenientNamesrvYAML)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	_, err := aclAdmin(t, c, aclUserAK, aclUserSK).CreateTopic(ctx, ouradmin.TopicSpec{Topic: "byUser"})
	var re *ouradmin.ResponseError
	if !errors.As(err, &re) || re.Code != protocol.RespSystemError ||
		re.Remark != aclRemarkPrefix+"Need admin permission for request code=17, but accessKey="+aclUserAK+" is not" {
		t.Fatalf("create topic as a normal account: %v", err)
	}

	if _, ok := c.Broker(0).Core().Topic("byUser"); ok {
		t.Error("topic byUser created by a normal account")
	}
	// (The official admin client signs none of its broker calls, so it
	// cannot be the normal account here: its CreateTopic goes unsigned.)

	if _, err := aclAdmin(t, c, aclAdminAK, aclAdminSK).CreateTopic(ctx, ouradmin.TopicSpec{Topic: "byAdmin"}); err != nil {
		t.Fatalf("create topic as the admin: %v", err)
	}
	if _, ok := c.Broker(0).Core().Topic("byAdmin"); !ok {
		t.Error("topic byAdmin not created by the admin account")
	}
}

// TestACLReload edits plain_acl.yml under a running broker: each change
// takes effect without a restart.
func TestACLReload(t *testing.T) {
	c, file := startACLCluster(t, aclYAML("", "DENY"), lenientNamesrvYAML)
	aclCreateTopics(t, c, "deniedTopic")
	p := aclProducer(t, c, &primitive.Credentials{AccessKey: aclUserAK, SecretKey: aclUserSK})
	wantACLError(t, sendOne(p, "deniedTopic"), "No permission for topic:deniedTopic")

	writeACL(t, file, aclYAML("", "PUB"))
	testwait.For(t, 30*time.Second, "deniedTopic=PUB to take effect", func() bool { return sendOne(p, "deniedTopic") == nil })

	unsigned := aclProducer(t, c, nil)
	wantACLError(t, sendOne(unsigned, "deniedTopic"), "No accessKey is configured")
	writeACL(t, file, aclYAML("  - 127.0.0.1\n", "PUB"))
	testwait.For(t, 30*time.Second, "127.0.0.1 in the global white list", func() bool { return sendOne(unsigned, "deniedTopic") == nil })

}

// TestACLNamesrv checks the name server: route queries must be signed,
// broker registration needs an admin account (the broker's registered,
// so its own signed registration passed).
func TestACLNamesrv(t *testing.T) {
	strict := aclYAML("", "DENY")
	c, _ := startACLCluster(t, strict, strict)
	aclCreateTopics(t, c, "aclTopic") // registers the topic through the name server

	call := func(creds acl.Credentials, code int16, ext map[string]string) *protocol.Command {
		t.Helper()
		return clitest.Call(t, c.NamesrvAddr(), creds, protocol.NewRequest(code, ext, nil))
	}
	user := acl.Credentials{AccessKey: aclUserAK, SecretKey: aclUserSK}
	route := map[string]string{"topic": "aclTopic"}
	if resp := call(user, protocol.ReqGetRouteInfoByTopic, route); resp.Code != protocol.RespSuccess {
		t.Fatalf("signed route query: %d %s", resp.Code, resp.Remark)
	}
	for _, tc := range []struct {
		name  string
		creds acl.Credentials
		code  int16
		want  string
	}{
		{"unsigned route query", acl.Credentials{}, protocol.ReqGetRouteInfoByTopic, "No accessKey is configured"},
		{"wrong secret", acl.Credentials{AccessKey: aclUserAK, SecretKey: "nope-nope"}, protocol.ReqGetRouteInfoByTopic, "Check signature failed for accessKey=" + aclUserAK},
		{"registration by a normal account", user, protocol.ReqRegisterBroker, "Need admin permission for request code=103, but accessKey=" + aclUserAK + " is not"},
	} {
		resp := call(tc.creds, tc.code, route)
		if resp.Code != protocol.RespSystemError || resp.Remark != aclRemarkPrefix+tc.want {
			t.Errorf("%s: %d %q, want 1 %q", tc.name, resp.Code, resp.Remark, aclRemarkPrefix+tc.want)
		}
	}

	// The official producer signs its name server queries too.
	p := aclProducer(t, c, &primitive.Credentials{AccessKey: aclUserAK, SecretKey: aclUserSK})
	if err := sendOne(p, "aclTopic"); err != nil {
		t.Fatalf("official producer through a name server with ACL: %v", err)
	}
}

// TestACLChecksLeaveSendHeadersUndecoded sends signed messages through a
// broker with plain ACL and one with ACL 2.0, each with a probe after its
// own interceptors, and checks that the sends reached the probe with their
// ext fields still undecoded: an ACL interceptor without UndecodedExt makes
// the server build every send's map before its check, which the typed send
// header exists to avoid. A send signed with a wrong secret must not reach
// the probe, so the check is known to run.
func TestACLChecksLeaveSendHeadersUndecoded(t *testing.T) {
	for _, mode := range []string{"plain", "v2"} {
		t.Run(mode, func(t *testing.T) {
			var sends, decoded atomic.Int32
			probe := cluster.Configure(func(_ int, cfg *config.Config) {
				cfg.Interceptors = append(cfg.Interceptors, remoting.Interceptor{
					UndecodedExt: true,
					Request: func(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
						if req.Code == protocol.ReqSendMessageV2 {
							sends.Add(1)
							if req.ExtFields != nil {
								decoded.Add(1)
							}
						}
						return nil
					},
				})
			})
			var c *cluster.Cluster
			var creds acl.Credentials
			if mode == "plain" {
				c, _ = startACLCluster(t, aclYAML("", "DENY"), lenientNamesrvYAML, probe)
				creds = acl.Credentials{AccessKey: aclUserAK, SecretKey: aclUserSK}
				aclCreateTopics(t, c, "aclTopic")
			} else {
				c = startAuthCluster(t, probe)
				creds = acl.Credentials{AccessKey: authRootAK, SecretKey: authRootSK}
				createTopicsAs(t, c, authRootAK, authRootSK, "aclTopic")
			}
			ctx := context.Background()
			msg := &client.Message{Topic: "aclTopic", Body: []byte("signed")}

			wrong := rcProducerWith(t, c, func(cfg *client.ProducerConfig) {
				cfg.Client.Credentials = acl.Credentials{AccessKey: creds.AccessKey, SecretKey: "wrong" + creds.SecretKey}
			})
			var be *client.BrokerError
			if _, err := wrong.Send(ctx, msg); !errors.As(err, &be) {
				t.Fatalf("send with a wrong secret: %v, want refused by the broker", err)
			}
			if n := sends.Load(); n != 0 {
				t.Fatalf("the probe saw %d sends signed with a wrong secret", n)
			}

			p := rcProducerWith(t, c, func(cfg *client.ProducerConfig) { cfg.Client.Credentials = creds })
			for range 3 {
				if _, err := p.Send(ctx, msg); err != nil {
					t.Fatal(err)
				}
			}
			if sends.Load() != 3 || decoded.Load() != 0 {
				t.Fatalf("probe saw %d sends, %d with ext fields decoded; want 3, 0", sends.Load(), decoded.Load())
			}
		})
	}
}
