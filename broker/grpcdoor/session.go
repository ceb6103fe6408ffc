package grpcdoor

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/proto"

	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/broker/transaction"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// channelIDBit marks the core channel ids of this door's sessions: the
// remoting door numbers its connections from 1 up, so the two never meet
// in the core's client table.
const channelIDBit = 1 << 63

// sessions are the door's clients by client id.
type sessions struct {
	d      *Door
	nextID atomic.Uint64
	mu     sync.Mutex
	by     map[string]*session
}

func newSessions(d *Door) *sessions { return &sessions{d: d, by: map[string]*session{}} }

// get returns the session of clientID, nil if there is none.
func (ss *sessions) get(clientID string) *session {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.by[clientID]
}

// open returns the session of c's client, made if it has none.
func (ss *sessions) open(c caller) *session {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s := ss.by[c.ClientID]
	if s == nil {
		s = &session{d: ss.d, id: channelIDBit | ss.nextID.Add(1), clientID: c.ClientID}
		s.mu.pending = map[string]func(*v2.TelemetryCommand){}
		ss.by[c.ClientID] = s
	}
	s.mu.Lock()
	s.mu.lang, s.mu.version, s.mu.remote = c.Language, c.Version, c.Remote
	s.mu.lastSeen = ss.d.cfg.Now()
	s.mu.Unlock()
	return s
}

// drop forgets s and tells the core its channel is gone.
func (ss *sessions) drop(s *session) {
	ss.mu.Lock()
	if ss.by[s.clientID] == s {
		delete(ss.by, s.clientID)
	}
	ss.mu.Unlock()
	ss.d.core.ChannelClosed(s.id)
}

// sweepInterval is how often idle sessions are looked for.
const sweepInterval = 10 * time.Second

// sweep forgets the sessions without a Telemetry stream that have been
// idle for the channel expiry.
func (ss *sessions) sweep() {
	now := ss.d.cfg.Now()
	var idle []*session
	ss.mu.Lock()
	for _, s := range ss.by {
		s.mu.Lock()
		if s.mu.stream == nil && now.Sub(s.mu.lastSeen) >= ss.d.cfg.ChannelExpiry {
			idle = append(idle, s)
		}
		s.mu.Unlock()
	}
	ss.mu.Unlock()
	for _, s := range idle {
		ss.drop(s)
	}
}

// ExpireSessions forgets the sessions idle for the channel expiry on the
// door's clock, as its loop does every 10 s (tests move their clock).
func (d *Door) ExpireSessions() { d.sessions.sweep() }

// session is one client of the door: its Settings, its Telemetry stream
// and the core's Channel to it.
type session struct {
	d        *Door
	id       uint64
	clientID string
	nonces   atomic.Uint64
	mu       struct {
		sync.Mutex
		settings              *v2.Settings
		stream                *telemetry
		lastSeen              time.Time
		lang, version, remote string
		// pending are calls waiting for the client's answer on the stream,
		// by nonce.
		pending map[string]func(*v2.TelemetryCommand)
	}
}

// settings returns the client's Settings as it sent them, nil before any.
func (s *session) settings() *v2.Settings {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.settings
}

func (s *session) setSettings(st *v2.Settings) {
	s.mu.Lock()
	s.mu.settings = proto.Clone(st).(*v2.Settings)
	s.mu.lastSeen = s.d.cfg.Now()
	s.mu.Unlock()
}

// attach makes t the session's stream.
func (s *session) attach(t *telemetry) {
	s.mu.Lock()
	s.mu.stream = t
	s.mu.Unlock()
}

// detach forgets t if it is still the session's stream, and reports
// whether it was.
func (s *session) detach(t *telemetry) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.stream != t {
		return false
	}
	s.mu.stream = nil
	s.mu.lastSeen = s.d.cfg.Now()
	return true
}

// touch notes the client was heard from.
func (s *session) touch() {
	s.mu.Lock()
	s.mu.lastSeen = s.d.cfg.Now()
	s.mu.Unlock()
}

// send writes cmd to the client's stream; false when it has none.
func (s *session) send(cmd *v2.TelemetryCommand) bool {
	s.mu.Lock()
	t := s.mu.stream
	s.mu.Unlock()
	return t != nil && t.send(cmd)
}

// meta is what the client says of itself, as the core keeps it.
func (s *session) meta() core.ClientMeta {
	s.mu.Lock()
	defer s.mu.Unlock()
	return core.ClientMeta{Language: s.mu.lang, Version: versionOrdinal(s.mu.version), Protocol: core.ProtocolGRPC}
}

// The core's Channel.

func (s *session) ID() uint64 { return s.id }

func (s *session) RemoteAddr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.remote
}

// Closed reports whether the client has no Telemetry stream open: the
// core's calls to it have no way to reach it.
func (s *session) Closed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.stream == nil
}

// NotifyConsumerIDsChanged: RocketMQ 5 consumers do not rebalance by
// membership (the broker assigns queues), so there is nothing to tell.
func (s *session) NotifyConsumerIDsChanged(string) {}

// ResetOffset: POP consumers keep no offsets of their own.
func (s *session) ResetOffset(string, string, int64, map[message.Queue]int64) {}

// CheckTransactionState asks the producer how a transaction ended, as a
// RecoverOrphanedTransactionCommand on its stream; the transaction id
// names the half the check renewed, which the producer's EndTransaction
// gives back.
func (s *session) CheckTransactionState(c transaction.Check, msg []byte) {
	m, _, err := message.DecodeStoredMessage(msg, true)
	if err != nil {
		s.d.log.Warn("grpcdoor: transaction check of an undecodable half", "client", s.clientID, "err", err)
		return
	}
	cmd := &v2.TelemetryCommand{Command: &v2.TelemetryCommand_RecoverOrphanedTransactionCommand{
		RecoverOrphanedTransactionCommand: &v2.RecoverOrphanedTransactionCommand{
			TransactionId: encodeTxID(c.CommitLogOffset, c.QueueOffset),
			Message:       s.d.checkMessage(m),
		}}}
	if !s.send(cmd) {
		s.d.log.Debug("grpcdoor: transaction check not delivered: no telemetry stream", "client", s.clientID)
	}
}

// call sends cmd with a fresh nonce (set by withNonce) and hands the
// client's answer to done, once: the answer, or ctx's end.
func (s *session) call(ctx context.Context, withNonce func(nonce string) *v2.TelemetryCommand, done func(*v2.TelemetryCommand, error)) error {
	nonce := strconv.FormatUint(s.nonces.Add(1), 10)
	var once sync.Once
	finish := func(cmd *v2.TelemetryCommand, err error) { once.Do(func() { done(cmd, err) }) }
	s.mu.Lock()
	s.mu.pending[nonce] = func(cmd *v2.TelemetryCommand) { finish(cmd, nil) }
	s.mu.Unlock()
	forget := func() {
		s.mu.Lock()
		delete(s.mu.pending, nonce)
		s.mu.Unlock()
	}
	stopWatch := context.AfterFunc(ctx, func() {
		forget()
		finish(nil, errors.Join(core.ErrClientTimeout, ctx.Err()))
	})
	if !s.send(withNonce(nonce)) {
		stopWatch()
		forget()
		return errors.New("grpcdoor: the client has no telemetry stream")
	}
	return nil
}

// answered hands a client's answer on its stream to the call waiting for
// its nonce.
func (s *session) answered(nonce string, cmd *v2.TelemetryCommand) {
	s.mu.Lock()
	fn := s.mu.pending[nonce]
	delete(s.mu.pending, nonce)
	s.mu.Unlock()
	if fn != nil {
		fn(cmd)
	}
}

// ConsumerRunningInfo asks the client for its thread stacks (the only
// running info a RocketMQ 5 client gives, as with the proxy) and answers
// a ConsumerRunningInfo with them.
func (s *session) ConsumerRunningInfo(ctx context.Context, group, clientID string, jstack bool, done func(core.ClientReply, error)) error {
	info := func(stack string) core.ClientReply {
		body := []byte(`{"properties":{"PROP_CLIENT_VERSION":` + strconv.Quote(s.meta().Language) +
			`},"subscriptionSet":[],"mqTable":{},"statusTable":{},"jstack":` + strconv.Quote(stack) + `}`)
		return core.ClientReply{OK: true, Status: int32(protocol.RespSuccess), Body: body}
	}
	if !jstack {
		done(info(""), nil)
		return nil
	}
	return s.call(ctx, func(nonce string) *v2.TelemetryCommand {
		return &v2.TelemetryCommand{Command: &v2.TelemetryCommand_PrintThreadStackTraceCommand{
			PrintThreadStackTraceCommand: &v2.PrintThreadStackTraceCommand{Nonce: nonce}}}
	}, func(cmd *v2.TelemetryCommand, err error) {
		if err != nil {
			done(core.ClientReply{}, err)
			return
		}
		if cmd.GetStatus().GetCode() != v2.Code_OK {
			done(core.ClientReply{Status: int32(protocol.RespSystemError), Remark: cmd.GetStatus().GetMessage()}, nil)
			return
		}
		done(info(cmd.GetThreadStackTrace().GetThreadStackTrace()), nil)
	})
}

// ConsumeMessageDirectly has the client verify a message
// (VerifyMessageCommand) and answers a ConsumeMessageDirectlyResult.
func (s *session) ConsumeMessageDirectly(ctx context.Context, r core.DirectConsume, msg []byte, done func(core.ClientReply, error)) error {
	m, _, err := message.DecodeStoredMessage(msg, true)
	if err != nil {
		return err
	}
	c := caller{ClientID: s.clientID}
	return s.call(ctx, func(nonce string) *v2.TelemetryCommand {
		return &v2.TelemetryCommand{Command: &v2.TelemetryCommand_VerifyMessageCommand{
			VerifyMessageCommand: &v2.VerifyMessageCommand{Nonce: nonce, Message: s.d.toV2(c, m, delivery{})}}}
	}, func(cmd *v2.TelemetryCommand, err error) {
		if err != nil {
			done(core.ClientReply{}, err)
			return
		}
		result := "CR_RETURN_NULL"
		switch cmd.GetStatus().GetCode() {
		case v2.Code_OK:
			result = "CR_SUCCESS"
		case v2.Code_FAILED_TO_CONSUME_MESSAGE:
			result = "CR_LATER"
		}
		body := []byte(`{"order":false,"autoCommit":true,"consumeResult":"` + result +
			`","remark":"from gRPC client","spentTimeMills":0}`)
		done(core.ClientReply{OK: true, Status: int32(protocol.RespSuccess), Body: body}, nil)
	})
}

// ConsumerStatus: a RocketMQ 5 client keeps no offsets to report.
func (s *session) ConsumerStatus(context.Context, string, string, func([]byte, error)) error {
	return errors.New("grpcdoor: a RocketMQ 5 client keeps no consumer offsets")
}

// PushReply: RocketMQ 5 clients do not take request-reply messages.
func (s *session) PushReply(context.Context, core.PushedReply, func(core.ClientReply, error)) error {
	return errors.New("grpcdoor: a RocketMQ 5 client takes no reply messages")
}

// versionOrdinal is a client version ("5.1.4") as RocketMQ's MQVersion
// ordinal (V5_1_4), which the core's client table and the admin tools
// show; 0 when it is not one.
func versionOrdinal(v string) int {
	if v == "" {
		return 0
	}
	want := "V" + v
	for i := range want {
		if want[i] == '.' {
			want = want[:i] + "_" + want[i+1:]
		}
	}
	versionsMu.Lock()
	defer versionsMu.Unlock()
	if n, ok := versions[want]; ok {
		return n
	}
	n := 0
	for i := 0; i < 2000; i++ {
		if name := protocol.VersionName(i); name == want {
			n = i
			break
		} else if name == "HIGHER_VERSION" {
			break
		}
	}
	if len(versions) < 64 { // clients name few versions; a flood of others is not kept
		versions[want] = n
	}
	return n
}

var (
	versionsMu sync.Mutex
	versions   = map[string]int{}
)
