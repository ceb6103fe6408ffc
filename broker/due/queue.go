package due

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store"
	"github.com/runnelmq/runnel/store/consumequeue"
)

// Store is the part of the message store the Service and the built-in
// sources read and write; *store.Store implements it. Only the checkpoint
// is written (PutCheckpoint); DelayOffsets is read once, on the upgrade
// of a store whose checkpoint is older (legacy.go).
type Store interface {
	Checkpoints
	MinOffset(topic string, queueID int32) int64
	MaxOffset(topic string, queueID int32) int64
	QueueEntry(topic string, queueID int32, offset int64) (consumequeue.Entry, error)
	ReadRecord(phys int64) ([]byte, error)
	Get(topic string, queueID int32, offset int64, maxMsgs, maxBytes int, filter store.Filter) (*store.GetResult, error)
	QueryByUniqKey(topic, uniqKey string, maxNum int) ([][]byte, error)
	DelayOffsets() (map[int32]int64, error)
}

// resumeSlack is how far before a timer lane's cursor entries are
// re-checked on start rather than taken as delivered (see the package
// doc).
const resumeSlack = 10 * time.Second

// resumeScan bounds how many same-key copies one resume check reads.
const resumeScan = 1024

// QueueSource is the Source of messages that wait in a system topic with
// their real topic and queue in REAL_TOPIC and REAL_QID, one lane per
// queue: the delay levels (NewDelaySource) and the timer messages
// (NewTimerSource). A due entry is delivered to its real queue.
type QueueSource struct {
	name, topic string
	st          Store
	log         *slog.Logger
	// levels are a delay source's: lane q's entries fall due at their
	// store time plus levels[q], so due times never decrease along a lane
	// (store times do not) and the lane is ordered. nil for timers, whose
	// due time is in the record (TIMER_OUT_MS), in any order.
	levels Levels
	// drop are the properties a delivered message loses.
	drop []string
	// legacy reads the progress of a store written before the checkpoint.
	legacy func() ([]laneState, error)

	// mu guards what follows: the Service calls from its one goroutine,
	// Progress and Waiting from any.
	mu    sync.Mutex
	lanes []*lane
	// kept are lanes of the checkpoint that are not configured now (a
	// shorter level list), written back as they were, so a configuration
	// change loses no progress.
	kept []laneState
	// used are delivered copies (commit log offsets) matched during
	// resume checks, each to the entry it was matched to.
	used map[int64]laneOff
	// recalled are the timers withdrawn by a recall marker read and not
	// yet fired, and markers where each marker waits (recall.go). A
	// marker falls due with the message it withdraws and after it (it
	// was stored later: ties fire in offset order), so the message finds
	// its key here when it fires.
	recalled map[recallKey]struct{}
	markers  map[laneOff]recallKey
}

type laneOff struct {
	lane int32
	off  int64
}

// lane is one queue of the source's topic.
type lane struct {
	id int32
	// next is the next queue offset to read. The entries read and not
	// yet fired are, for an ordered lane, window (they fire in offset
	// order, and the window keeps where each record is, so Fire reads it
	// without a second queue lookup), for an unordered one p. The lane's
	// progress is the lowest of them, or next (low).
	next   int64
	window []placed
	p      pending
	// lastDue is the due time of the last entry read. An ordered lane is
	// read no further while it lies ahead: nothing after it falls due
	// before it.
	lastDue int64
	// checkEnd is, for an ordered lane, the offset of the first entry
	// found not delivered by the resume check (-1 while none is): the
	// delivered entries form a prefix, so none after it are checked.
	checkEnd int64
	// An unordered lane's resume (see the package doc): cursor is the due
	// time of the last entry delivered, saved the cursor last safe to
	// save, resumeBelow the due time below which entries read while
	// resuming are taken as delivered. resuming is true until a read
	// first reaches the end of the lane after Resume; caughtUp while the
	// last read reached it.
	cursor, saved, resumeBelow int64
	resuming, caughtUp         bool
}

// placed is an entry of an ordered lane's window: its queue offset and
// the commit log offset of its record.
type placed struct{ off, phys int64 }

// low returns the lane's lowest offset not yet fired: every offset below
// it is done.
func (l *lane) low() int64 {
	if len(l.window) > 0 {
		return l.window[0].off
	}
	return l.p.low(l.next)
}

// laneState is a lane's saved progress (checkpoint.go).
type laneState struct {
	id           int32
	next, cursor int64
}

// NewDelaySource returns the source of delayed messages: level L waits in
// queue L-1 of ScheduleTopic and falls due Levels.Delay(L) after it was
// stored; each level is delivered in queue order. Its checkpoint section
// is "delay". A nil log discards.
func NewDelaySource(st Store, levels Levels, log *slog.Logger) *QueueSource {
	s := newQueueSource("delay", ScheduleTopic, st, log, len(levels))
	s.levels = levels
	s.drop = delayProps
	s.legacy = func() ([]laneState, error) { return legacyDelayProgress(st) }
	return s
}

// NewTimerSource returns the source of timer messages: they wait in queue
// 0 of TimerTopic and fall due at their TIMER_OUT_MS, in any order. Its
// checkpoint section is "timer". A nil log discards.
func NewTimerSource(st Store, log *slog.Logger) *QueueSource {
	s := newQueueSource("timer", TimerTopic, st, log, 1)
	s.drop = timerProps
	s.legacy = func() ([]laneState, error) { return legacyTimerProgress(st) }
	return s
}

func newQueueSource(name, topic string, st Store, log *slog.Logger, lanes int) *QueueSource {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &QueueSource{name: name, topic: topic, st: st, log: log}
	for i := range lanes {
		s.lanes = append(s.lanes, &lane{id: int32(i), checkEnd: -1, resuming: true})
	}
	return s
}

// Name is the source's checkpoint section.
func (s *QueueSource) Name() string { return s.name }

// ordered says whether due times never decrease along a lane.
func (s *QueueSource) ordered() bool { return s.levels != nil }

// Next returns each lane's (queue's) next offset still to deliver: every
// offset below it is done.
func (s *QueueSource) Next() map[int32]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[int32]int64, len(s.lanes))
	for _, l := range s.lanes {
		out[l.id] = l.low()
	}
	return out
}

// Resume loads the lanes' progress, from the checkpoint section or, when
// there is none, from what older versions stored.
func (s *QueueSource) Resume(state []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var saved []laneState
	var err error
	if state == nil {
		saved, err = s.legacy()
	} else {
		saved, err = decodeLanes(state)
	}
	if err != nil {
		return fmt.Errorf("%s progress: %w", s.name, err)
	}
	s.kept = nil
	for _, ls := range saved {
		if ls.id < 0 || int(ls.id) >= len(s.lanes) {
			s.kept = append(s.kept, ls)
			continue
		}
		l := s.lanes[ls.id]
		*l = lane{id: l.id, next: ls.next, checkEnd: -1, resuming: true}
		if !s.ordered() {
			l.cursor, l.saved = ls.cursor, ls.cursor
			l.resumeBelow = ls.cursor - resumeSlack.Milliseconds()
		}
	}
	return nil
}

// Progress appends the lanes' progress: each lane's lowest offset not
// delivered and, for timers, the cursor.
func (s *QueueSource) Progress(dst []byte) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]laneState, 0, len(s.lanes)+len(s.kept))
	for _, l := range s.lanes {
		out = append(out, laneState{id: l.id, next: l.low(), cursor: l.saved})
	}
	out = append(out, s.kept...)
	slices.SortFunc(out, func(a, b laneState) int { return int(a.id) - int(b.id) })
	return appendLanes(dst, out)
}

// Scan reads every lane from where it stopped, at most budget records a
// lane.
func (s *QueueSource) Scan(add func(Entry), now int64, budget int) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	done := true
	for _, l := range s.lanes {
		var d bool
		var err error
		if s.ordered() {
			d, err = s.scanOrdered(l, add, now, budget)
		} else {
			d, err = s.scanUnordered(l, add, now, budget)
		}
		if err != nil {
			return false, err
		}
		done = done && d
	}
	return done, nil
}

// scanOrdered reads a delay level's queue while its entries are due, and
// the first one not due: its due time is the level's next wake-up.
func (s *QueueSource) scanOrdered(l *lane, add func(Entry), now int64, budget int) (bool, error) {
	delay := s.levels[l.id].Milliseconds()
	end := s.st.MaxOffset(s.topic, l.id)
	off := max(l.next, s.st.MinOffset(s.topic, l.id))
	for n := 0; off < end && l.lastDue <= now; n++ {
		if n == budget {
			l.next = off
			return false, nil
		}
		e, err := s.st.QueueEntry(s.topic, l.id, off)
		if errors.Is(err, store.ErrNotFound) {
			// Removed by retention meanwhile: go on from the new minimum.
			if m := s.st.MinOffset(s.topic, l.id); m > off {
				off = m
				continue
			}
		}
		if err != nil {
			l.next = off
			return false, fmt.Errorf("level %d offset %d: %w", l.id+1, off, err)
		}
		l.lastDue = e.StoreTimestamp + delay
		add(Entry{Due: l.lastDue, Off: off, Lane: l.id, Check: l.checkEnd < 0})
		l.window = append(l.window, placed{off: off, phys: e.PhysOffset})
		off++
	}
	l.next = off
	return true, nil
}

// scanUnordered reads a timer queue from where it stopped, up to budget
// entries, in log order (Get reads records with one iterator, far cheaper
// than a queue lookup and a record lookup per timer).
func (s *QueueSource) scanUnordered(l *lane, add func(Entry), now int64, budget int) (bool, error) {
	end := s.st.MaxOffset(s.topic, l.id)
	off := max(l.next, s.st.MinOffset(s.topic, l.id))
	stop := min(end, off+int64(budget))
	for off < stop {
		res, err := s.st.Get(s.topic, l.id, off, int(min(stop-off, 32)), 0, nil)
		if err != nil {
			l.next = off
			return false, fmt.Errorf("index offset %d: %w", off, err)
		}
		if res.Count == 0 {
			if res.NextBeginOffset > off { // removed by retention meanwhile
				off = res.NextBeginOffset
				continue
			}
			if err := s.scanOne(l, off, add, now); err != nil {
				l.next = off
				return false, err
			}
			off++
			continue
		}
		ms, err := message.DecodeMessagesRaw(res.Messages)
		if err != nil { // an undecodable record among them: one by one
			for _, o := range res.QueueOffsets {
				if err := s.scanOne(l, o, add, now); err != nil {
					l.next = o
					return false, err
				}
			}
		} else {
			for i, m := range ms {
				s.addTimer(l, m, res.QueueOffsets[i], add, now)
			}
		}
		off = res.NextBeginOffset
	}
	l.next = off
	l.caughtUp = off >= end
	if l.caughtUp {
		l.resuming = false
	}
	return l.caughtUp, nil
}

// scanOne reads the timer at one queue offset.
func (s *QueueSource) scanOne(l *lane, off int64, add func(Entry), now int64) error {
	e, err := s.st.QueueEntry(s.topic, l.id, off)
	if errors.Is(err, store.ErrNotFound) {
		return nil // removed by retention meanwhile
	}
	if err != nil {
		return fmt.Errorf("index offset %d: %w", off, err)
	}
	m, err := s.read(e.PhysOffset)
	if err != nil || m == nil {
		return err
	}
	s.addTimer(l, m, off, add, now)
	return nil
}

// addTimer indexes timer message m at queue offset off, unless it was
// delivered before a restart.
func (s *QueueSource) addTimer(l *lane, m *message.MessageExt, off int64, add func(Entry), now int64) {
	due, err := timerDueOf(m)
	if err != nil {
		s.log.Error("due: timer message without a due time, skipped", "offset", off, "err", err)
		return
	}
	e := Entry{Due: due, Off: off, Lane: l.id}
	if l.resuming {
		if due < l.resumeBelow {
			return // delivered before the restart
		}
		e.Check = due <= now
	}
	if key := m.Properties[PropertyTimerDelUniqKey]; key != "" {
		s.noteRecall(laneOff{l.id, off}, recallKey{due: due, key: key})
	}
	add(e)
	l.p.add(off)
}

// noteRecall records a recall marker read at where (under s.mu, as Scan
// holds it).
func (s *QueueSource) noteRecall(where laneOff, k recallKey) {
	if s.recalled == nil {
		s.recalled, s.markers = map[recallKey]struct{}{}, map[laneOff]recallKey{}
	}
	s.recalled[k] = struct{}{}
	s.markers[where] = k
}

// read returns the stored message at phys, nil when there is none to
// deliver (removed by retention, or undecodable: logged).
func (s *QueueSource) read(phys int64) (*message.MessageExt, error) {
	rec, err := s.st.ReadRecord(phys)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %d: %w", phys, err)
	}
	m, _, err := message.DecodeStoredMessage(rec, false)
	if err != nil {
		s.log.Error("due: undecodable record, skipped", "topic", s.topic, "offset", phys, "err", err)
		return nil, nil
	}
	return m, nil
}

// Fire reads the waiting message and returns it restored to its real
// queue; nil when it is gone, not a waiting message, or (checked after a
// restart) already delivered.
func (s *QueueSource) Fire(e Entry) (*message.MessageExt, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.lanes[e.Lane]
	phys, ok := l.placed(e.Off)
	if !ok {
		qe, err := s.st.QueueEntry(s.topic, e.Lane, e.Off)
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil // removed by retention
		}
		if err != nil {
			return nil, fmt.Errorf("queue %d offset %d: %w", e.Lane, e.Off, err)
		}
		phys = qe.PhysOffset
	}
	m, err := s.read(phys)
	if err != nil || m == nil {
		return nil, err
	}
	if m.Properties[PropertyTimerDelUniqKey] != "" {
		return nil, nil // a recall marker delivers nothing
	}
	if _, ok := s.recalled[recallKey{due: e.Due, key: m.UniqKey()}]; ok {
		s.log.Info("due: recalled timer message withdrawn", "uniqKey", m.UniqKey(), "due", e.Due)
		return nil, nil
	}
	out, err := restore(m, s.drop)
	if err != nil {
		s.log.Error("due: message without a real topic, skipped", "topic", s.topic, "queue", e.Lane, "err", err)
		return nil, nil
	}
	if !e.Check {
		return out, nil
	}
	if s.ordered() && l.checkEnd >= 0 && e.Off > l.checkEnd {
		return out, nil // after the first entry found not delivered
	}
	done, err := s.delivered(e, m, out)
	if err != nil {
		return nil, err
	}
	if done {
		s.log.Info("due: already delivered before a restart, skipped", "topic", s.topic, "queue", e.Lane, "uniqKey", out.UniqKey())
		return nil, nil
	}
	if s.ordered() && l.checkEnd < 0 {
		l.checkEnd = e.Off
	}
	return out, nil
}

// delivered reports whether waiting message m (entry e) already has a
// delivered copy out in its real queue: same UNIQ_KEY and queue, stored
// after m, and not matched to another entry. A copy stays matched to its
// entry, so a batch fired again gives the same answers.
func (s *QueueSource) delivered(e Entry, m, out *message.MessageExt) (bool, error) {
	key := out.UniqKey()
	if key == "" {
		return false, nil
	}
	recs, err := s.st.QueryByUniqKey(out.Topic, key, resumeScan)
	if err != nil {
		return false, fmt.Errorf("resume check: %w", err)
	}
	me := laneOff{e.Lane, e.Off}
	for _, r := range recs {
		d, _, err := message.DecodeStoredMessage(r, false)
		if err != nil || d.QueueID != out.QueueID || d.CommitLogOffset <= m.CommitLogOffset {
			continue
		}
		if by, ok := s.used[d.CommitLogOffset]; ok && by != me {
			continue
		}
		if s.used == nil {
			s.used = make(map[int64]laneOff)
		}
		s.used[d.CommitLogOffset] = me
		return true, nil
	}
	return false, nil
}

// Fired records e as done.
func (s *QueueSource) Fired(e Entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.lanes[e.Lane]
	if s.ordered() {
		// Fired in offset order: what is before e in the window is done.
		i := 0
		for i < len(l.window) && l.window[i].off <= e.Off {
			i++
		}
		l.window = l.window[i:]
		return
	}
	l.p.fired(e.Off)
	if k, ok := s.markers[laneOff{e.Lane, e.Off}]; ok {
		delete(s.markers, laneOff{e.Lane, e.Off})
		delete(s.recalled, k)
	}
	l.cursor = max(l.cursor, e.Due)
	// The cursor is saved only while the index is complete: an entry not
	// yet read may be due before it, and must not be taken as delivered
	// after a crash (see the package doc).
	if l.caughtUp && !l.resuming {
		l.saved = l.cursor
	}
}

// placed returns where the record of an ordered lane's entry at off is,
// if the window holds it.
func (l *lane) placed(off int64) (int64, bool) {
	i, ok := slices.BinarySearchFunc(l.window, off, func(p placed, off int64) int { return cmp.Compare(p.off, off) })
	if !ok {
		return 0, false
	}
	return l.window[i].phys, true
}

// Waiting returns how many of the source's entries are read and not yet
// delivered (for tests and tools).
func (s *QueueSource) Waiting() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, l := range s.lanes {
		n += len(l.window) + len(l.p.offs) - len(l.p.gone)
	}
	return n
}
