package integration

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// groupCycles is how many fault cycles TestGroupModel runs:
// RUNNEL_GROUP_CYCLES, default 6 (about 3 s each); the check is
// RUNNEL_GROUP_CYCLES=50.
func groupCycles() int { return envCount("RUNNEL_GROUP_CYCLES", 6) }

// envCount is the positive integer in the environment variable name, or
// def if it is unset or not one.
func envCount(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// sendModel is what the producer was told: every acknowledged body with
// where it went, the bodies it sent more than once, and the bodies a
// deposed leader was asked to take.
type sendModel struct {
	mu     sync.Mutex
	acked  map[string]client.SendResult
	resent map[string]bool
	absent []string
}

func (m *sendModel) ackedN() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.acked)
}

// produce sends p-000000, p-000001, ... through send until stop, each
// until it is acknowledged (send is a client with no retries of its own,
// so every re-send is the model's and is recorded).
func (m *sendModel) produce(send func(body string) (client.SendResult, error), stop <-chan struct{}) {
	for i := 0; ; i++ {
		body := fmt.Sprintf("p-%06d", i)
		for attempt := 0; ; attempt++ {
			select {
			case <-stop:
				return
			default:
			}
			if attempt > 0 {
				m.mu.Lock()
				m.resent[body] = true
				m.mu.Unlock()
			}
			res, err := send(body)
			if err == nil && res.Status == client.SendOK {
				m.mu.Lock()
				m.acked[body] = res
				m.mu.Unlock()
				break
			}
			time.Sleep(20 * time.Millisecond) // pace re-sends while there is no master
		}
	}
}

// waitMoreAcked waits until the group acknowledged n more sends.
func (m *sendModel) waitMoreAcked(t *testing.T, n int, within time.Duration) {
	t.Helper()
	want := m.ackedN() + n
	testwait.For(t, within, fmt.Sprintf("%d sends acknowledged", want), func() bool { return m.ackedN() >= want })
}

// A 3-node group under a steady producer and consumer (our client), through
// groupCycles() cycles of: kill the leader and restart it, or cut the
// leader off from the majority and heal it. Then: every acknowledged
// message is consumed; every acknowledged message is stored at the queue
// offset it was acknowledged with (offsets never went back or were given
// twice); no message is stored twice unless the producer sent it twice;
// and the deposed leader acknowledged nothing once cut off.
func TestGroupModel(t *testing.T) {
	const topic = "Model"
	c := rcCluster(t, cluster.Group(3), cluster.Configure(func(_ int, cfg *config.Config) {
		cfg.OffsetPersistInterval = 200 * time.Millisecond
	}))
	l := c.Leader()
	waitListed(t, c, l, 10*time.Second)

	p := rcProducerWith(t, c, func(cfg *client.ProducerConfig) {
		cfg.Group = "model-pg"
		cfg.RetryTimes = -1 // one attempt per send: the model counts what each attempt did
	})
	m := &sendModel{acked: map[string]client.SendResult{}, resent: map[string]bool{}}
	sendUntilOK(t, p, topic, "first") // the topic exists before the consumer starts
	m.acked["first"] = client.SendResult{}
	waitRoutedWithMaster(t, c, topic)
	got := newRCCollector()
	rcConsumer(t, c, "model-cg", topic, "*", got.add)

	send := func(body string) (client.SendResult, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		return p.Send(ctx, &client.Message{Topic: topic, Body: []byte(body)})
	}
	runModel(t, c, m, topic, send, groupCycles(), 30*time.Second, func(b string) bool { return got.get(b) != nil })
}

// runModel runs the model check on group c: m.produce through send until
// the end, cycles fault cycles (kill and restart the leader, or cut it off
// and heal it), each waiting up to within for more acknowledged sends
// after the fault; then the checks of TestGroupModel, consumed telling
// whether a body reached the consumer.
func runModel(t *testing.T, c *cluster.Cluster, m *sendModel, topic string,
	send func(string) (client.SendResult, error), cycles int, within time.Duration, consumed func(string) bool) {
	t.Helper()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); m.produce(send, stop) }()
	halt := sync.OnceFunc(func() { close(stop); wg.Wait() })
	defer halt()

	for cyc := range cycles {
		old := c.Leader()
		m.waitMoreAcked(t, 5, within)
		if cyc%2 == 0 {
			c.KillBroker(old)
			c.Leader(old)
			m.waitMoreAcked(t, 5, within)
			c.StartBroker(old)
		} else {
			c.Cut(old)
			// Whatever the cut-off leader is asked now, it must not
			// acknowledge: it can no longer reach a majority.
			for k := range 3 {
				body := fmt.Sprintf("cut-%d-%d", cyc, k)
				m.absent = append(m.absent, body)
				_, err := c.Broker(old).Core().Send(core.SendRequest{Topic: topic, QueueID: -1,
					Messages: []core.SendMessage{{Body: []byte(body)}}})
				if err == nil {
					t.Fatalf("cycle %d: the cut-off leader acknowledged %s", cyc, body)
				}
			}
			c.Leader(old)
			m.waitMoreAcked(t, 5, within)
			c.Heal(old)
		}
		testwait.Until(t, 30*time.Second, "the old leader a caught-up slave", func() error {
			nl := c.Leader()
			if nl == old {
				return nil // re-elected: fine, it holds everything
			}
			ob, lb := c.Broker(old), c.Broker(nl)
			os, _ := ob.ReplicaStatus()
			ls, _ := lb.ReplicaStatus()
			if ob.IsMaster() || os.AppliedIndex < ls.CommitIndex {
				return fmt.Errorf("old master=%v applied %d < commit %d", ob.IsMaster(), os.AppliedIndex, ls.CommitIndex)
			}
			return nil
		})
	}
	m.waitMoreAcked(t, 5, within)
	halt()

	m.mu.Lock()
	defer m.mu.Unlock()
	testwait.Until(t, 60*time.Second, "every acknowledged message consumed", func() error {
		missing := 0
		first := ""
		for b := range m.acked {
			if !consumed(b) {
				if missing++; first == "" {
					first = b
				}
			}
		}
		if missing > 0 {
			return fmt.Errorf("%d of %d not consumed yet, e.g. %s", missing, len(m.acked), first)
		}
		return nil
	})

	// The store of the master now: every node's is the same (one log).
	st := c.Broker(c.Leader()).Store()
	stored := map[string]int{}
	at := map[string]int64{} // body -> queue id << 32 | offset of its first copy
	for id, r := range st.Queues() {
		if id.Topic != topic {
			continue
		}
		for off := r.Min; off < r.Max; {
			res, err := st.Get(topic, id.ID, off, 32, 1<<20, nil)
			if err != nil || res.Count == 0 {
				t.Fatalf("get %d@%d: %v", id.ID, off, err)
			}
			ms, err := message.DecodeMessages(res.Messages)
			if err != nil {
				t.Fatal(err)
			}
			for _, msg := range ms {
				b := string(msg.Body)
				if stored[b]++; stored[b] == 1 {
					at[b] = int64(msg.QueueID)<<32 | msg.QueueOffset
				}
			}
			off = res.NextBeginOffset
		}
	}
	for b, res := range m.acked {
		if b == "first" {
			continue
		}
		if stored[b] == 0 {
			t.Errorf("%s acknowledged at %d@%d, not stored", b, res.Queue.QueueID, res.QueueOffset)
			continue
		}
		if stored[b] == 1 && at[b] != int64(res.Queue.QueueID)<<32|res.QueueOffset {
			t.Errorf("%s acknowledged at %d@%d, stored at %d@%d", b, res.Queue.QueueID, res.QueueOffset, at[b]>>32, at[b]&(1<<32-1))
		}
	}
	for b, n := range stored {
		if n > 1 && !m.resent[b] {
			t.Errorf("%s stored %d times, sent once", b, n)
		}
	}
	for _, b := range m.absent {
		if stored[b] > 0 {
			t.Errorf("%s, sent to the cut-off leader, was stored", b)
		}
	}
	t.Logf("%d cycles: %d acknowledged, %d re-sent, %d stored bodies", cycles, len(m.acked), len(m.resent), len(stored))
}

// waitRoutedWithMaster waits until the name server routes topic to a
// group with a master. A SEND_OK that auto-created the topic does not
// wait for the name server to have its route, and a consumer (ours or the
// official one) that starts before it does fails its start.
func waitRoutedWithMaster(t *testing.T, c *cluster.Cluster, topic string) {
	t.Helper()
	testwait.Until(t, 10*time.Second, topic+"'s route with a master", func() error {
		r, code := routeOf(t, c, topic)
		if code != protocol.RespSuccess {
			return fmt.Errorf("route query: code %d", code)
		}
		for _, bd := range r.BrokerDatas {
			if bd.BrokerAddrs[protocol.MasterID] != "" {
				return nil
			}
		}
		return fmt.Errorf("no master in %+v", r.BrokerDatas)
	})
}
