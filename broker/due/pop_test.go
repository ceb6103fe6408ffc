package due

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"testing"
	"time"

	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store"
)

// Topics of the test-only POP source: a checkpoint record per pop, an
// ack record per ack.
const (
	popCKTopic  = "rmq_test_POP_CK"
	popAckTopic = "rmq_test_POP_ACK"
)

// popSource is a test-only third Source, shaped as POP's redelivery of
// un-acknowledged messages will be (Java's PopReviveService): each pop
// writes a checkpoint record naming the popped message, the group and
// when it becomes visible again; each ack writes an ack record naming
// the checkpoint. A checkpoint un-acked when it falls due puts the
// popped message into the group's retry topic with its attempt raised;
// an acked one is skipped. Its progress is its own section of the one
// checkpoint: the lowest checkpoint record not yet handled.
type popSource struct {
	st      *store.Store
	next    int64
	p       pending
	ackNext int64
	acked   map[int64]bool
}

func (p *popSource) Name() string { return "pop" }

func (p *popSource) Resume(state []byte) error {
	if state == nil {
		return nil
	}
	v, n := binary.Varint(state)
	if n <= 0 || n != len(state) {
		return errors.New("bad pop progress")
	}
	p.next = v
	return nil
}

func (p *popSource) record(topic string, off int64) (*message.MessageExt, error) {
	e, err := p.st.QueueEntry(topic, 0, off)
	if err != nil {
		return nil, err
	}
	rec, err := p.st.ReadRecord(e.PhysOffset)
	if err != nil {
		return nil, err
	}
	m, _, err := message.DecodeStoredMessage(rec, false)
	return m, err
}

func (p *popSource) Scan(add func(Entry), now int64, budget int) (bool, error) {
	end := p.st.MaxOffset(popCKTopic, 0)
	for ; p.next < end && budget > 0; budget-- {
		ck, err := p.record(popCKTopic, p.next)
		if err != nil {
			return false, err
		}
		due, _ := strconv.ParseInt(ck.Property("VISIBLE_AT"), 10, 64)
		add(Entry{Due: due, Off: p.next})
		p.p.add(p.next)
		p.next++
	}
	return p.next >= end, nil
}

func (p *popSource) Fire(e Entry) (*message.MessageExt, error) {
	for end := p.st.MaxOffset(popAckTopic, 0); p.ackNext < end; p.ackNext++ {
		ack, err := p.record(popAckTopic, p.ackNext)
		if err != nil {
			return nil, err
		}
		off, _ := strconv.ParseInt(string(ack.Body), 10, 64)
		if p.acked == nil {
			p.acked = make(map[int64]bool)
		}
		p.acked[off] = true
	}
	if p.acked[e.Off] {
		return nil, nil // acknowledged meanwhile
	}
	ck, err := p.record(popCKTopic, e.Off)
	if err != nil {
		return nil, err
	}
	off, _ := strconv.ParseInt(ck.Property("POPPED_OFFSET"), 10, 64)
	m, err := p.record(ck.Property("POPPED_TOPIC"), off)
	if err != nil {
		return nil, err
	}
	props := maps.Clone(m.Properties)
	props[message.PropertyRetryTopic] = m.Topic
	return &message.MessageExt{Message: message.Message{Topic: "%RETRY%" + ck.Property("GROUP"), Body: m.Body, Properties: props},
		ReconsumeTimes: m.ReconsumeTimes + 1, BornTimestamp: m.BornTimestamp, BornHost: m.BornHost, StoreHost: m.StoreHost}, nil
}

func (p *popSource) Fired(e Entry) { p.p.fired(e.Off) }

func (p *popSource) Progress(dst []byte) []byte { return binary.AppendVarint(dst, p.p.low(p.next)) }

// pop writes the checkpoint record of popping T/0 offset off for group g,
// invisible for d.
func (e *env) pop(off int64, d time.Duration) {
	e.t.Helper()
	ck := &message.MessageExt{Message: message.Message{Topic: popCKTopic, Properties: map[string]string{
		"POPPED_TOPIC": "T", "POPPED_OFFSET": fmt.Sprint(off), "GROUP": "g",
		"VISIBLE_AT": fmt.Sprint(e.clock.Now().Add(d).UnixMilli())}}}
	if _, err := e.st.Put([]*message.MessageExt{ck}); err != nil {
		e.t.Fatal(err)
	}
}

// ack writes the ack record of the checkpoint at offset ck.
func (e *env) ack(ck int64) {
	e.t.Helper()
	m := &message.MessageExt{Message: message.Message{Topic: popAckTopic, Body: []byte(fmt.Sprint(ck))}}
	if _, err := e.st.Put([]*message.MessageExt{m}); err != nil {
		e.t.Fatal(err)
	}
}

// TestThirdSource proves the seam POP will use: a source of its own
// beside the delay levels and the timers, on the one index, delivered in
// the same write when due together; an entry acknowledged meanwhile is
// skipped, the others go to the group's retry topic with the attempt
// raised; its progress is a section of the one checkpoint record, and a
// restart resumes it with nothing delivered twice.
func TestThirdSource(t *testing.T) {
	e := newEnv(t)
	var plain []*message.MessageExt
	for i := range 3 {
		plain = append(plain, &message.MessageExt{Message: message.Message{Topic: "T", Body: []byte(fmt.Sprint("m", i)),
			Properties: map[string]string{message.PropertyUniqClientMessageIDKey: fmt.Sprint("u", i)}}})
	}
	if _, err := e.st.Put(plain); err != nil {
		t.Fatal(err)
	}
	for off := range int64(3) {
		e.pop(off, time.Minute)
	}
	l := Levels{time.Minute}
	e.schedule(l, "T", 1, "delayed", 1, "u-d")
	e.timer("timed", time.Minute)
	writes := 0
	s := e.service(opts{levels: l, extra: []Source{&popSource{st: e.st}}, deliver: func(ms []*message.MessageExt) error {
		writes++
		_, err := e.st.Put(ms)
		return err
	}})
	if next := step(t, s); !next.Equal(t0.Add(time.Minute)) || s.Waiting() != 5 {
		t.Fatalf("next %v, %d waiting; want t0+1m and 5", next, s.Waiting())
	}
	e.ack(1) // m1 acknowledged while it waits
	e.clock.Advance(time.Minute)
	step(t, s)
	retry := e.messages("%RETRY%g", 0)
	if len(retry) != 2 || string(retry[0].Body) != "m0" || string(retry[1].Body) != "m2" {
		t.Fatalf("retry topic holds %d messages, want m0 and m2", len(retry))
	}
	for _, m := range retry {
		if m.ReconsumeTimes != 1 || m.Property(message.PropertyRetryTopic) != "T" {
			t.Fatalf("redelivered %s with attempt %d, retry topic %q", m.Body, m.ReconsumeTimes, m.Property(message.PropertyRetryTopic))
		}
	}
	if got := fmt.Sprint(e.bodies("T", 1)); got != "[delayed timed]" || writes != 1 {
		t.Fatalf("T/1 = %s in %d writes, want both in one", got, writes)
	}
	v, _, _ := e.st.Checkpoint(CheckpointName)
	secs, err := decodeCheckpoint(v)
	if err != nil || len(secs) != 3 || secs[1].name != "pop" || secs[1].state[0] != 6 { // varint 3
		t.Fatalf("checkpoint sections %+v, %v; want delay, pop at 3, timer", secs, err)
	}

	e.reopen()
	pop := &popSource{st: e.st}
	s = e.service(opts{levels: l, extra: []Source{pop}})
	if pop.next != 3 {
		t.Fatalf("pop resumed at %d, want 3", pop.next)
	}
	e.clock.Advance(time.Hour)
	step(t, s)
	if n := len(e.messages("%RETRY%g", 0)); n != 2 || len(e.bodies("T", 1)) != 2 {
		t.Fatalf("after the restart: %d retries, T/1 %v", n, e.bodies("T", 1))
	}
}
