package integration

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// benchKills is how many leader kills BenchmarkGroupFailover makes per
// iteration: RUNNEL_BENCH_KILLS, default 20 (the figure).
func benchKills() int { return envCount("RUNNEL_BENCH_KILLS", 20) }

// BenchmarkGroupFailover kills the master of a 3-node group (raft over
// loopback TCP, the LAN timeouts of replica.DefaultConfig) benchKills()
// times and measures, from each kill, the time until the name server lists
// another node as broker-a's master, and until our client's first
// acknowledged send (sending in a loop from the kill on, its fast route
// refresh doing the rest). Between kills the killed node restarts and
// catches up as a slave. Reported: median, p90 and max of both, in ms.
//
//	go test -run '^$' -bench BenchmarkGroupFailover -benchtime 1x ./integration
func BenchmarkGroupFailover(b *testing.B) {
	c := rcCluster(b, cluster.Group(3), cluster.RaftOverTCP())
	p := rcProducer(b, c)
	send := func(body string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		res, err := p.Send(ctx, &client.Message{Topic: "Failover", Body: []byte(body)})
		if err == nil && res.Status != client.SendOK {
			err = fmt.Errorf("status %v", res.Status)
		}
		return err
	}
	testwait.Until(b, 30*time.Second, "a first send acknowledged", func() error { return send("first") })
	var toMaster, toSend []time.Duration
	var quits []chan struct{}
	defer func() {
		for _, q := range quits {
			close(q)
		}
	}()
	b.ResetTimer()
	for range b.N {
		for k := range benchKills() {
			old := c.Leader()
			steady(b, c, old)
			oldAddr := c.BrokerAddr(old)
			t0 := time.Now()
			c.KillBroker(old)
			listed, quit := make(chan time.Duration, 1), make(chan struct{})
			go func() {
				// The name server is in-process: a tight poll costs a
				// map read.
				for {
					if a := groupAddrs(c)[protocol.MasterID]; a != "" && a != oldAddr {
						listed <- time.Since(t0)
						return
					}
					select {
					case <-quit: // the benchmark failed
						return
					case <-time.After(time.Millisecond):
					}
				}
			}()
			quits = append(quits, quit)
			for i := 0; send(fmt.Sprintf("k%d-%d", k, i)) != nil; i++ {
				if time.Since(t0) > 30*time.Second {
					b.Fatalf("kill %d: no acknowledged send in 30 s", k)
				}
			}
			toSend = append(toSend, time.Since(t0))
			select {
			case d := <-listed:
				toMaster = append(toMaster, d)
			case <-time.After(30 * time.Second):
				b.Fatalf("kill %d: no new master listed in 30 s", k)
			}
			c.StartBroker(old)
		}
	}
	b.StopTimer()
	report := func(name string, ds []time.Duration) {
		slices.Sort(ds)
		ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
		b.ReportMetric(ms(ds[len(ds)/2]), name+"-median-ms")
		b.ReportMetric(ms(ds[len(ds)*9/10]), name+"-p90-ms")
		b.ReportMetric(ms(ds[len(ds)-1]), name+"-max-ms")
	}
	report("master", toMaster)
	report("send", toSend)
	b.ReportMetric(0, "ns/op") // a kill series, not an operation
}

// steady waits until node master is the only one listed master, every
// node runs, and every slave has applied all the master committed: the
// state before a kill.
func steady(b *testing.B, c *cluster.Cluster, master int) {
	b.Helper()
	testwait.Until(b, 30*time.Second, "the group steady", func() error {
		addrs := groupAddrs(c)
		if addrs[protocol.MasterID] != c.BrokerAddr(master) || len(addrs) != c.Brokers() {
			return fmt.Errorf("listed %v", addrs)
		}
		ms, _ := c.Broker(master).ReplicaStatus()
		for i := range c.Brokers() {
			if i == master {
				continue
			}
			if s, _ := c.Broker(i).ReplicaStatus(); s.AppliedIndex < ms.CommitIndex {
				return fmt.Errorf("node %d applied %d < commit %d", i, s.AppliedIndex, ms.CommitIndex)
			}
		}
		return nil
	})
}
