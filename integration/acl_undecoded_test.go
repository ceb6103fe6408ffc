package integration

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/broker"
	"github.com/runnelmq/runnel/client"
	ouradmin "github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// TestACLChecksLeaveSendHeadersUndecoded sends a signed message through a
// broker with plain ACL and one with ACL 2.0, each with a probe after its
// own interceptors, and checks that the send reached the probe with its ext
// fields still undecoded: an ACL interceptor without UndecodedExt makes the
// server build every send's map before its check, which the typed send
// header exists to avoid.
func TestACLChecksLeaveSendHeadersUndecoded(t *testing.T) {
	for _, mode := range []string{"plain", "v2"} {
		t.Run(mode, func(t *testing.T) {
			var sends, decoded atomic.Int32
			probe := cluster.Configure(func(_ int, cfg *broker.Config) {
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
				root := aclAdmin(t, c, authRootAK, authRootSK)
				if _, err := root.CreateTopic(context.Background(), ouradmin.TopicSpec{Topic: "aclTopic", ReadQueueNums: 2, WriteQueueNums: 2}); err != nil {
					t.Fatal(err)
				}
			}
			cfg := client.DefaultProducerConfig()
			cfg.Client.NameServerAddrs = []string{c.NamesrvAddr()}
			cfg.Client.InstanceName = instance("acl-undecoded")
			cfg.Client.Credentials = creds
			p, err := client.NewProducer(cfg)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if err := p.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer p.Shutdown(ctx)
			for range 3 {
				if _, err := p.Send(ctx, &client.Message{Topic: "aclTopic", Body: []byte("signed")}); err != nil {
					t.Fatal(err)
				}
			}
			if sends.Load() != 3 || decoded.Load() != 0 {
				t.Fatalf("probe saw %d sends, %d with ext fields decoded; want 3, 0", sends.Load(), decoded.Load())
			}
		})
	}
}
