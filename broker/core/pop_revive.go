package core

import (
	"fmt"
	"strconv"

	"github.com/runnelmq/runnel/broker/due"
	"github.com/runnelmq/runnel/broker/pop"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store"
)

// A plain pop's message not acknowledged within its invisible time comes
// back (Java's PopReviveService): a copy goes to the group's retry topic
// for the topic, %RETRY%<group>_<topic>, with its reconsume count raised,
// or to the group's %DLQ% once it was reconsumed as often as the group
// allows; then its in-flight record goes. This is the third source of the
// due-time service (package due), beside delay levels and timers: its
// index holds each plain pop's record at its invisible time's end, and
// the service writes the copies. The copy is written before the record is
// deleted, so a crash or a failover between the two brings the message
// back twice, never not at all. A FIFO pop's message is not brought back:
// its queue gives it again once it is visible (pop_fifo.go).

// popSourceName keys the source in the due-time service's checkpoint. It
// has no progress of its own there: what is in flight is the store's
// in-flight records, which a new master reads whole.
const popSourceName = "pop"

// popScanBudget bounds the records one Scan takes from the table.
const popScanBudget = 8192

// popSource is POP's redelivery as a source of the due-time service. Its
// entries are the plain pops' records, each under a sequence number (the
// entry's Off) that names its key and pop time: a record acknowledged,
// or changed (a new pop time) since, fires nothing.
type popSource struct {
	c *Core
	// The service calls a source from one goroutine at a time; nothing
	// else touches these.
	started bool
	next    int64
	waiting map[int64]popWaiting
	byKey   map[pop.Key]int64
	// done are records whose copy is written but whose deletion failed:
	// deleted again at the next Scan.
	done []pop.Entry
}

type popWaiting struct {
	key     pop.Key
	popTime int64
}

func newPopSource(c *Core) *popSource {
	return &popSource{c: c, waiting: map[int64]popWaiting{}, byKey: map[pop.Key]int64{}}
}

func (s *popSource) Name() string { return popSourceName }

// Resume takes no state: the records are the state.
func (s *popSource) Resume([]byte) error { return nil }

// Progress has nothing to say (Resume reads nothing).
func (s *popSource) Progress(dst []byte) []byte { return dst }

// Scan indexes the plain pops' records: all of them the first time (what
// a new master or a restarted broker holds), then those put since.
func (s *popSource) Scan(add func(due.Entry), _ int64, budget int) (bool, error) {
	s.retryDone()
	limit := min(budget, popScanBudget)
	var es []pop.Entry
	first := !s.started
	if first {
		es, s.started = s.c.inflight.Follow(), true
	} else {
		es = s.c.inflight.TakeAdded(limit)
	}
	for _, e := range es {
		if seq, ok := s.byKey[e.Key]; ok && s.waiting[seq].popTime == e.PopTime {
			continue // indexed already (Follow and a put crossed)
		}
		s.next++
		s.waiting[s.next] = popWaiting{key: e.Key, popTime: e.PopTime}
		s.byKey[e.Key] = s.next
		add(due.Entry{Due: e.InvisibleUntil, Off: s.next})
	}
	return first || len(es) < limit, nil
}

// Fire makes the copy of a message whose invisible time passed, or
// nothing for one acknowledged or changed meanwhile, or no longer stored.
// Once its time passed its handle is expired: no ack or change of it
// succeeds any more, so the record stays as it is until Fired.
func (s *popSource) Fire(e due.Entry) (*message.MessageExt, error) {
	w, ok := s.waiting[e.Off]
	if !ok {
		return nil, nil
	}
	unlock := s.c.inflight.LockRecords([]pop.Key{w.key})
	defer unlock()
	rec, ok := s.c.inflight.Get(w.key)
	if !ok || rec.PopTime != w.popTime || rec.Orderly {
		return nil, nil
	}
	m, err := s.c.readInFlight(w.key, rec)
	if r, ok := ReasonOf(err); ok && r.Reason == NoMessage {
		s.c.log.Warn("broker: a message in flight is no longer stored; dropped", "group", w.key.Group,
			"topic", w.key.Topic, "queue", w.key.QueueID, "offset", w.key.Offset, "err", err)
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	props := map[string]string{}
	if m.Property(message.PropertyFirstPopTime) == "" {
		props[message.PropertyFirstPopTime] = strconv.FormatInt(rec.PopTime, 10)
	}
	g, _ := s.c.GroupConfig(w.key.Group)
	back := giveBack{group: w.key.Group, retryTopic: pop.RetryTopic(w.key.Group, pop.OriginTopic(w.key.Group, w.key.Topic)),
		maxTimes: popMaxTimes(g.RetryMaxTimes), props: props}
	// A refusal for good (a retry topic whose name is too long, one
	// made unwritable) must not hold up the service's other entries,
	// which a returned error would retry behind it: the message goes to
	// the DLQ, or where that is refused too, is dropped and said so.
	if _, err := s.c.ensureRetryTopic(back.retryTopic, w.key.Group, "pop"); err != nil {
		if !refusedForGood(err) {
			return nil, err
		}
		s.c.log.Warn("broker: a message not acknowledged in time goes to the DLQ: its retry topic is refused",
			"group", w.key.Group, "retryTopic", back.retryTopic, "err", err)
		back.toDLQ = true
	}
	cp, err := s.c.giveBackCopy(m, back)
	if err != nil && refusedForGood(err) {
		s.c.log.Error("broker: a message not acknowledged in time is dropped: its DLQ is refused",
			"group", w.key.Group, "topic", w.key.Topic, "offset", w.key.Offset, "err", err)
		return nil, nil
	}
	return cp, err
}

// refusedForGood says whether err refuses for what a request is (a name,
// a permission), so trying it again changes nothing.
func refusedForGood(err error) bool {
	e, ok := ReasonOf(err)
	return ok && (e.Reason == InvalidName || e.Reason == ReservedName || e.Reason == Forbidden)
}

// Fired deletes the record of an entry whose copy is written (or that had
// nothing to write), if it is still the one the entry named.
func (s *popSource) Fired(e due.Entry) {
	w, ok := s.waiting[e.Off]
	if !ok {
		return
	}
	delete(s.waiting, e.Off)
	if s.byKey[w.key] == e.Off {
		delete(s.byKey, w.key)
	}
	if err := s.c.dropInFlight(w.key, w.popTime); err != nil {
		s.done = append(s.done, pop.Entry{Key: w.key, Record: pop.Record{PopTime: w.popTime}})
	}
}

// retryDone deletes again the records whose deletion failed.
func (s *popSource) retryDone() {
	failed := s.done
	s.done = nil
	for _, e := range failed {
		if err := s.c.dropInFlight(e.Key, e.PopTime); err != nil {
			s.done = append(s.done, e)
		}
	}
}

// dropInFlight deletes a plain pop's record if it is still in flight
// under popTime.
func (c *Core) dropInFlight(k pop.Key, popTime int64) error {
	unlock := c.inflight.LockRecords([]pop.Key{k})
	defer unlock()
	if rec, ok := c.inflight.Get(k); !ok || rec.PopTime != popTime {
		return nil
	}
	if err := c.apply(&store.Op{Kind: store.OpInFlight, InFlightDelete: []store.InFlightKey{k}}); err != nil {
		c.log.Warn("broker: a message brought back keeps its record until deleted", "group", k.Group, "topic", k.Topic,
			"queue", k.QueueID, "offset", k.Offset, "err", err)
		return err
	}
	c.inflight.Delete(k)
	return nil
}

// popArrived tells the due-time service of new records, so it aims its
// timer at an earlier invisible time's end than it sleeps to.
func (c *Core) popArrived() {
	if svc := c.later.svc.Load(); svc != nil {
		svc.Notify()
	}
}

// loadInFlight makes the in-flight table hold what st holds (at Open, and
// when a replica becomes master). A record that does not decode is
// dropped from the table and logged: it cannot be acknowledged, and its
// message is not brought back.
func (c *Core) loadInFlight(st *store.Store) error {
	var es []pop.Entry
	bad := 0
	err := st.RangeInFlight(func(r store.InFlight) bool {
		rec, err := pop.DecodeRecord(r.Value)
		if err != nil {
			bad++
			return true
		}
		es = append(es, pop.Entry{Key: r.InFlightKey, Record: rec})
		return true
	})
	if err != nil {
		return fmt.Errorf("core: load messages in flight: %w", err)
	}
	if bad > 0 {
		c.log.Warn("broker: in-flight records that do not decode were skipped", "count", bad)
	}
	c.inflight.Load(es)
	return nil
}
