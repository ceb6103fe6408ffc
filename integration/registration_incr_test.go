package integration

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// TestIncrementalRegistration: after its start, a broker registers a
// created topic by sending only the changed topics (Java's
// registerIncrementBrokerData), and the name server keeps the broker's
// other topics; creations that arrive while a registration is under way
// all go in the next one. A recording name server beside the real one
// shows what each REGISTER_BROKER carried.
func TestIncrementalRegistration(t *testing.T) {
	rec := startRecordingNamesrv(t)
	gate := make(chan struct{})
	var gateOnce sync.Once
	rec.mu.Lock()
	rec.hook = func(tc map[string]protocol.TopicConfig) bool {
		if _, ok := tc["Hold"]; ok {
			<-gate // the registration carrying Hold waits until the burst is in
		}
		return false
	}
	rec.mu.Unlock()
	t.Cleanup(func() { gateOnce.Do(func() { close(gate) }) })
	c := cluster.Start(t, cluster.Configure(func(_ int, cfg *config.Config) {
		cfg.RegisterInterval = time.Hour // only changes register during the test
		cfg.NamesrvAddrs = append(cfg.NamesrvAddrs, rec.srv.Addr())
	}))
	cl := remoting.NewClient(remoting.DefaultClientConfig())
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	addr := c.BrokerAddr(0)

	for i := range 5 {
		if err := createTopicRaw(ctx, cl, addr, "Incr"+strconv.Itoa(i), 4); err != nil {
			t.Fatal(err)
		}
	}
	regs := rec.registrations()
	if len(regs) != 6 {
		t.Fatalf("%d registrations, want the start's and one per creation", len(regs))
	}
	if _, ok := regs[0]["TBW102"]; !ok || len(regs[0]) < 8 {
		t.Fatalf("the start's registration %v is not the whole table", keys(regs[0]))
	}
	for i, r := range regs[1:] {
		if want := "Incr" + strconv.Itoa(i); len(r) != 1 || r[want].WriteQueueNums != 4 {
			t.Fatalf("registration %d carried %v, want only %s", i+1, keys(r), want)
		}
	}
	for _, topic := range []string{"TBW102", "Incr0", "Incr4"} {
		if r, code := routeAt(t, c.NamesrvAddr(), topic); code != protocol.RespSuccess || len(r.QueueDatas) != 1 {
			t.Fatalf("name server's route of %s after partial registrations: code %d %+v", topic, code, r)
		}
	}

	// A creation whose registration is held, then a burst behind it.
	held := make(chan error, 1)
	go func() { held <- createTopicRaw(ctx, cl, addr, "Hold", 1) }()
	testwait.For(t, testwait.Default, "the registration of Hold under way", func() bool {
		return len(rec.registrations()) == 7
	})
	const burst = 16
	errs := make(chan error, burst)
	for i := range burst {
		go func() { errs <- createTopicRaw(ctx, cl, addr, "Burst"+strconv.Itoa(i), 2) }()
	}
	testwait.For(t, testwait.Default, "every topic of the burst stored", func() bool {
		for i := range burst {
			if _, ok := c.Broker(0).Core().Topic("Burst" + strconv.Itoa(i)); !ok {
				return false
			}
		}
		return true
	})
	gateOnce.Do(func() { close(gate) })
	for range burst {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	regs = rec.registrations()
	if len(regs) != 8 || len(regs[7]) != burst {
		t.Fatalf("after the held one, registrations carried %v, want one with the %d topics of the burst", tail(regs, 7), burst)
	}
	for i := range burst {
		if _, code := routeAt(t, c.NamesrvAddr(), "Burst"+strconv.Itoa(i)); code != protocol.RespSuccess {
			t.Fatalf("Burst%d has no route: code %d", i, code)
		}
	}
}

// TestFailedPartialRegistrationSendsWholeTable: a name server that refused
// a registration of changed topics gets the whole table at the retry (it
// may lack any of them), while the name server that took it keeps getting
// changes only.
func TestFailedPartialRegistrationSendsWholeTable(t *testing.T) {
	rec := startRecordingNamesrv(t)
	var refused atomic.Bool
	rec.mu.Lock()
	rec.hook = func(tc map[string]protocol.TopicConfig) bool {
		_, ok := tc["Refused"]
		return ok && refused.CompareAndSwap(false, true) // the first one only
	}
	rec.mu.Unlock()
	c := cluster.Start(t, cluster.Configure(func(_ int, cfg *config.Config) {
		cfg.RegisterInterval = time.Hour
		cfg.NamesrvAddrs = append(cfg.NamesrvAddrs, rec.srv.Addr())
	}))
	cl := remoting.NewClient(remoting.DefaultClientConfig())
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := createTopicRaw(ctx, cl, c.BrokerAddr(0), "Refused", 2); err != nil {
		t.Fatal(err) // a name server's failure does not fail the creation
	}
	testwait.For(t, testwait.Default, "the retry after the refusal", func() bool {
		return len(rec.registrations()) >= 3
	})
	regs := rec.registrations()
	if len(regs[1]) != 1 {
		t.Fatalf("the refused registration carried %v, want Refused alone", keys(regs[1]))
	}
	if _, ok := regs[2]["TBW102"]; !ok || len(regs[2]) < 8 {
		t.Fatalf("the retry carried %v, want the whole table", keys(regs[2]))
	}
	if err := createTopicRaw(ctx, cl, c.BrokerAddr(0), "AfterRetry", 2); err != nil {
		t.Fatal(err)
	}
	if regs = rec.registrations(); len(regs[len(regs)-1]) != 1 {
		t.Fatalf("after the whole table, a creation carried %v, want AfterRetry alone", keys(regs[len(regs)-1]))
	}
	for _, topic := range []string{"Refused", "AfterRetry", "TBW102"} {
		if _, code := routeAt(t, c.NamesrvAddr(), topic); code != protocol.RespSuccess {
			t.Fatalf("the real name server has no route of %s: code %d", topic, code)
		}
	}
}

// TestRegistrationAfterRestartDropsDeletedTopics: a topic deleted at the
// broker alone keeps its route at a name server by default (RocketMQ's
// deleteTopicWithBrokerRegistration=false: only DELETE_TOPIC_IN_NAMESRV
// removes it), but once the broker restarts, cleanly or killed, the name
// server has forgotten it (an unregistration or its closed connection) and
// the whole table it registers at start no longer names the topic, while
// the others come back.
func TestRegistrationAfterRestartDropsDeletedTopics(t *testing.T) {
	for _, kill := range []bool{false, true} {
		t.Run("kill="+strconv.FormatBool(kill), func(t *testing.T) {
			c := cluster.Start(t)
			cl := remoting.NewClient(remoting.DefaultClientConfig())
			defer cl.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for _, topic := range []string{"Kept", "Gone"} {
				if err := createTopicRaw(ctx, cl, c.BrokerAddr(0), topic, 2); err != nil {
					t.Fatal(err)
				}
			}
			resp, err := cl.Invoke(ctx, c.BrokerAddr(0), protocol.NewRequest(protocol.ReqDeleteTopicInBroker,
				protocol.TopicRequestHeader{Topic: "Gone"}.Encode(), nil))
			if err != nil || resp.Code != protocol.RespSuccess {
				t.Fatalf("delete Gone at the broker: %v %+v", err, resp)
			}
			if _, code := routeAt(t, c.NamesrvAddr(), "Gone"); code != protocol.RespSuccess {
				t.Fatalf("Gone's route after a deletion at the broker alone: code %d, want it kept", code)
			}
			if kill {
				c.KillBroker(0)
				// As in Java, the name server forgets a killed broker when it
				// sees the connection close; a restart faster than that
				// would find its old queue data still there.
				testwait.For(t, testwait.Default, "the killed broker dropped", func() bool {
					_, code := routeAt(t, c.NamesrvAddr(), "Kept")
					return code == protocol.RespTopicNotExist
				})
			}
			c.RestartBroker(0)
			if _, code := routeAt(t, c.NamesrvAddr(), "Gone"); code != protocol.RespTopicNotExist {
				t.Fatalf("Gone's route after the restart: code %d, want 17", code)
			}
			if r, code := routeAt(t, c.NamesrvAddr(), "Kept"); code != protocol.RespSuccess || r.QueueDatas[0].WriteQueueNums != 2 {
				t.Fatalf("Kept's route after the restart: code %d %+v", code, r)
			}
			// And a creation after the restart is registered alone without
			// losing Kept.
			if err := createTopicRaw(ctx, cl, c.BrokerAddr(0), "After", 2); err != nil {
				t.Fatal(err)
			}
			for _, topic := range []string{"Kept", "After", "TBW102"} {
				if _, code := routeAt(t, c.NamesrvAddr(), topic); code != protocol.RespSuccess {
					t.Fatalf("%s's route after a creation following the restart: code %d", topic, code)
				}
			}
		})
	}
}

func keys(m map[string]protocol.TopicConfig) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func tail(regs []map[string]protocol.TopicConfig, from int) [][]string {
	var out [][]string
	for _, r := range regs[min(from, len(regs)):] {
		out = append(out, keys(r))
	}
	return out
}
