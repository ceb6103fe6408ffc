package replica

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/message"

	"github.com/runnelmq/runnel/store"
)

// BenchmarkPropose: 16 concurrent proposers of 1 KiB appends, on a group
// of three and of one (in-process transport, raft log fsynced), next to
// the bare store's Apply (SYNC_FLUSH and ASYNC_FLUSH). Reports ops/s and
// p99 latency.
func BenchmarkPropose(b *testing.B) {
	body := strings.Repeat("x", 1024)
	const proposers = 16
	run := func(b *testing.B, propose func(i int) error) {
		var next atomic.Int64
		lat := make([][]time.Duration, proposers)
		var wg sync.WaitGroup
		b.ResetTimer()
		start := time.Now()
		for w := range proposers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := next.Add(1)
					if i > int64(b.N) {
						return
					}
					t0 := time.Now()
					if err := propose(int(i)); err != nil {
						b.Error(err)
						return
					}
					lat[w] = append(lat[w], time.Since(t0))
				}
			}()
		}
		wg.Wait()
		el := time.Since(start)
		b.StopTimer()
		all := slices.Concat(lat...)
		slices.Sort(all)
		if len(all) > 0 {
			b.ReportMetric(float64(len(all))/el.Seconds(), "ops/s")
			b.ReportMetric(float64(all[len(all)*99/100].Microseconds())/1000, "p99-ms")
		}
	}
	for _, mode := range []store.FlushMode{store.SyncFlush, store.AsyncFlush} {
		b.Run("store-"+mode.String(), func(b *testing.B) {
			s, err := store.Open(store.Options{Dir: b.TempDir(), FlushMode: mode, RetentionInterval: -1, Now: func() time.Time { return storeTime }})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			run(b, func(i int) error {
				op, err := s.AppendOp(msgs(i, body))
				if err != nil {
					return err
				}
				_, err = s.Apply(op)
				return err
			})
		})
	}
	// group-N-nosync runs without the raft log's fsync: all nodes of an
	// in-process group share one disk, so this is the cost of raft itself.
	for _, gc := range []struct {
		size   int
		noSync bool
	}{{1, false}, {3, false}, {3, true}} {
		name := fmt.Sprintf("group-%d", gc.size)
		if gc.noSync {
			name += "-nosync"
		}
		b.Run(name, func(b *testing.B) {
			g := newGroup(b, gc.size, func(c *Config) { c.LogNoSync = gc.noSync })
			var leader atomic.Pointer[Node]
			leader.Store(g.node(g.leader()))
			ctx := context.Background()
			// On a loaded machine the leader may miss its lease mid-run:
			// a refused proposal goes again to the new leader, counted.
			var resent atomic.Int64
			run(b, func(i int) error {
				for {
					l := leader.Load()
					op, err := l.Store().AppendOp(msgs(i, body))
					if err != nil {
						return err
					}
					if _, err = l.Propose(ctx, op.Marshal()); !errors.Is(err, ErrNotLeader) || resent.Add(1) > 1000 {
						return err
					}
					leader.CompareAndSwap(l, g.node(g.leader()))
				}
			})
			b.StopTimer()
			l := leader.Load()
			b.ReportMetric(float64(l.logs.entries.Load())/float64(max(l.logs.writes.Load(), 1)), "entries/write")
			b.ReportMetric(float64(resent.Load()), "resent")
		})
	}
}

func msgs(i int, body string) []*message.MessageExt {
	return []*message.MessageExt{testMessage("B", int32(i%8), body)}
}

// BenchmarkFailover kills the leader of a 3-node group (in-process
// transport, default timeouts) once per iteration and measures the time
// until another node has announced that it leads (after its barrier, so it
// can take writes), and until a write proposed there is acknowledged.
func BenchmarkFailover(b *testing.B) {
	g := newGroup(b, 3, nil)
	var elect, write []time.Duration
	for range b.N {
		old := g.leader()
		drain := func(i int) {
			for {
				select {
				case <-g.node(i).Leadership():
				default:
					return
				}
			}
		}
		for i := range 3 {
			if i != old {
				drain(i)
			}
		}
		t0 := time.Now()
		g.stop(old)
		var nl *Node
		for nl == nil {
			for i := range 3 {
				if n := g.node(i); n != nil {
					select {
					case l := <-n.Leadership():
						if l.IsLeader {
							nl = n
						}
					default:
					}
				}
			}
			time.Sleep(time.Millisecond)
		}
		elect = append(elect, time.Since(t0))
		ctx, cancel := proposeCtx()
		_, err := nl.Propose(ctx, appendOp(b, nl, testMessage("F", 0, fmt.Sprint(len(write)))))
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		write = append(write, time.Since(t0))
		g.start(old)
		testwait.For(b, 30*time.Second, "the restarted node to follow", func() bool { return g.node(old).Status().LeaderID != "" })
	}
	b.StopTimer()
	report := func(d []time.Duration, name string) {
		slices.Sort(d)
		var sum time.Duration
		for _, x := range d {
			sum += x
		}
		b.ReportMetric(float64(sum.Milliseconds())/float64(len(d)), name+"-mean-ms")
		b.ReportMetric(float64(d[len(d)-1].Milliseconds()), name+"-max-ms")
	}
	report(elect, "leader")
	report(write, "write")
}
