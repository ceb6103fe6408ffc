package client

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/runnelmq/runnel/client/queue"
	"github.com/runnelmq/runnel/internal/confdefault"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// ProducerConfig configures a Producer. Zero fields take the defaults of
// DefaultProducerConfig.
type ProducerConfig struct {
	Client ClientConfig
	// Group is the producer group. Default "DEFAULT_PRODUCER".
	Group string
	// SendTimeout bounds one Send, all attempts included, when the
	// caller's context has no earlier deadline. Default 3s.
	SendTimeout time.Duration
	// RetryTimes is how many more attempts a failed synchronous or
	// asynchronous send makes, each on another broker when there is one.
	// Default 2 (3 attempts), as RocketMQ: zero takes it, like every zero
	// field here. Negative means none (one attempt).
	RetryTimes int
	// CompressOver compresses (zlib) single-message bodies of at least this
	// many bytes. Default 4096; negative disables compression.
	CompressOver int
	// CompressLevel is the zlib level. Default 5.
	CompressLevel int
	// MaxMessageSize is the largest body (or batch body) accepted.
	// Default 4 MiB.
	MaxMessageSize int
	// CreateTopicKey is the template topic for auto-creation. Default
	// "TBW102".
	CreateTopicKey string
	// DefaultTopicQueueNums is the queue count of auto-created topics.
	// Default 4.
	DefaultTopicQueueNums int
	// Selector picks the queue. Default: a RoundRobinSelector. Use
	// HashSelector for orderly messages.
	Selector QueueSelector
}

// DefaultProducerConfig returns the defaults; Client.NameServerAddrs must
// still be set.
func DefaultProducerConfig() ProducerConfig {
	return ProducerConfig{
		Client:                DefaultClientConfig(),
		Group:                 "DEFAULT_PRODUCER",
		SendTimeout:           3 * time.Second,
		RetryTimes:            2,
		CompressOver:          4096,
		CompressLevel:         5,
		MaxMessageSize:        4 << 20,
		CreateTopicKey:        protocol.DefaultTopicKey,
		DefaultTopicQueueNums: 4,
	}
}

func (c *ProducerConfig) ensureDefaults() error {
	d := DefaultProducerConfig()
	if c.Group == "" {
		c.Group = d.Group
	}
	if err := validateGroup("Group", c.Group); err != nil {
		return err
	}
	confdefault.Positive(&c.SendTimeout, d.SendTimeout)
	switch {
	case c.RetryTimes == 0:
		c.RetryTimes = d.RetryTimes
	case c.RetryTimes < 0:
		c.RetryTimes = 0
	}
	if c.CompressOver == 0 {
		c.CompressOver = d.CompressOver
	}
	if c.CompressLevel == 0 {
		c.CompressLevel = d.CompressLevel
	}
	if c.CompressLevel < -1 || c.CompressLevel > 9 {
		return fmt.Errorf("%w: CompressLevel %d, want 1..9", ErrBadConfig, c.CompressLevel)
	}
	confdefault.Positive(&c.MaxMessageSize, d.MaxMessageSize)
	if c.CreateTopicKey == "" {
		c.CreateTopicKey = d.CreateTopicKey
	}
	confdefault.Positive(&c.DefaultTopicQueueNums, d.DefaultTopicQueueNums)
	if c.Selector == nil {
		c.Selector = &RoundRobinSelector{}
	}
	return nil
}

// SendStatus is the outcome of a send the broker accepted.
type SendStatus int

const (
	// SendOK: stored (and flushed/replicated as the broker is configured).
	SendOK SendStatus = iota
	// SendFlushDiskTimeout: stored, but the synchronous flush timed out.
	SendFlushDiskTimeout
	// SendFlushSlaveTimeout: stored, but replication timed out.
	SendFlushSlaveTimeout
	// SendSlaveNotAvailable: stored, but no slave to replicate to.
	SendSlaveNotAvailable
)

func (s SendStatus) String() string {
	return [...]string{"SEND_OK", "FLUSH_DISK_TIMEOUT", "FLUSH_SLAVE_TIMEOUT", "SLAVE_NOT_AVAILABLE"}[s]
}

// SendResult describes a stored message (or batch).
type SendResult struct {
	Status SendStatus
	// MsgID is the client message id (UNIQ_KEY); for a batch, the ids of
	// its messages joined by commas.
	MsgID string
	// OffsetMsgID is the broker's id (store host + commit log offset); for a
	// batch, comma-joined.
	OffsetMsgID string
	Queue       queue.MessageQueue
	// QueueOffset is the offset of the (first) message in its queue.
	QueueOffset   int64
	TransactionID string
	// RecallHandle, set for a timer message (DeliverAt, DeliverAfter) by a
	// broker that supports recalling (RocketMQ 5.3, Runnel), withdraws the
	// message before it falls due: Producer.Recall.
	RecallHandle string
}

// Producer sends messages. It is safe for concurrent use.
type Producer struct {
	cfg ProducerConfig
	// uniq makes the message ids (UNIQ_KEY); they carry the client's
	// address, as Java's do, so an operator can tell which host produced
	// a message.
	uniq *message.UniqIDGenerator

	mu struct {
		sync.Mutex
		inst    *instance
		started bool
		closed  bool
	}
	wg sync.WaitGroup // async sends in flight
}

// NewProducer validates cfg; nothing touches the network until Start.
func NewProducer(cfg ProducerConfig) (*Producer, error) {
	if err := cfg.ensureDefaults(); err != nil {
		return nil, err
	}
	if err := cfg.Client.ensureDefaults(); err != nil {
		return nil, err
	}
	ip, _ := netip.ParseAddr(cfg.Client.ClientIP)
	return &Producer{cfg: cfg, uniq: message.NewUniqIDGenerator(ip)}, nil
}

// Start joins (or starts) the client instance. It sends nothing: routes are
// fetched on the first send.
func (p *Producer) Start(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.mu.closed:
		return ErrClosed
	case p.mu.started:
		return nil
	}
	inst, err := acquireInstance(p.cfg.Client)
	if err != nil {
		return err
	}
	inst.registerProducer(p.cfg.Group)
	p.mu.inst, p.mu.started = inst, true
	return ctx.Err()
}

// Shutdown waits for asynchronous sends in flight (or ctx), then leaves the
// client instance.
func (p *Producer) Shutdown(ctx context.Context) error {
	p.mu.Lock()
	if !p.mu.started || p.mu.closed {
		p.mu.closed = true
		p.mu.Unlock()
		return nil
	}
	p.mu.closed = true
	inst := p.mu.inst
	p.mu.Unlock()
	var err error
	// Async sends end at their own send timeout.
	if werr := waitAll(ctx, &p.wg); werr != nil {
		err = fmt.Errorf("client: producer shutdown: async sends still in flight: %w", werr)
	}
	inst.unregisterProducer(p.cfg.Group)
	inst.release()
	return err
}

// waitAll waits for wg's goroutines. When ctx ends first it says so with
// ctx's error, but still waits: a shutdown never leaves goroutines behind.
func waitAll(ctx context.Context, wg *sync.WaitGroup) error {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		<-done
		return ctx.Err()
	}
}

func (p *Producer) instance() (*instance, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.instanceLocked()
}

// instanceLocked is instance with p.mu held.
func (p *Producer) instanceLocked() (*instance, error) {
	switch {
	case p.mu.closed:
		return nil, ErrClosed
	case !p.mu.started:
		return nil, ErrNotStarted
	}
	return p.mu.inst, nil
}

// Send sends msgs synchronously: one message as SEND_MESSAGE, several (all
// to the same topic) as one batch. Retryable failures (transport errors,
// SYSTEM_ERROR, SERVICE_NOT_AVAILABLE, NO_PERMISSION, TOPIC_NOT_EXIST) are
// retried on another broker up to RetryTimes times.
func (p *Producer) Send(ctx context.Context, msgs ...*Message) (SendResult, error) {
	inst, err := p.instance()
	if err != nil {
		return SendResult{}, err
	}
	var req sendRequest // on the stack: a synchronous send keeps it
	if err := p.prepareInto(msgs, &req); err != nil {
		return SendResult{}, err
	}
	return p.sendWithRetry(ctx, inst, &req, p.cfg.RetryTimes, false)
}

// SendAsync sends like Send in the background and calls cb once with the
// result. It returns an error (and does not call cb) only when the send
// cannot start: a bad message or a producer that is not running.
// Shutdown waits for callbacks in flight.
func (p *Producer) SendAsync(ctx context.Context, cb func(SendResult, error), msgs ...*Message) error {
	inst, err := p.startAsync()
	if err != nil {
		return err
	}
	req, err := p.prepare(msgs)
	if err != nil {
		p.wg.Done()
		return err
	}
	go func() {
		defer p.wg.Done()
		// The caller's ctx may end as soon as SendAsync returns; the send
		// keeps only its values and is bounded by SendTimeout.
		cb(p.sendWithRetry(context.WithoutCancel(ctx), inst, req, p.cfg.RetryTimes, false))
	}()
	return nil
}

// startAsync counts one asynchronous call that Shutdown waits for (the
// caller's p.wg.Done ends it) and returns the instance, or fails when the
// producer is not running. The state check and wg.Add share one critical
// section so that Shutdown, which sets closed under the same lock before
// it waits, never misses a call.
func (p *Producer) startAsync() (*instance, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	inst, err := p.instanceLocked()
	if err == nil {
		p.wg.Add(1)
	}
	return inst, err
}

// SendOneway sends one message without waiting for the broker's answer;
// only transport failures are retried.
func (p *Producer) SendOneway(ctx context.Context, msg *Message) error {
	inst, err := p.instance()
	if err != nil {
		return err
	}
	req, err := p.prepare([]*Message{msg})
	if err != nil {
		return err
	}
	_, err = p.sendWithRetry(ctx, inst, req, p.cfg.RetryTimes, true)
	return err
}

// sendRequest is a validated, encoded send.
type sendRequest struct {
	topic   string
	first   *Message
	batch   bool
	sysFlag int32
	flag    int32
	props   string
	body    []byte
	// pooled holds body when it is a recycled batch body (release).
	pooled *[]byte
	// id is a single message's UNIQ_KEY; ids are a batch's.
	id  string
	ids []string
	// reply is a reply message (MSG_TYPE reply), sent as SEND_REPLY_MESSAGE.
	reply bool
}

// msgID is the MsgID of r's SendResult: the UNIQ_KEY, comma-joined for a
// batch.
func (r *sendRequest) msgID() string {
	if r.batch {
		return strings.Join(r.ids, ",")
	}
	return r.id
}

func (p *Producer) prepare(msgs []*Message) (*sendRequest, error) {
	r := new(sendRequest)
	if err := p.prepareInto(msgs, r); err != nil {
		return nil, err
	}
	return r, nil
}

// prepareInto is prepare into r.
func (p *Producer) prepareInto(msgs []*Message, r *sendRequest) error {
	if len(msgs) == 0 {
		return fmt.Errorf("%w: no message to send", ErrBadMessage)
	}
	for _, m := range msgs {
		if m == nil {
			return fmt.Errorf("%w: nil message", ErrBadMessage)
		}
		if err := m.validate(p.cfg.MaxMessageSize); err != nil {
			return err
		}
		if m.Topic != msgs[0].Topic {
			return fmt.Errorf("%w: a batch mixes topics %s and %s", ErrBadMessage, msgs[0].Topic, m.Topic)
		}
	}
	*r = sendRequest{topic: msgs[0].Topic, first: msgs[0]}
	if len(msgs) == 1 {
		m := msgs[0]
		r.id = p.uniq.Next()
		r.props = m.wireProperties(r.id)
		r.flag = m.Flag
		r.body = m.Body
		r.reply = m.Properties[protocol.PropertyMessageType] == replyMessageType
		if p.cfg.CompressOver > 0 && len(m.Body) >= p.cfg.CompressOver {
			z, err := message.Compress(m.Body, p.cfg.CompressLevel)
			if err != nil {
				return err
			}
			r.body, r.sysFlag = z, protocol.SysFlagCompressed
		}
		return nil
	}
	r.batch = true
	inner := make([]*protocol.Message, len(msgs))
	for i, m := range msgs {
		if m.delayed() > 0 {
			return fmt.Errorf("%w: a batch cannot carry delayed messages", ErrBadMessage)
		}
		props := m.properties()
		// Unlike the official Go client we give batch messages ids too, so
		// consumers see the same MsgID the producer got back.
		id := p.uniq.Next()
		props[protocol.PropertyUniqClientMessageIDKey] = id
		r.ids = append(r.ids, id)
		inner[i] = &protocol.Message{Topic: m.Topic, Flag: m.Flag, Properties: props, Body: m.Body}
	}
	buf := getBatchBody()
	body, err := encodeBatch(*buf, inner)
	if err != nil {
		putBatchBody(buf)
		return err
	}
	*buf = body
	if len(body) > p.cfg.MaxMessageSize {
		putBatchBody(buf)
		return fmt.Errorf("%w: batch of %d bytes exceeds the %d-byte limit", ErrBadMessage, len(body), p.cfg.MaxMessageSize)
	}
	r.body, r.pooled = body, buf
	return nil
}

// release gives a batch's recycled body back; r is not sent again.
func (r *sendRequest) release() {
	if r.pooled != nil {
		putBatchBody(r.pooled)
		r.pooled, r.body = nil, nil
	}
}

// sendBudget is the time a Send's attempts share (SendTimeout, or ctx's
// earlier deadline). It is kept as a deadline, and a context carrying it
// is made only for the step that needs one: a route lookup, a dial, a
// recovery. A context per send was 4 of the ~25 allocations a send and its
// answer cost; a send by a cached route on a live connection makes none.
type sendBudget struct {
	parent   context.Context
	deadline time.Time
	ctx      context.Context
	cancel   context.CancelFunc
}

func newSendBudget(ctx context.Context, timeout time.Duration) sendBudget {
	return sendBudget{parent: ctx, deadline: time.Now().Add(timeout)}
}

// context returns a context that ends at the deadline (or with the
// parent's), made on first use.
func (b *sendBudget) context() context.Context {
	if b.ctx == nil {
		b.ctx, b.cancel = context.WithDeadline(b.parent, b.deadline)
	}
	return b.ctx
}

// release frees the context, if one was made.
func (b *sendBudget) release() {
	if b.cancel != nil {
		b.cancel()
	}
}

// err is the context's Err without making one: the parent's error, or
// DeadlineExceeded once the deadline passed.
func (b *sendBudget) err() error {
	if err := b.parent.Err(); err != nil {
		return err
	}
	if !time.Now().Before(b.deadline) {
		return context.DeadlineExceeded
	}
	return nil
}

// sendWithRetry sends r, to another broker after a retryable failure, up
// to retries more times within SendTimeout. r is spent: a recycled batch
// body goes back when it returns.
func (p *Producer) sendWithRetry(ctx context.Context, inst *instance, r *sendRequest, retries int, oneway bool) (SendResult, error) {
	defer r.release() // no attempt sends r again
	b := newSendBudget(ctx, p.cfg.SendTimeout)
	defer b.release()
	inst.notePublish(r.topic)
	var lastErr error
	lastBroker := ""
	for attempt := 0; attempt <= retries; attempt++ {
		route := inst.routes.get(r.topic)
		if route == nil || len(route.publish) == 0 {
			var err error
			route, err = inst.lookUpPublishRoute(b.context(), r.topic, p.cfg.CreateTopicKey, p.cfg.DefaultTopicQueueNums)
			if err != nil {
				if lastErr == nil {
					lastErr = err
				}
				if errors.Is(err, ErrTopicNotExist) || b.err() != nil {
					// After a refused attempt the refusal says more than a
					// route that, read again since, offers no writable queue.
					return SendResult{}, lastErr
				}
				continue
			}
		}
		mq := p.cfg.Selector.Select(r.first, route.publish, lastBroker)
		res, err, retry := p.sendTo(&b, inst, mq, r, oneway)
		if err == nil {
			return res, nil
		}
		lastErr, lastBroker = err, mq.BrokerName
		if !retry || b.err() != nil {
			return SendResult{}, err
		}
		// A master that moved is found by reading the route now, not at
		// the next periodic refresh. Wait for a refresh due later only when
		// no other broker can take the retry, and not after the last try.
		wait := attempt < retries && !hasOtherBroker(route, mq.BrokerName)
		inst.recoverRoute(b.context(), r.topic, mq.BrokerName, inst.routes.masterAddr(mq.BrokerName), err, wait)
		var be *BrokerError
		if errors.As(err, &be) && be.Code == protocol.RespTopicNotExist {
			// The broker does not have it yet: forget the cached route so
			// the next attempt asks again.
			inst.routes.mu.Lock()
			delete(inst.routes.topics, r.topic)
			inst.routes.mu.Unlock()
		}
	}
	return SendResult{}, lastErr
}

// fieldBuf is a pooled field list of a send's header.
type fieldBuf struct{ fs []protocol.Field }

var sendFieldBufs = sync.Pool{New: func() any { return new(fieldBuf) }}

// put clears the list (its strings are the sent message's) and pools it.
func (b *fieldBuf) put() {
	clear(b.fs)
	b.fs = b.fs[:0]
	sendFieldBufs.Put(b)
}

// sendTo makes one attempt. retry says whether another attempt may help.
func (p *Producer) sendTo(b *sendBudget, inst *instance, mq queue.MessageQueue, r *sendRequest, oneway bool) (SendResult, error, bool) {
	addr := inst.routes.masterAddr(mq.BrokerName)
	if addr == "" {
		var err error
		if addr, err = inst.lookUpBrokerAddr(b.context(), mq.BrokerName); err != nil {
			return SendResult{}, err, true
		}
	}
	h := protocol.SendMessageRequestHeader{
		ProducerGroup:         p.cfg.Group,
		Topic:                 r.topic,
		DefaultTopic:          p.cfg.CreateTopicKey,
		DefaultTopicQueueNums: int32(p.cfg.DefaultTopicQueueNums),
		QueueID:               mq.QueueID,
		SysFlag:               r.sysFlag,
		BornTimestamp:         time.Now().UnixMilli(),
		Flag:                  r.flag,
		Properties:            r.props,
		Batch:                 r.batch,
		BrokerName:            mq.BrokerName,
		// Not a consumer's re-send: no maximum, so a send to a %RETRY%
		// topic gets the group's default rather than 0.
		MaxReconsumeTimes: -1,
	}
	// Every send goes in the short-key (V2) header, as Java's client sends
	// them (sendSmartMsg), and in RocketMQ's binary header encoding rather
	// than JSON: both sides then skip JSON's quoting and scanning and the
	// long key names (Java brokers read either; the answer comes back in
	// the request's encoding). See docs/performance-history.md, "The send path".
	code := protocol.ReqSendMessageV2
	switch {
	case r.batch:
		code = protocol.ReqSendBatchMessage
	case r.reply:
		code = protocol.ReqSendReplyMessageV2
	}
	// The header goes as a field list, not a map (see AppendV2), in a
	// pooled array: the call encodes it before it returns, and keeps
	// nothing of it.
	fb := sendFieldBufs.Get().(*fieldBuf)
	defer fb.put()
	req := protocol.NewRequest(code, nil, r.body)
	req.MoreExt = h.AppendV2(fb.fs[:0])
	fb.fs = req.MoreExt
	req.SerializeType = protocol.SerializeRocketMQ
	if oneway {
		if err := inst.rc.InvokeOneway(b.context(), addr, req); err != nil {
			return SendResult{}, transportError("send", mq.BrokerName, addr, err), true
		}
		return SendResult{Status: SendOK, MsgID: r.msgID(), Queue: mq}, nil, false
	}
	left := time.Until(b.deadline)
	if left <= 0 {
		return SendResult{}, transportError("send", mq.BrokerName, addr, &remoting.TimeoutError{Addr: addr, Code: code}), true
	}
	// A caller that gave up is not sent for: the call below would race its
	// answer against the ended context, and a loaded machine lets the
	// answer win.
	if err := b.parent.Err(); err != nil {
		return SendResult{}, transportError("send", mq.BrokerName, addr, err), false
	}
	// The answer's header is read raw, into the typed header: no map.
	resp, err := inst.rc.InvokeWith(b.parent, addr, req, remoting.CallOptions{Timeout: left, RawAnswer: true, Give: true})
	if err != nil {
		return SendResult{}, transportError("send", mq.BrokerName, addr, err), true
	}
	res := SendResult{MsgID: r.msgID(), Queue: mq}
	switch resp.Code {
	case protocol.RespSuccess:
		res.Status = SendOK
	case protocol.RespFlushDiskTimeout:
		res.Status = SendFlushDiskTimeout
	case protocol.RespFlushSlaveTimeout:
		res.Status = SendFlushSlaveTimeout
	case protocol.RespSlaveNotAvailable:
		res.Status = SendSlaveNotAvailable
	default:
		return SendResult{}, brokerError("send", mq.BrokerName, addr, resp), protocol.ResponseCodeOf(resp.Code).Retriable
	}
	var rh protocol.SendMessageResponseHeader
	if err := rh.DecodeCommand(resp); err != nil {
		return SendResult{}, fmt.Errorf("client: send to %s (%s): %w", mq.BrokerName, addr, err), false
	}
	res.OffsetMsgID = rh.MsgID
	res.QueueOffset = rh.QueueOffset
	res.TransactionID = rh.TransactionID
	res.RecallHandle = rh.RecallHandle
	if rh.QueueID != mq.QueueID {
		res.Queue.QueueID = rh.QueueID
	}
	return res, nil, false
}
