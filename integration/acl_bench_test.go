package integration

import (
	"context"
	"testing"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/client"
	ouradmin "github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/interleave"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// BenchmarkSendACL measures send throughput with ACL off and on: 1 KiB
// messages sent synchronously by 16 goroutines with our client's producer.
// With ACL the client signs every request (HMAC-SHA1 over the ext fields
// and the body) and the broker checks the signature and the topic
// permission before the handler. Compare the msg/s of the two:
//
//	go test -run '^$' -bench SendACL -benchtime 20000x ./integration/
//
// acl=v2 is ACL 2.0 (authentication and authorization on, a normal user
// with a rule allowing Pub on the topic) in place of plain ACL.
func BenchmarkSendACL(b *testing.B) {
	for _, mode := range []string{"false", "true", "v2"} {
		b.Run("acl="+mode, func(b *testing.B) {
			p := aclBenchProducer(b, mode)
			body := make([]byte, 1024)
			msg := func() *client.Message { return &client.Message{Topic: "aclTopic", Body: body} }
			b.SetBytes(int64(len(body)))
			b.SetParallelism(8)
			cpu0 := processCPU(b)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := p.Send(context.Background(), msg()); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msg/s")
			// CPU per message (client and broker, one process) is what ACL
			// adds; wall-clock msg/s on a shared machine mostly measures the
			// neighbours.
			b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/msg")
		})
	}
}

// BenchmarkSendACLSideBySide sends as BenchmarkSendACL does to three
// clusters in one process, ACL off, plain ACL and ACL 2.0, in alternating
// slices of 200 sends (internal/interleave), so a loaded machine's
// changing load lands on all three alike. plain/off and v2/off are the
// throughput ratios over the whole run (the goal is >= 0.95), the
// -median ones the medians of the slices' ratios. b.N is the number of
// sends to each cluster:
//
//	go test -run '^$' -bench SendACLSideBySide -benchtime 30000x ./integration/
func BenchmarkSendACLSideBySide(b *testing.B) {
	body := make([]byte, 1024)
	var sends []func() error
	for _, mode := range []string{"false", "true", "v2"} {
		p := aclBenchProducer(b, mode)
		sends = append(sends, func() error {
			_, err := p.Send(context.Background(), &client.Message{Topic: "aclTopic", Body: body})
			return err
		})
	}
	b.ResetTimer()
	res, err := interleave.Run(b.N, 200, 16, sends)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(res.Ratio(1), "plain/off")
	b.ReportMetric(res.MedianRatio(1), "plain/off-median")
	b.ReportMetric(res.Ratio(2), "v2/off")
	b.ReportMetric(res.MedianRatio(2), "v2/off-median")
}

// aclBenchProducer starts a cluster with ACL off ("false"), plain ACL
// ("true": an account allowed PUB on the topic) or ACL 2.0 ("v2": a normal
// user allowed Pub on it by a rule), creates topic aclTopic, and returns a
// started producer signing as that account, its route warm.
func aclBenchProducer(b *testing.B, mode string) *client.Producer {
	b.Helper()
	var c *cluster.Cluster
	var creds acl.Credentials
	switch mode {
	case "true":
		c, _ = startACLCluster(b, aclYAML("", "DENY"), lenientNamesrvYAML)
		creds = acl.Credentials{AccessKey: aclUserAK, SecretKey: aclUserSK}
		aclCreateTopicsAs(b, c, "aclTopic", true)
	case "v2":
		c = startAuthCluster(b)
		createTopicsAs(b, c, authRootAK, authRootSK, "aclTopic")
		root := aclAdmin(b, c, authRootAK, authRootSK)
		ctx := context.Background()
		if _, err := root.CreateUser(ctx, ouradmin.Where{}, protocol.UserInfo{Username: "benchUser", Password: "benchSecret1"}); err != nil {
			b.Fatal(err)
		}
		if _, err := root.CreateACL(ctx, ouradmin.Where{}, protocol.ACLInfo{Subject: "User:benchUser", Policies: []protocol.PolicyInfo{{
			Entries: []protocol.PolicyEntryInfo{{Resource: "Topic:aclTopic", Actions: []string{"Pub"}, Decision: "Allow"}}}}}); err != nil {
			b.Fatal(err)
		}
		creds = acl.Credentials{AccessKey: "benchUser", SecretKey: "benchSecret1"}
	default:
		c = cluster.Start(b)
		aclCreateTopicsAs(b, c, "aclTopic", false)
	}
	p := rcProducerWith(b, c, func(cfg *client.ProducerConfig) { cfg.Client.Credentials = creds })
	if _, err := p.Send(context.Background(), &client.Message{Topic: "aclTopic", Body: make([]byte, 1024)}); err != nil { // routes and connection warm
		b.Fatal(err)
	}
	return p
}

// aclCreateTopicsAs creates topic with 2 queues, signed by the admin when
// the cluster has ACL.
func aclCreateTopicsAs(b *testing.B, c *cluster.Cluster, topic string, signed bool) {
	if signed {
		aclCreateTopics(b, c, topic)
		return
	}
	a := aclAdmin(b, c, "", "")
	if _, err := a.CreateTopic(context.Background(), ouradmin.TopicSpec{Topic: topic, ReadQueueNums: 2, WriteQueueNums: 2}); err != nil {
		b.Fatal(err)
	}
}
