package client

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/runnelmq/runnel/broker"
	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/teststart"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// The broker's check loop is parked (an hour) and the tests run
// check passes themselves with CheckTransactions; with a 1ns transaction
// timeout every unended half is due at once, so nothing waits on a clock.

// txListener answers per message body; exec and check default to Unknown.
type txListener struct {
	exec  func(body string) LocalTransactionState
	check func(n int, m *MessageExt) LocalTransactionState // n: checks of this body so far

	mu      sync.Mutex
	execIDs map[string]string // body -> transaction id ExecuteLocal saw
	checks  map[string]int
	last    map[string]*MessageExt
}

func (l *txListener) ExecuteLocal(_ context.Context, m *Message) LocalTransactionState {
	l.mu.Lock()
	if l.execIDs == nil {
		l.execIDs = map[string]string{}
	}
	l.execIDs[string(m.Body)] = m.Properties[protocol.PropertyUniqClientMessageIDKey]
	l.mu.Unlock()
	if l.exec == nil {
		return Unknown
	}
	return l.exec(string(m.Body))
}

func (l *txListener) Check(_ context.Context, m *MessageExt) LocalTransactionState {
	l.mu.Lock()
	if l.checks == nil {
		l.checks, l.last = map[string]int{}, map[string]*MessageExt{}
	}
	l.checks[string(m.Body)]++
	n := l.checks[string(m.Body)]
	l.last[string(m.Body)] = m
	l.mu.Unlock()
	if l.check == nil {
		return Unknown
	}
	return l.check(n, m)
}

func (l *txListener) checked(body string) (int, *MessageExt) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.checks[body], l.last[body]
}

// txEnv is a one-broker Runnel cluster with topic T of one queue, so that
// the order of the queue is the order in which messages became visible.
type txEnv struct {
	be *backend
	c  *cluster.Cluster
}

func startTxEnv(t *testing.T) *txEnv {
	t.Helper()
	c := startCluster(t, cluster.Configure(func(_ int, cfg *config.Config) {
		cfg.TransactionCheckInterval = time.Hour
		cfg.TransactionTimeout = time.Nanosecond
	}))
	be := &backend{ns: c.NamesrvAddr(), runnel: c, brokers: []string{c.BrokerAddr(0)}}
	be.createTopic(t, "T", 1)
	return &txEnv{be: be, c: c}
}

func (e *txEnv) startTxProducer(t *testing.T, group string, l TransactionListener) *TransactionProducer {
	t.Helper()
	cfg := DefaultTransactionProducerConfig()
	cfg.Client = testClient(e.be.ns)
	cfg.Group = group
	cfg.Listener = l
	tp, err := NewTransactionProducer(cfg)
	return teststart.Started(t, tp, err)
}

func (e *txEnv) send(t *testing.T, tp *TransactionProducer, body string, want LocalTransactionState) *TransactionSendResult {
	t.Helper()
	res, err := tp.SendInTransaction(context.Background(), &Message{Topic: "T", Body: []byte(body), Properties: map[string]string{"k": "v"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.State != want || res.MsgID == "" || res.OffsetMsgID == "" {
		t.Fatalf("SendInTransaction(%s) = %+v, want state %v", body, res, want)
	}
	return res
}

// waitProducer waits until the broker knows a connection of group (from
// its heartbeat), so that a check pass reaches it.
func (e *txEnv) waitProducer(t *testing.T, group string) {
	t.Helper()
	rc := remoting.NewClient(remoting.ClientConfig{Logger: discardLogger()})
	defer rc.Close()
	testwait.For(t, testwait.Default, "the broker to know producer group "+group, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		resp, err := rc.Invoke(ctx, e.be.brokers[0],
			protocol.NewRequest(protocol.ReqGetProducerConnectionList, map[string]string{"producerGroup": group}, nil))
		return err == nil && resp.Code == protocol.RespSuccess
	})
}

// checkUntil runs check passes until cond holds for their summed results.
func (e *txEnv) checkUntil(t *testing.T, what string, cond func(sum broker.TxCheckResult) bool) {
	t.Helper()
	var sum broker.TxCheckResult
	testwait.For(t, testwait.Default, what, func() bool {
		res, err := e.c.Broker(0).CheckTransactions()
		if err != nil {
			t.Fatal(err)
		}
		sum.Checked += res.Checked
		sum.Sent += res.Sent
		sum.Ended += res.Ended
		sum.Discarded += res.Discarded
		return cond(sum)
	})
}

// sentinel sends a plain message to T and waits until col has it: whatever
// became visible in T's one queue before it has been delivered by then.
func (e *txEnv) sentinel(t *testing.T, col *collector, body string) {
	t.Helper()
	p := startProducer(t, e.be.ns, nil)
	if _, err := p.Send(context.Background(), &Message{Topic: "T", Body: []byte(body)}); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, testwait.Default, "sentinel "+body, func() bool { return col.count1(body) > 0 })
}

// stored returns how many messages T's queue holds.
func (e *txEnv) stored(t *testing.T) int64 {
	t.Helper()
	pc := startPullConsumer(t, e.be, "DEFAULT_CONSUMER")
	mqs, err := pc.MessageQueues(context.Background(), "T")
	if err != nil || len(mqs) != 1 {
		t.Fatalf("queues of T: %v %v", mqs, err)
	}
	n, err := pc.MaxOffset(context.Background(), mqs[0])
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func (c *collector) count1(body string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.count[body]
}

func (e *txEnv) consume(t *testing.T, group string) *collector {
	t.Helper()
	_, col := startCollecting(t, e.be.ns, group, "T")
	return col
}

// A committed transaction is delivered to our consumer once; a rolled-back
// one never.
func TestTransactionCommitRollback(t *testing.T) {
	e := startTxEnv(t)
	l := &txListener{exec: func(body string) LocalTransactionState {
		if body == "commit" {
			return CommitMessage
		}
		return RollbackMessage
	}}
	tp := e.startTxProducer(t, "txg", l)
	col := e.consume(t, "c-commit")
	e.send(t, tp, "rollback", RollbackMessage)
	res := e.send(t, tp, "commit", CommitMessage)
	if res.TransactionID == "" {
		t.Fatal("no transaction id")
	}
	testwait.For(t, testwait.Default, "the committed message", func() bool { return col.count1("commit") > 0 })
	e.sentinel(t, col, "sentinel")
	if n := e.stored(t); n != 2 {
		t.Fatalf("T holds %d messages, want 2 (the commit and the sentinel)", n)
	}
	if col.count1("commit") != 1 || col.count1("rollback") != 0 {
		t.Fatalf("commit delivered %d times, rollback %d; want once and never", col.count1("commit"), col.count1("rollback"))
	}
	// Both ended by the producer's own END, so check passes find their ops
	// and never ask about the commit (the rollback's END is oneway and may
	// still be on its way, so that one is not asserted).
	e.waitProducer(t, "txg")
	e.checkUntil(t, "both transactions seen ended", func(s broker.TxCheckResult) bool { return s.Ended >= 2 })
	if n, _ := l.checked("commit"); n != 0 {
		t.Fatalf("Check called %d times for an ended transaction", n)
	}
}

// Unknown leaves the half to the check; a Check answering commit delivers
// it once, with the real topic and the user's properties in the message
// Check saw.
func TestTransactionCheckCommit(t *testing.T) {
	e := startTxEnv(t)
	l := &txListener{check: func(int, *MessageExt) LocalTransactionState { return CommitMessage }}
	tp := e.startTxProducer(t, "txg", l)
	col := e.consume(t, "c-check-commit")
	res := e.send(t, tp, "later", Unknown)
	e.waitProducer(t, "txg")
	e.checkUntil(t, "a check sent", func(s broker.TxCheckResult) bool { return s.Sent > 0 })
	testwait.For(t, testwait.Default, "the message committed by Check", func() bool { return col.count1("later") > 0 })
	e.sentinel(t, col, "sentinel")
	if n := e.stored(t); n != 2 {
		t.Fatalf("T holds %d messages, want 2", n)
	}
	if col.count1("later") != 1 {
		t.Fatalf("delivered %d times, want once", col.count1("later"))
	}
	_, m := l.checked("later")
	l.mu.Lock()
	execID := l.execIDs["later"]
	l.mu.Unlock()
	if execID != res.MsgID || m.MsgID != res.MsgID {
		t.Fatalf("ExecuteLocal saw transaction id %q, Check's message MsgID %q; want both %s", execID, m.MsgID, res.MsgID)
	}
	if m.Topic != "T" || m.Property("k") != "v" || m.UniqKey() != res.MsgID || m.Queue.Topic != "T" || m.Queue.BrokerName == "" {
		t.Fatalf("Check saw topic %q props %v uniq %q queue %+v; want T, k=v, %s", m.Topic, m.Properties, m.UniqKey(), m.Queue, res.MsgID)
	}
}

// A Check answering rollback ends the transaction: never delivered.
func TestTransactionCheckRollback(t *testing.T) {
	e := startTxEnv(t)
	l := &txListener{check: func(int, *MessageExt) LocalTransactionState { return RollbackMessage }}
	tp := e.startTxProducer(t, "txg", l)
	col := e.consume(t, "c-check-rollback")
	e.send(t, tp, "doomed", Unknown)
	e.waitProducer(t, "txg")
	// Ended counts a pass finding the op the answer wrote.
	e.checkUntil(t, "the rollback answer", func(s broker.TxCheckResult) bool { return s.Ended > 0 })
	e.sentinel(t, col, "sentinel")
	if n := e.stored(t); n != 1 {
		t.Fatalf("T holds %d messages, want only the sentinel", n)
	}
	if col.count1("doomed") != 0 {
		t.Fatal("a rolled-back message was delivered")
	}
}

// A panicking ExecuteLocal is Unknown (nothing delivered until a check); a
// panicking Check is Unknown too, and the next check's commit delivers.
func TestTransactionListenerPanic(t *testing.T) {
	e := startTxEnv(t)
	l := &txListener{
		exec: func(string) LocalTransactionState { panic("local transaction blew up") },
		check: func(n int, _ *MessageExt) LocalTransactionState {
			if n == 1 {
				panic("check blew up")
			}
			return CommitMessage
		},
	}
	tp := e.startTxProducer(t, "txg", l)
	col := e.consume(t, "c-panic")
	e.send(t, tp, "p", Unknown)
	e.sentinel(t, col, "sentinel-1")
	if col.count1("p") != 0 {
		t.Fatal("delivered before any check")
	}
	e.waitProducer(t, "txg")
	e.checkUntil(t, "a second check", func(broker.TxCheckResult) bool { n, _ := l.checked("p"); return n >= 2 })
	testwait.For(t, testwait.Default, "the message committed by the second check", func() bool { return col.count1("p") > 0 })
	e.sentinel(t, col, "sentinel-2")
	if col.count1("p") != 1 {
		t.Fatalf("delivered %d times, want once", col.count1("p"))
	}
}

// blockingCheck blocks every Check until its context ends.
type blockingCheck struct{ started chan struct{} }

func (b *blockingCheck) ExecuteLocal(context.Context, *Message) LocalTransactionState { return Unknown }

func (b *blockingCheck) Check(ctx context.Context, _ *MessageExt) LocalTransactionState {
	select {
	case b.started <- struct{}{}:
	default:
	}
	<-ctx.Done()
	return Unknown
}

// Shutdown waits for a Check in flight; when its ctx ends first it cancels
// the Check's context, still waits, and says so.
func TestTransactionShutdownWaitsForCheck(t *testing.T) {
	e := startTxEnv(t)
	l := &blockingCheck{started: make(chan struct{}, 1)}
	tp := e.startTxProducer(t, "txg", l)
	e.send(t, tp, "stuck", Unknown)
	e.waitProducer(t, "txg")
	e.checkUntil(t, "a check sent", func(s broker.TxCheckResult) bool { return s.Sent > 0 })
	select {
	case <-l.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the check never reached Check")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := tp.Shutdown(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Shutdown with a Check in flight and an ended ctx = %v, want context.Canceled", err)
	}
	if _, err := tp.SendInTransaction(context.Background(), &Message{Topic: "T", Body: []byte("x")}); !errors.Is(err, ErrClosed) {
		t.Fatalf("SendInTransaction after Shutdown = %v, want ErrClosed", err)
	}
}

func TestTransactionProducerConfig(t *testing.T) {
	cfg := DefaultTransactionProducerConfig()
	cfg.Client.NameServerAddrs = []string{"127.0.0.1:9876"}
	if _, err := NewTransactionProducer(cfg); !errors.Is(err, ErrBadConfig) {
		t.Fatalf("no listener: %v, want ErrBadConfig", err)
	}
	cfg.Listener = &txListener{}
	tp, err := NewTransactionProducer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if tp.cfg.CheckWorkers != 1 || tp.cfg.CheckQueueSize != 2000 || tp.cfg.CheckTimeout != 30*time.Second || tp.cfg.Group != "DEFAULT_PRODUCER" {
		t.Fatalf("defaults not applied: %+v", tp.cfg)
	}
	if _, err := tp.SendInTransaction(context.Background(), &Message{Topic: "T", Body: []byte("x")}); !errors.Is(err, ErrNotStarted) {
		t.Fatalf("before Start: %v, want ErrNotStarted", err)
	}
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// A delay level is refused before anything is sent; two transaction
// producers of one group cannot share a client instance.
func TestTransactionRefusals(t *testing.T) {
	e := startTxEnv(t)
	tp := e.startTxProducer(t, "txg", &txListener{})
	_, err := tp.SendInTransaction(context.Background(), &Message{Topic: "T", Body: []byte("x"), DelayLevel: 2})
	if !errors.Is(err, ErrBadMessage) {
		t.Fatalf("delayed transactional message: %v, want ErrBadMessage", err)
	}
	cfg := tp.cfg
	dup, err := NewTransactionProducer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := dup.Start(context.Background()); !errors.Is(err, ErrBadConfig) {
		t.Fatalf("second transaction producer of a group in one instance: %v, want ErrBadConfig", err)
	}
	if n := e.stored(t); n != 0 {
		t.Fatalf("T holds %d messages after refusals, want 0", n)
	}
}
