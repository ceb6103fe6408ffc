package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/client/queue"
)

// clearLine returns a terminal's cursor to the start of the line and
// erases it.
const clearLine = "\r\x1b[K"

// output serialises everything the consumer shows: messages on stdout, one
// at a time, counted against --max, and the status line on stderr. A
// message counts as printed only once its bytes were written, and the
// listener acknowledges exactly the printed ones, so "printed" and
// "committed" stay the same set.
type output struct {
	json bool
	loc  *time.Location
	max  int // 0: no limit

	// activity has one slot: a message was printed (re-arms the idle
	// timer). done is closed when the limit is reached or stdout failed.
	activity chan struct{}
	done     chan struct{}

	mu struct {
		sync.Mutex
		w           io.Writer
		status      io.Writer // stderr when it is a terminal, else nil
		statusShown bool
		n           int
		err         error
		finished    bool
		next        map[queue.MessageQueue]int64 // one past the last printed offset
		buf         []byte
	}
}

// newOutput writes messages to w and, when status is not nil, a live
// status line to status.
func newOutput(w, status io.Writer, asJSON bool, max int, loc *time.Location) *output {
	o := &output{json: asJSON, loc: loc, max: max, activity: make(chan struct{}, 1), done: make(chan struct{})}
	o.mu.w, o.mu.status = w, status
	o.mu.next = map[queue.MessageQueue]int64{}
	return o
}

// offer prints m unless the limit was reached or stdout failed, and
// reports whether it did. A false answer means m was not shown and must
// not be acknowledged.
func (o *output) offer(m *client.MessageExt) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.mu.err != nil || (o.max > 0 && o.mu.n >= o.max) {
		return false
	}
	buf := o.mu.buf[:0]
	var err error
	if o.json {
		buf, err = appendJSON(buf, m)
	} else {
		buf = appendText(buf, m, o.loc)
	}
	o.mu.buf = buf
	if err == nil {
		o.clearStatusLocked()
		_, err = o.mu.w.Write(buf)
	}
	if err != nil {
		o.mu.err = fmt.Errorf("write to stdout: %w", err)
		o.finishLocked()
		return false
	}
	o.mu.n++
	o.mu.next[m.Queue] = m.QueueOffset + 1
	select {
	case o.activity <- struct{}{}:
	default:
	}
	if o.max > 0 && o.mu.n >= o.max {
		o.finishLocked()
	}
	return true
}

func (o *output) finishLocked() {
	if !o.mu.finished {
		o.mu.finished = true
		close(o.done)
	}
}

// count returns the number of messages printed.
func (o *output) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.mu.n
}

// err returns why stdout failed, or nil.
func (o *output) err() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.mu.err
}

// limitReached reports whether --max messages were printed.
func (o *output) limitReached() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.max > 0 && o.mu.n >= o.max
}

// nextOffset returns one past the last printed offset of mq.
func (o *output) nextOffset(mq queue.MessageQueue) (int64, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	off, ok := o.mu.next[mq]
	return off, ok
}

// showStatus replaces the status line, if there is a terminal for it.
func (o *output) showStatus(line string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.mu.status == nil {
		return
	}
	_, _ = io.WriteString(o.mu.status, clearLine+line)
	o.mu.statusShown = true
}

// clearStatus erases the status line, so that what follows starts on a
// clean line.
func (o *output) clearStatus() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.clearStatusLocked()
}

func (o *output) clearStatusLocked() {
	if o.mu.statusShown {
		_, _ = io.WriteString(o.mu.status, clearLine)
		o.mu.statusShown = false
	}
}
