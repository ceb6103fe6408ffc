package integration

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/clitest"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

func routeOf(t *testing.T, c *cluster.Cluster, topic string) (*protocol.TopicRouteData, int16) {
	t.Helper()
	return routeAt(t, c.NamesrvAddr(), topic)
}

// routeAt asks the name server at addr for topic's route.
func routeAt(t testing.TB, addr, topic string) (*protocol.TopicRouteData, int16) {
	t.Helper()
	r, code, err := queryRoute(addr, topic)
	if err != nil {
		t.Fatal(err)
	}
	return r, code
}

// queryRoute asks the name server at addr for topic's route: the route
// when the answer is success, and the answer's code.
func queryRoute(addr, topic string) (*protocol.TopicRouteData, int16, error) {
	cl := remoting.NewClient(remoting.DefaultClientConfig())
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := cl.Invoke(ctx, addr, protocol.NewRequest(protocol.ReqGetRouteInfoByTopic,
		protocol.GetRouteInfoRequestHeader{Topic: topic}.Encode(), nil))
	if err != nil {
		return nil, 0, err
	}
	if resp.Code != protocol.RespSuccess {
		return nil, resp.Code, nil
	}
	r, err := protocol.DecodeTopicRouteData(resp.Body)
	return r, resp.Code, err
}

// TestRegistration: the broker registers TBW102 and its topics at start
// and each topic created through the admin API at once; a clean stop
// unregisters it; a restart registers it again; a killed broker drops out
// too, because the name server forgets a broker whose connection closes.
func TestRegistration(t *testing.T) {
	c := cluster.Start(t, cluster.Brokers(2))
	r, code := routeOf(t, c, "TBW102")
	if code != 0 || len(r.BrokerDatas) != 2 {
		t.Fatalf("TBW102 route: code %d %+v", code, r)
	}
	for _, q := range r.QueueDatas {
		if q.Perm != 7 || q.WriteQueueNums != 4 {
			t.Fatalf("TBW102 queue data %+v", q)
		}
	}
	createTopic(t, c, 1, "OnB", 3)
	r, code = routeOf(t, c, "OnB")
	if code != 0 || len(r.QueueDatas) != 1 || r.QueueDatas[0].BrokerName != c.BrokerName(1) || r.QueueDatas[0].ReadQueueNums != 3 {
		t.Fatalf("OnB route right after creation: code %d %+v", code, r)
	}
	if addr := r.BrokerDatas[0].BrokerAddrs[0]; addr != c.BrokerAddr(1) {
		t.Fatalf("advertised %s, want %s", addr, c.BrokerAddr(1))
	}

	c.StopBroker(1)
	if _, code = routeOf(t, c, "OnB"); code != protocol.RespTopicNotExist {
		t.Fatalf("after a clean stop the route answers %d, want 17", code)
	}
	c.RestartBroker(1)
	if r, code = routeOf(t, c, "OnB"); code != 0 || r.QueueDatas[0].ReadQueueNums != 3 {
		t.Fatalf("after restart: code %d %+v", code, r)
	}
	c.KillBroker(1)
	testwait.For(t, testwait.Default, "the killed broker dropped", func() bool {
		_, code := routeOf(t, c, "OnB")
		return code == protocol.RespTopicNotExist
	})
	if r, code = routeOf(t, c, "TBW102"); code != 0 || len(r.BrokerDatas) != 1 {
		t.Fatalf("TBW102 after the kill: code %d %+v", code, r)
	}
}

// TestRegistrationWithEveryNamesrv: a broker registers with each of its
// name servers, and again every RegisterInterval without any change to its
// topics, so a name server that restarted with an empty table learns the
// broker's routes back; a clean stop unregisters from every one of them.
// A name server also forgets a broker whose connection closes, so a third,
// recording name server shows that the stop sent UNREGISTER_BROKER.
func TestRegistrationWithEveryNamesrv(t *testing.T) {
	rec := startRecordingNamesrv(t)
	c := cluster.Start(t, cluster.Namesrvs(2), cluster.Configure(func(_ int, cfg *config.Config) {
		cfg.RegisterInterval = 200 * time.Millisecond
		cfg.NamesrvAddrs = append(cfg.NamesrvAddrs, rec.srv.Addr())
	}))
	addrs := c.NamesrvAddrs()
	if got := c.Broker(0).Config().NamesrvAddrs; !slices.Equal(got, append(addrs, rec.srv.Addr())) {
		t.Fatalf("broker configured with name servers %v, want %v and the recorder", got, addrs)
	}
	createTopic(t, c, 0, "Everywhere", 3)
	for i, addr := range addrs {
		if r, code := routeAt(t, addr, "Everywhere"); code != protocol.RespSuccess || r.QueueDatas[0].ReadQueueNums != 3 {
			t.Fatalf("name server %d right after creation: code %d %+v", i, code, r)
		}
	}

	// Name server 1 comes back empty. Nothing changes on the broker, so
	// only its periodic registration can fill the new table.
	c.RestartNamesrv(1)
	// A query the new server has no time to answer on a loaded machine is
	// asked again, as one that finds no route yet.
	testwait.For(t, testwait.Default, "the route back on the restarted name server", func() bool {
		r, code, err := queryRoute(addrs[1], "Everywhere")
		if err != nil {
			t.Logf("route from the restarted name server: %v", err)
			return false
		}
		return code == protocol.RespSuccess && len(r.BrokerDatas) == 1 && r.BrokerDatas[0].BrokerAddrs[0] == c.BrokerAddr(0)
	})
	if _, code := routeAt(t, addrs[0], "Everywhere"); code != protocol.RespSuccess {
		t.Fatalf("name server 0 lost the route: code %d", code)
	}

	// Close returns after unregistering from every name server, so none
	// has a route by then.
	c.StopBroker(0)
	for i, addr := range addrs {
		if r, code := routeAt(t, addr, "Everywhere"); code != protocol.RespTopicNotExist {
			t.Errorf("name server %d after a clean stop: code %d %+v, want 17", i, code, r)
		}
	}
	want := protocol.UnregisterBrokerRequestHeader{
		BrokerName: c.BrokerName(0), BrokerAddr: c.BrokerAddr(0), ClusterName: "DefaultCluster", BrokerID: 0,
	}
	if got := rec.unregistered(); len(got) != 1 || got[0] != want {
		t.Errorf("UNREGISTER_BROKER requests %+v, want one %+v", got, want)
	}
}

// recordingNamesrv answers REGISTER_BROKER and UNREGISTER_BROKER with
// success and records the unregistrations and each registration's topics.
type recordingNamesrv struct {
	srv  *remoting.Server
	mu   sync.Mutex
	unr  []protocol.UnregisterBrokerRequestHeader
	regs []map[string]protocol.TopicConfig
	// hook, when set, runs with each registration's topics before it is
	// answered; the registration is refused when it returns true.
	hook func(map[string]protocol.TopicConfig) (refuse bool)
}

func startRecordingNamesrv(t *testing.T) *recordingNamesrv {
	t.Helper()
	r := &recordingNamesrv{}
	r.srv = clitest.Server(t, "", r.handle)
	return r
}

func (r *recordingNamesrv) handle(srv *remoting.Server) {
	srv.Handle(protocol.ReqRegisterBroker, func(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
		body, err := protocol.DecodeRegisterBrokerBody(req.Body, false)
		if err != nil {
			return protocol.NewResponse(req, protocol.RespSystemError, err.Error())
		}
		r.mu.Lock()
		r.regs = append(r.regs, body.TopicConfigSerializeWrapper.TopicConfigTable)
		hook := r.hook
		r.mu.Unlock()
		if hook != nil && hook(body.TopicConfigSerializeWrapper.TopicConfigTable) {
			return protocol.NewResponse(req, protocol.RespSystemError, "refused by the test")
		}
		return protocol.NewResponse(req, protocol.RespSuccess, "")
	})
	srv.Handle(protocol.ReqUnregisterBroker, func(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
		var h protocol.UnregisterBrokerRequestHeader
		if err := h.Decode(req.Fields()); err != nil {
			return protocol.NewResponse(req, protocol.RespSystemError, err.Error())
		}
		r.mu.Lock()
		r.unr = append(r.unr, h)
		r.mu.Unlock()
		return protocol.NewResponse(req, protocol.RespSuccess, "")
	})
}

// registrations returns the topic tables registered so far, in order.
func (r *recordingNamesrv) registrations() []map[string]protocol.TopicConfig {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.regs)
}

func (r *recordingNamesrv) unregistered() []protocol.UnregisterBrokerRequestHeader {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]protocol.UnregisterBrokerRequestHeader(nil), r.unr...)
}

// TestRestartedNamesrvLearnsRoutesAtOnce: with the default 30 s
// registration interval, a name server that restarts empty gets the
// broker's routes back as soon as it listens again, because the broker
// re-registers when its connection to the name server closes (retrying
// with a short backoff), not at its next round.
func TestRestartedNamesrvLearnsRoutesAtOnce(t *testing.T) {
	c := cluster.Start(t, cluster.Configure(func(_ int, cfg *config.Config) { cfg.RegisterInterval = 30 * time.Second }))
	createTopic(t, c, 0, "Back", 2)
	addr := c.NamesrvAddr()
	start := time.Now()
	c.RestartNamesrv(0)
	testwait.For(t, 10*time.Second, "the route back on the restarted name server", func() bool {
		r, code := routeAt(t, addr, "Back")
		return code == protocol.RespSuccess && len(r.BrokerDatas) == 1
	})
	t.Logf("routes back %v after the restart", time.Since(start).Round(time.Millisecond))
}

// BenchmarkNamesrvRestartRecovery: time from a name server's restart to
// a route query answered from its new table (ms per restart).
func BenchmarkNamesrvRestartRecovery(b *testing.B) {
	c := cluster.Start(b, cluster.Configure(func(_ int, cfg *config.Config) { cfg.RegisterInterval = 30 * time.Second }))
	createTopic(b, c, 0, "BackBench", 2)
	addr := c.NamesrvAddr()
	var total time.Duration
	for range b.N {
		start := time.Now()
		c.RestartNamesrv(0)
		testwait.For(b, 10*time.Second, "the route back", func() bool {
			r, code := routeAt(b, addr, "BackBench")
			return code == protocol.RespSuccess && len(r.BrokerDatas) == 1
		})
		total += time.Since(start)
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/recovery")
}

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
