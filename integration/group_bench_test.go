package integration

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/remoting/protocol"
	"github.com/runnelmq/runnel/store"
)

// BenchmarkGroupSend compares a 3-node group (raft over loopback TCP) with
// a single broker: 16 concurrent senders of our client, 1 KiB bodies, each
// send answered once stored (for the group: committed by a majority and
// applied on the master). durability=async is the single broker's
// ASYNC_FLUSH beside a raft log written without fsync; durability=sync is
// SYNC_FLUSH beside a raft log fsynced per write batch. It reports
// messages per second, the p99 send latency and the process's CPU per
// message; the goal is
// nodes=3 at 0.6x or more of nodes=1's throughput.
//
//	go test -run '^$' -bench BenchmarkGroupSend -benchtime 5000x ./integration
func BenchmarkGroupSend(b *testing.B) {
	for _, durability := range []string{"async", "sync"} {
		for _, nodes := range []int{1, 3} {
			b.Run(fmt.Sprintf("durability=%s/nodes=%d", durability, nodes), func(b *testing.B) {
				opts := []cluster.Option{cluster.Configure(func(_ int, cfg *config.Config) {
					if durability == "sync" {
						cfg.FlushMode = store.SyncFlush
						cfg.Replication.LogNoSync = false
					}
				})}
				if nodes > 1 {
					opts = append(opts, cluster.Group(nodes), cluster.RaftOverTCP())
				}
				c := rcCluster(b, opts...)
				leader := -1
				if nodes > 1 {
					leader = c.Leader()
				}
				// raftIndex is the leader's last raft index: the entries a
				// run proposed (a leader change mid-run makes it moot).
				raftIndex := func() uint64 {
					if leader < 0 {
						return 0
					}
					return c.Broker(leader).Node().Status().LastIndex
				}
				p := rcProducer(b, c)
				body := make([]byte, 1024)
				send := func() error {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					_, err := p.Send(ctx, &client.Message{Topic: "GroupBench", Body: body})
					return err
				}
				// The topic and its route (a new group's master registers
				// once elected).
				testwait.Until(b, 30*time.Second, "a first send acknowledged", send)
				const senders = 16
				// On a loaded machine a group may change leader mid-run (a
				// missed heartbeat); a refused send is sent again, counted
				// (100 immediate tries used to run out before the new master
				// was listed, failing the run).
				var next, resent atomic.Int64
				lats := make([][]time.Duration, senders)
				b.SetBytes(int64(len(body)))
				b.ResetTimer()
				cpu0, index0 := processCPU(b), raftIndex()
				start := time.Now()
				var wg sync.WaitGroup
				for s := range senders {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for next.Add(1) <= int64(b.N) {
							t0 := time.Now()
							// Until the new master is elected and listed
							// (about a second; more under load), with a
							// pause so that the tries outlast it.
							for err := send(); err != nil; err = send() {
								if time.Since(t0) > 30*time.Second {
									b.Errorf("a send refused for 30 s: %v", err)
									return
								}
								resent.Add(1)
								time.Sleep(10 * time.Millisecond)
							}
							lats[s] = append(lats[s], time.Since(t0))
						}
					}()
				}
				wg.Wait()
				elapsed := time.Since(start)
				cpu, entries := processCPU(b)-cpu0, raftIndex()-index0
				b.StopTimer()
				all := slices.Concat(lats...)
				slices.Sort(all)
				if len(all) > 0 {
					b.ReportMetric(float64(len(all))/elapsed.Seconds(), "msgs/s")
					b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
					b.ReportMetric(float64(resent.Load()), "resent")
					// CPU of the whole process (client, name server and
					// every node) per message: on a loaded 2-core machine
					// throughput follows the CPU share the process gets,
					// this does not.
					b.ReportMetric(float64(cpu.Microseconds())/float64(len(all)), "cpu-µs/msg")
					if entries > 0 {
						b.ReportMetric(float64(len(all))/float64(entries), "msgs/entry")
					}
				}
			})
		}
	}
}

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
