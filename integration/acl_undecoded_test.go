package integration

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

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
