package grpcdoor

import (
	"sync"
	"time"

	"github.com/runnelmq/runnel/broker/core"
)

// Renewal keeps a push consumer's received messages invisible while its
// listener runs, as the proxy's receipt handle manager does
// (DefaultReceiptHandleManager): a receive with auto_renew gets Invisible
// of invisible time, and every Period each of its messages due to become
// visible within Ahead gets Slice more, until the client acknowledges
// it, changes its invisible time, forwards it to the DLQ, or has held it
// for Max. The client knows only the handle it received; the door keeps
// the latest one and uses it for the client's ack or change. A client
// that goes away has its messages made visible again a second later
// (invisibleTimeMillisWhenClear), and so does every renewed message when
// the door closes.
type Renewal struct {
	// Invisible is a push consumer's receive's invisible time
	// (defaultInvisibleTimeMills). Default 60 s.
	Invisible time.Duration
	// Ahead is how long before its invisible time ends a message is
	// renewed (renewAheadTimeMillis). Default 10 s.
	Ahead time.Duration
	// Slice is the invisible time a renewal gives (renewSliceTimeMillis).
	// Default 60 s.
	Slice time.Duration
	// Period is how often messages due for renewal are looked for
	// (renewSchedulePeriodMillis). Default 5 s.
	Period time.Duration
	// Max is the longest a message is renewed for after it was received
	// (renewMaxTimeMillis): then it is left to come back. Default 3 h.
	Max time.Duration
}

// withDefaults fills r's zero fields with the proxy's defaults.
func (r Renewal) withDefaults() Renewal {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&r.Invisible, 60*time.Second)
	def(&r.Ahead, 10*time.Second)
	def(&r.Slice, 60*time.Second)
	def(&r.Period, 5*time.Second)
	def(&r.Max, 3*time.Hour)
	return r
}

// clearInvisible is how soon a message the door stops renewing, because
// its client left or the door closes, comes back
// (invisibleTimeMillisWhenClear).
const clearInvisible = time.Second

// renewKey names a received message of a client's group.
type renewKey struct{ client, group, msgID string }

// renewed is one message being renewed. mu is held while its handle
// changes, so a client's ack waits for a renewal in flight and uses the
// handle it gave.
type renewed struct {
	mu       sync.Mutex
	topic    string
	handle   string
	visible  time.Time // when its invisible time ends
	received time.Time
}

// renewals are the door's renewed messages.
type renewals struct {
	d   *Door
	cfg Renewal
	mu  sync.Mutex
	by  map[renewKey]*renewed
}

func newRenewals(d *Door, cfg Renewal) *renewals {
	return &renewals{d: d, cfg: cfg.withDefaults(), by: map[renewKey]*renewed{}}
}

// add starts renewing a message a push consumer received.
func (rs *renewals) add(k renewKey, topic, handle string, now time.Time) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.by[k] = &renewed{topic: topic, handle: handle, visible: now.Add(rs.cfg.Invisible), received: now}
}

// take stops renewing a message and returns the handle to act on: the
// latest one the door holds, or handle as the client gave it when the
// door renews nothing of that name.
func (rs *renewals) take(k renewKey, handle string) string {
	rs.mu.Lock()
	r := rs.by[k]
	delete(rs.by, k)
	rs.mu.Unlock()
	if r == nil {
		return handle
	}
	r.mu.Lock() // a renewal in flight ends first
	defer r.mu.Unlock()
	return r.handle
}

// loop renews until stop is closed, then makes every renewed message
// visible again soon.
func (rs *renewals) loop(stop <-chan struct{}) {
	t := time.NewTicker(rs.cfg.Period)
	defer t.Stop()
	for {
		select {
		case <-stop:
			rs.releaseAll()
			return
		case <-t.C:
			rs.renewDue()
		}
	}
}

// renewDue renews the messages whose invisible time ends within Ahead,
// releases those of clients that left, and forgets those held for Max.
func (rs *renewals) renewDue() {
	now := rs.d.cfg.Now()
	type item struct {
		k renewKey
		r *renewed
	}
	var due []item
	rs.mu.Lock()
	for k, r := range rs.by {
		// visible is written by this goroutine only (add publishes it
		// under rs.mu).
		if r.visible.Sub(now) <= rs.cfg.Ahead {
			due = append(due, item{k, r})
		}
	}
	rs.mu.Unlock()
	for _, it := range due {
		switch {
		case rs.d.sessions.get(it.k.client) == nil:
			rs.release(it.k, it.r)
		case now.Sub(it.r.received) >= rs.cfg.Max:
			rs.forget(it.k, it.r) // it comes back when its invisible time ends
		default:
			rs.renew(it.k, it.r, now)
		}
	}
}

// renew gives one message Slice more invisible time.
func (rs *renewals) renew(k renewKey, r *renewed, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !rs.holds(k, r) {
		return // taken meanwhile: the client acted on it
	}
	h, err := rs.d.core.ChangeInvisible(k.group, r.topic, r.handle, rs.cfg.Slice)
	if err != nil {
		if e, ok := core.ReasonOf(err); ok && (e.Reason == core.InvalidReceipt || e.Reason == core.ExpiredReceipt) {
			rs.forget(k, r) // acknowledged another way, or already back
			return
		}
		rs.d.log.Warn("grpc: renewing a received message's invisible time failed; trying again", "group", k.group, "msgId", k.msgID, "err", err)
		return
	}
	r.handle, r.visible = h, now.Add(rs.cfg.Slice)
}

// release makes a message visible again soon and forgets it.
func (rs *renewals) release(k renewKey, r *renewed) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !rs.holds(k, r) {
		return
	}
	_, _ = rs.d.core.ChangeInvisible(k.group, r.topic, r.handle, clearInvisible)
	rs.forget(k, r)
}

// releaseAll releases every renewed message (the door is closing).
func (rs *renewals) releaseAll() {
	rs.mu.Lock()
	all := make(map[renewKey]*renewed, len(rs.by))
	for k, r := range rs.by {
		all[k] = r
	}
	rs.mu.Unlock()
	for k, r := range all {
		rs.release(k, r)
	}
}

// holds reports whether r is still what the door renews under k.
func (rs *renewals) holds(k renewKey, r *renewed) bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.by[k] == r
}

// forget stops renewing r if it is still k's.
func (rs *renewals) forget(k renewKey, r *renewed) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.by[k] == r {
		delete(rs.by, k)
	}
}

// count is how many messages the door renews (tests).
func (rs *renewals) count() int {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return len(rs.by)
}

// Renewing returns how many received messages the door keeps invisible
// for push consumers (for tests and tools).
func (d *Door) Renewing() int { return d.renew.count() }
