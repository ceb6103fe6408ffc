package due

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/runnelmq/runnel/message"
)

// recallTimer stores the marker that withdraws the timer with key due at
// due, as core.Recall does (through TransformTimer).
func (e *env) recallTimer(key string, due int64) {
	e.t.Helper()
	props := RecallMarker(message.RecallHandle{Topic: "T", Broker: "b", Due: due, UniqKey: key})
	m := &message.MessageExt{Message: message.Message{Topic: "T", Body: []byte("0"), Properties: props}}
	if ok, err := TransformTimer(m, e.clock.Now(), DefaultTimerMaxDelay); !ok || err != nil {
		e.t.Fatalf("TransformTimer(marker) = %v, %v", ok, err)
	}
	if _, err := e.st.Put([]*message.MessageExt{m}); err != nil {
		e.t.Fatal(err)
	}
}

// TestRecallWithdrawsOnlyItsTimer: a recalled timer is not delivered,
// and neither is its marker; a timer with the same key due at another
// time, and every other timer, is. The marker holds across a restart
// between the recall and the due time.
func TestRecallWithdrawsOnlyItsTimer(t *testing.T) {
	for _, restart := range []bool{false, true} {
		t.Run("restart="+strconv.FormatBool(restart), func(t *testing.T) {
			e := newEnv(t)
			e.timer("a", 2*time.Second)
			e.timer("b", 2*time.Second)
			e.timer("c", 3*time.Second)
			due := t0.Add(2 * time.Second).UnixMilli()
			e.recallTimer("u-a", due)
			e.recallTimer("u-c", due) // c falls due at 3 s: not what this marker withdraws
			s := e.service(opts{batch: 2})
			step(t, s)
			if restart {
				e.reopen()
				s = e.service(opts{batch: 2})
				step(t, s)
			}
			e.clock.Advance(time.Minute)
			step(t, s)
			if got := e.delivered(); !slices.Equal(got, []string{"b", "c"}) {
				t.Fatalf("delivered %v, want [b c]", got)
			}
			if s.Waiting() != 0 || len(s.timer.recalled) != 0 || len(s.timer.markers) != 0 {
				t.Fatalf("left %d waiting, %d recalled, %d markers", s.Waiting(), len(s.timer.recalled), len(s.timer.markers))
			}
		})
	}
}
