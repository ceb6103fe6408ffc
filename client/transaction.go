package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/runnelmq/runnel/client/queue"
	"github.com/runnelmq/runnel/internal/confdefault"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// Transactional messages, as RocketMQ's TransactionMQProducer sends them:
//
//  1. the message goes to the broker as a half (sysFlag
//     TRANSACTION_PREPARED, properties TRAN_MSG=true and PGROUP=<group>),
//     which no consumer sees;
//  2. the listener's ExecuteLocal runs the local transaction;
//  3. END_TRANSACTION (oneway) tells the broker to commit the half (it is
//     then delivered), roll it back (never delivered), or, for Unknown, to
//     leave it to the check;
//  4. the broker asks about halves that stay unended past its transaction
//     timeout with CHECK_TRANSACTION_STATE, sent to a connection of the
//     producer group; the listener's Check answers, and the answer goes back
//     as END_TRANSACTION with fromTransactionCheck=true.
//
// The broker finds the group's connections through the heartbeat's
// producerDataSet, so a TransactionProducer must keep running (heartbeating)
// for its unknown transactions to be resolved.

// LocalTransactionState is a listener's verdict on a transaction.
type LocalTransactionState int

const (
	// Unknown leaves the half to the broker's check, which asks Check later.
	// It is the zero value, and what a listener that panics answers.
	Unknown LocalTransactionState = iota
	// CommitMessage delivers the message.
	CommitMessage
	// RollbackMessage discards it.
	RollbackMessage
)

func (s LocalTransactionState) String() string {
	switch s {
	case CommitMessage:
		return "COMMIT_MESSAGE"
	case RollbackMessage:
		return "ROLLBACK_MESSAGE"
	}
	return "UNKNOW"
}

// wire returns END_TRANSACTION's commitOrRollback for s.
func (s LocalTransactionState) wire() int32 {
	switch s {
	case CommitMessage:
		return protocol.TransactionCommit
	case RollbackMessage:
		return protocol.TransactionRollback
	}
	return protocol.TransactionNotType
}

// TransactionListener runs and checks local transactions. Both methods may
// be called concurrently (SendInTransaction from any goroutine, Check from
// CheckWorkers goroutines).
type TransactionListener interface {
	// ExecuteLocal runs the local transaction of a message whose half was
	// stored. ctx is SendInTransaction's. msg is a copy of the message sent,
	// its Properties holding TRAN_MSG, PGROUP and UNIQ_KEY: the transaction
	// id, which Check's message carries as its MsgID.
	ExecuteLocal(ctx context.Context, msg *Message) LocalTransactionState
	// Check answers the broker about a half left unended; msg carries the
	// real topic, the user's properties and MsgID (the transaction id). ctx
	// ends at CheckTimeout or when Shutdown gives up waiting.
	Check(ctx context.Context, msg *MessageExt) LocalTransactionState
}

// TransactionProducerConfig configures a TransactionProducer. Zero fields
// take the defaults of DefaultTransactionProducerConfig.
type TransactionProducerConfig struct {
	ProducerConfig
	// Listener runs and checks local transactions. Required.
	Listener TransactionListener
	// CheckWorkers is how many Check calls run at once. Default 1, as
	// RocketMQ's checkThreadPoolMinSize.
	CheckWorkers int
	// CheckQueueSize is how many broker checks may wait for a worker; more
	// are dropped (the broker asks again at its next check pass). Default
	// 2000, as RocketMQ's checkRequestHoldMax.
	CheckQueueSize int
	// CheckTimeout bounds the context of one Check call. Default 30s.
	CheckTimeout time.Duration
}

// DefaultTransactionProducerConfig returns the defaults;
// Client.NameServerAddrs and Listener must still be set.
func DefaultTransactionProducerConfig() TransactionProducerConfig {
	return TransactionProducerConfig{
		ProducerConfig: DefaultProducerConfig(),
		CheckWorkers:   1,
		CheckQueueSize: 2000,
		CheckTimeout:   30 * time.Second,
	}
}

func (c *TransactionProducerConfig) ensureDefaults() error {
	d := DefaultTransactionProducerConfig()
	if c.Listener == nil {
		return fmt.Errorf("%w: Listener is nil", ErrBadConfig)
	}
	confdefault.Positive(&c.CheckWorkers, d.CheckWorkers)
	confdefault.Positive(&c.CheckQueueSize, d.CheckQueueSize)
	confdefault.Positive(&c.CheckTimeout, d.CheckTimeout)
	return nil
}

// TransactionSendResult is the result of SendInTransaction: the half's send
// result and how the local transaction ended.
type TransactionSendResult struct {
	SendResult
	State LocalTransactionState
}

// txCheck is one CHECK_TRANSACTION_STATE waiting for a worker.
type txCheck struct {
	conn *remoting.Conn // the broker's connection; the answer goes back on it
	hdr  protocol.CheckTransactionStateRequestHeader
	msg  *MessageExt
}

// TransactionProducer sends transactional messages and answers the
// broker's checks about them. It is safe for concurrent use. One client
// instance (ClientConfig.ClientID) runs at most one TransactionProducer per
// group, since a check names only the group.
type TransactionProducer struct {
	cfg TransactionProducerConfig
	p   *Producer

	checks chan txCheck
	// checkCtx is the context of Check calls; cancelled when Shutdown's ctx
	// ends before they do.
	checkCtx    context.Context
	cancelCheck context.CancelFunc

	mu struct {
		sync.Mutex
		inst    *instance
		started bool
		closed  bool
	}
	stop    chan struct{}  // closed by Shutdown: workers take no more checks
	workers sync.WaitGroup // check workers
	sends   sync.WaitGroup // SendInTransaction calls in flight
}

// NewTransactionProducer validates cfg; nothing touches the network until
// Start.
func NewTransactionProducer(cfg TransactionProducerConfig) (*TransactionProducer, error) {
	if err := cfg.ensureDefaults(); err != nil {
		return nil, err
	}
	p, err := NewProducer(cfg.ProducerConfig)
	if err != nil {
		return nil, err
	}
	cfg.ProducerConfig = p.cfg
	tp := &TransactionProducer{cfg: cfg, p: p, checks: make(chan txCheck, cfg.CheckQueueSize), stop: make(chan struct{})}
	tp.checkCtx, tp.cancelCheck = context.WithCancel(context.Background())
	return tp, nil
}

// Start starts the producer, registers the group for the broker's checks
// (it goes out with the next heartbeat) and starts the check workers.
func (tp *TransactionProducer) Start(ctx context.Context) error {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	switch {
	case tp.mu.closed:
		return ErrClosed
	case tp.mu.started:
		return nil
	}
	if err := tp.p.Start(ctx); err != nil {
		return err
	}
	inst, err := tp.p.instance()
	if err != nil {
		return err
	}
	if err := inst.registerTxProducer(tp.cfg.Group, tp); err != nil {
		_ = tp.p.Shutdown(context.Background())
		tp.mu.closed = true
		return err
	}
	tp.mu.inst, tp.mu.started = inst, true
	for range tp.cfg.CheckWorkers {
		tp.workers.Add(1)
		go tp.checkWorker()
	}
	return nil
}

// Shutdown stops taking checks, waits for the SendInTransaction calls and
// Check calls in flight (when ctx ends first, the Check contexts are
// cancelled and waited for all the same), then shuts the producer down.
// Checks still queued are dropped: the broker asks again.
func (tp *TransactionProducer) Shutdown(ctx context.Context) error {
	tp.mu.Lock()
	if !tp.mu.started || tp.mu.closed {
		tp.mu.closed = true
		tp.mu.Unlock()
		tp.cancelCheck()
		return nil
	}
	tp.mu.closed = true
	inst := tp.mu.inst
	tp.mu.Unlock()
	// Order: no new checks reach the queue, then the workers end, then the
	// transactions in flight send their END, and only then the producer
	// (and maybe the instance and its connections) goes.
	inst.unregisterTxProducer(tp.cfg.Group, tp)
	close(tp.stop)
	done := make(chan struct{})
	go func() { tp.workers.Wait(); tp.sends.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = fmt.Errorf("client: transaction producer shutdown: checks or transactions still in flight: %w", ctx.Err())
		tp.cancelCheck()
		<-done // never leave a worker behind; Check sees its ctx end
	}
	tp.cancelCheck()
	if perr := tp.p.Shutdown(ctx); err == nil {
		err = perr
	}
	return err
}

// SendInTransaction sends msg as a half, runs the listener's ExecuteLocal
// and ends the transaction with its verdict (END_TRANSACTION, oneway). An
// error means the half was not stored (or not known to be) and ExecuteLocal
// did not run. A half the broker stored without SEND_OK (a flush or slave
// timeout) is rolled back without running ExecuteLocal, as RocketMQ does.
// A failure to send the END is logged, not returned: the broker's check
// resolves the transaction.
//
// Unlike RocketMQ 4.x, which silently drops it, a DelayLevel is refused
// (ErrBadMessage): a transactional message cannot be delayed.
func (tp *TransactionProducer) SendInTransaction(ctx context.Context, msg *Message) (*TransactionSendResult, error) {
	tp.mu.Lock()
	switch {
	case tp.mu.closed:
		tp.mu.Unlock()
		return nil, ErrClosed
	case !tp.mu.started:
		tp.mu.Unlock()
		return nil, ErrNotStarted
	}
	inst := tp.mu.inst
	tp.sends.Add(1)
	tp.mu.Unlock()
	defer tp.sends.Done()

	if msg == nil {
		return nil, fmt.Errorf("%w: nil message", ErrBadMessage)
	}
	if msg.DelayLevel != 0 {
		return nil, fmt.Errorf("%w: a transactional message cannot have a DelayLevel", ErrBadMessage)
	}
	half := *msg
	half.Properties = make(map[string]string, len(msg.Properties)+2)
	for k, v := range msg.Properties {
		half.Properties[k] = v
	}
	half.Properties[protocol.PropertyTransactionPrepared] = "true"
	half.Properties[protocol.PropertyProducerGroup] = tp.cfg.Group
	req, err := tp.p.prepare([]*Message{&half})
	if err != nil {
		return nil, err
	}
	req.sysFlag |= protocol.SysFlagTransactionPrep
	res, err := tp.p.sendWithRetry(ctx, inst, req, tp.cfg.RetryTimes, false)
	if err != nil {
		return nil, err
	}
	// The transaction id is the message id (UNIQ_KEY), as RocketMQ sets it
	// when the broker does not return one.
	if res.TransactionID == "" {
		res.TransactionID = res.MsgID
	}
	// ExecuteLocal sees the message as sent, so that it can note the
	// transaction id (UNIQ_KEY) Check's message will carry.
	half.Properties[protocol.PropertyUniqClientMessageIDKey] = res.MsgID
	state, remark := RollbackMessage, ""
	if res.Status == SendOK {
		state, remark = tp.executeLocal(ctx, &half)
	}
	if err := tp.endTransaction(ctx, inst, res, state, remark); err != nil {
		inst.log.Warn("client: end transaction failed; the broker's check will ask",
			"group", tp.cfg.Group, "msgId", res.MsgID, "state", state, "err", err)
	}
	return &TransactionSendResult{SendResult: res, State: state}, nil
}

// executeLocal runs ExecuteLocal; a panic is Unknown, with a remark for
// the broker's log.
func (tp *TransactionProducer) executeLocal(ctx context.Context, msg *Message) (state LocalTransactionState, remark string) {
	defer func() {
		if r := recover(); r != nil {
			state, remark = Unknown, fmt.Sprintf("executeLocalTransactionBranch exception: %v", r)
		}
	}()
	return tp.cfg.Listener.ExecuteLocal(ctx, msg), ""
}

// endTransaction sends the producer's own END_TRANSACTION for a half
// (DefaultMQProducerImpl.endTransaction): the broker finds the half by the
// commit log offset in its offset message id and checks the queue offset.
func (tp *TransactionProducer) endTransaction(ctx context.Context, inst *instance, res SendResult, state LocalTransactionState, remark string) error {
	_, clOffset, err := message.ParseOffsetMsgID(res.OffsetMsgID)
	if err != nil {
		return fmt.Errorf("client: end transaction: offset message id %q: %w", res.OffsetMsgID, err)
	}
	// The END must go out even when ctx ended meanwhile (the local
	// transaction is done); it is bounded by SendTimeout instead.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), tp.cfg.SendTimeout)
	defer cancel()
	addr, err := inst.brokerAddr(ctx, res.Queue.BrokerName)
	if err != nil {
		return err
	}
	h := protocol.EndTransactionRequestHeader{
		ProducerGroup:        tp.cfg.Group,
		TranStateTableOffset: res.QueueOffset,
		CommitLogOffset:      clOffset,
		CommitOrRollback:     state.wire(),
		MsgID:                res.MsgID, // the UNIQ_KEY, as RocketMQ's clients send it
		TransactionID:        res.TransactionID,
		BrokerName:           res.Queue.BrokerName,
	}
	req := protocol.NewRequest(protocol.ReqEndTransaction, h.Encode(), nil)
	req.Remark = remark
	if err := inst.rc.InvokeOneway(ctx, addr, req); err != nil {
		return transportError("end transaction", res.Queue.BrokerName, addr, err)
	}
	return nil
}

// offerCheck queues a broker check for a worker without blocking the
// connection; false when the queue is full or the producer is stopping.
func (tp *TransactionProducer) offerCheck(c txCheck) bool {
	select {
	case <-tp.stop:
		return false
	default:
	}
	select {
	case tp.checks <- c:
		return true
	default:
		return false
	}
}

func (tp *TransactionProducer) checkWorker() {
	defer tp.workers.Done()
	for {
		// Stopping wins over a queued check: Shutdown waits only for the
		// checks already running.
		select {
		case <-tp.stop:
			return
		default:
		}
		select {
		case <-tp.stop:
			return
		case c := <-tp.checks:
			tp.answerCheck(c)
		}
	}
}

// answerCheck runs Check and answers the broker on the connection the
// check came in on (DefaultMQProducerImpl.checkTransactionState).
func (tp *TransactionProducer) answerCheck(c txCheck) {
	state, remark := tp.runCheck(c.msg)
	msgID := c.msg.UniqKey()
	if msgID == "" {
		msgID = c.msg.MsgID
	}
	h := protocol.EndTransactionRequestHeader{
		ProducerGroup:        tp.cfg.Group,
		TranStateTableOffset: c.hdr.TranStateTableOffset,
		CommitLogOffset:      c.hdr.CommitLogOffset,
		CommitOrRollback:     state.wire(),
		FromTransactionCheck: true,
		MsgID:                msgID,
		TransactionID:        c.hdr.TransactionID,
		BrokerName:           c.msg.Queue.BrokerName,
	}
	req := protocol.NewRequest(protocol.ReqEndTransaction, h.Encode(), nil)
	req.Remark = remark
	if err := c.conn.InvokeOneway(req); err != nil {
		tp.p.cfg.Client.Logger.Warn("client: answer to a transaction check failed; the broker will ask again",
			"group", tp.cfg.Group, "broker", c.conn.RemoteAddr(), "msgId", msgID, "err", err)
	}
}

// runCheck calls Check under CheckTimeout; a panic is Unknown.
func (tp *TransactionProducer) runCheck(msg *MessageExt) (state LocalTransactionState, remark string) {
	ctx, cancel := context.WithTimeout(tp.checkCtx, tp.cfg.CheckTimeout)
	defer cancel()
	defer func() {
		if r := recover(); r != nil {
			state, remark = Unknown, fmt.Sprintf("checkLocalTransactionState exception: %v", r)
		}
	}()
	return tp.cfg.Listener.Check(ctx, msg), ""
}

// errNoTxProducer: a check names a group no TransactionProducer of this
// instance runs.
var errNoTxProducer = errors.New("client: no transaction producer of the group")

// handleCheckTransaction serves CHECK_TRANSACTION_STATE (39), oneway from
// the broker: it decodes the check and hands it to the group's producer,
// never waiting for Check itself.
func (in *instance) handleCheckTransaction(_ context.Context, conn *remoting.Conn, req *protocol.Command) *protocol.Command {
	if err := in.offerCheck(conn, req); err != nil {
		in.log.Warn("client: transaction check dropped; the broker will ask again", "broker", conn.RemoteAddr(), "err", err)
	}
	return nil
}

func (in *instance) offerCheck(conn *remoting.Conn, req *protocol.Command) error {
	var h protocol.CheckTransactionStateRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return err
	}
	msgs, err := message.DecodeMessages(req.Body)
	if err != nil {
		return fmt.Errorf("client: transaction check body: %w", err)
	}
	if len(msgs) != 1 {
		return fmt.Errorf("client: transaction check body holds %d messages", len(msgs))
	}
	m := msgs[0]
	group := m.Property(protocol.PropertyProducerGroup)
	in.mu.Lock()
	tp := in.mu.txProducers[group]
	in.mu.Unlock()
	if tp == nil {
		return fmt.Errorf("%w %q", errNoTxProducer, group)
	}
	if h.TransactionID == "" {
		h.TransactionID = m.UniqKey()
	}
	ext := &MessageExt{MessageExt: *m, Queue: queue.MessageQueue{
		Topic: m.Topic, BrokerName: in.routes.brokerNameOf(conn.RemoteAddr()), QueueID: m.QueueID,
	}}
	if !tp.offerCheck(txCheck{conn: conn, hdr: h, msg: ext}) {
		return fmt.Errorf("client: transaction checks of group %q are queued to capacity or stopping", group)
	}
	return nil
}

func (in *instance) registerTxProducer(group string, tp *TransactionProducer) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if _, dup := in.mu.txProducers[group]; dup {
		return fmt.Errorf("%w: transaction producer group %q is already running in client %s; give the producer its own InstanceName",
			ErrBadConfig, group, in.clientID)
	}
	in.mu.txProducers[group] = tp
	return nil
}

func (in *instance) unregisterTxProducer(group string, tp *TransactionProducer) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.mu.txProducers[group] == tp {
		delete(in.mu.txProducers, group)
	}
}

// brokerNameOf returns the name of the broker at addr, or "" when no route
// names it.
func (rt *routeTable) brokerNameOf(addr string) string {
	rt.mu.RLock()
	defer rt.mu.RUnlock()
	for name, b := range rt.brokers {
		for _, a := range b.BrokerAddrs {
			if strings.EqualFold(a, addr) {
				return name
			}
		}
	}
	return ""
}
