package due

import "github.com/runnelmq/runnel/message"

// Entry is one stored record waiting in the index: when it falls due and
// where it is. The Service orders entries by Due and hands each back to
// the source that added it; what Lane and Off name is that source's.
type Entry struct {
	// Due is when the record falls due, Unix ms on the Service's clock.
	Due int64
	// Off is the record's position in its lane (a queue offset for the
	// built-in sources): what a source's progress counts.
	Off int64
	// Lane is which of the source's sequences holds the record (a queue
	// of its topic for the built-in sources).
	Lane int32
	// Check is the source's own mark, given back with the entry: the
	// built-in sources mark entries that may have gone out before a
	// restart, to look for their delivered copy before delivering.
	Check bool
}

// Source is one kind of record that is delivered later: delay levels and
// timer messages today (QueueSource), POP's un-acknowledged messages
// tomorrow. The Service calls a source's methods from one goroutine at a
// time, in this cycle: Scan adds the entries stored since the last Scan to
// the one index; when an entry falls due Fire decides what it becomes;
// once every entry of a batch is decided, their messages are written in
// one atomic write, and Fired is told of each; then Progress is saved.
// A batch whose write failed is fired again later, so Fire must not take
// an entry for done because it answered for it before: only Fired says
// so (the built-in sources' resume check matches a delivered copy to the
// same entry again).
type Source interface {
	// Name keys the source's section of the checkpoint. It never changes:
	// a store written by one version is resumed by the next.
	Name() string
	// Resume loads the progress Progress saved. state is nil when the
	// checkpoint holds nothing for the source: a new store, or one
	// written before the checkpoint held this source (it may then read
	// what older versions stored).
	Resume(state []byte) error
	// Scan passes to add the entries stored since the last Scan that are
	// still to deliver, reading at most budget records of each of its
	// lanes, and reports whether it read all there is for now (false:
	// the Service steps again at once).
	Scan(add func(Entry), now int64, budget int) (done bool, err error)
	// Fire decides what a due entry becomes: the message to write (to the
	// real queue for a delayed message; for POP, to the group's retry
	// topic with the attempt raised), or nil when there is nothing to
	// write (the record is gone, was acknowledged meanwhile, or was
	// delivered before a restart).
	Fire(e Entry) (*message.MessageExt, error)
	// Fired tells the source that e is done: its message, if any, is
	// durable.
	Fired(e Entry)
	// Progress appends the source's progress to dst, as Resume reads it.
	// It is saved after the writes it counts, so it may lag them but
	// never run ahead: what Resume is given was all delivered.
	Progress(dst []byte) []byte
}
