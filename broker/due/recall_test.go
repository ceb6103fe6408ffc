package due

import (
	"errors"
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
	props := RecallMarker(RecallHandle{Topic: "T", Broker: "b", Due: due, UniqKey: key})
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

func TestRecallHandle(t *testing.T) {
	h := RecallHandle{Topic: "T", Broker: "broker-a", Due: 1_700_000_000_123, UniqKey: "7F0000010001000000000000000A0001"}
	got, err := DecodeRecallHandle(h.Encode())
	if err != nil || got != h {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	// Java's HandleV1.buildHandle of the same fields, by hand: the same text.
	if want := "djEgVCBicm9rZXItYSAxNzAwMDAwMDAwMTIzIDdGMDAwMDAxMDAwMTAwMDAwMDAwMDAwMDAwMEEwMDAx"; h.Encode() != want {
		t.Errorf("encoded %s, want %s", h.Encode(), want)
	}
	for _, bad := range []string{"", "%%%", "djEgVA==" /* "v1 T" */, "djIgVCBiIDEgaw==" /* v2 */, "djEgVCBiIHNvb24gaw==" /* due "soon" */} {
		if _, err := DecodeRecallHandle(bad); !errors.Is(err, ErrBadRecallHandle) {
			t.Errorf("DecodeRecallHandle(%q) = %v, want ErrBadRecallHandle", bad, err)
		}
	}
}

func FuzzRecallHandle(f *testing.F) {
	f.Add(RecallHandle{Topic: "T", Broker: "b", Due: 5, UniqKey: "k"}.Encode())
	f.Add("djEgVCBiIDEgaw==")
	f.Fuzz(func(t *testing.T, s string) {
		h, err := DecodeRecallHandle(s)
		if err != nil {
			if !errors.Is(err, ErrBadRecallHandle) {
				t.Fatalf("error %v is not ErrBadRecallHandle", err)
			}
			return
		}
		again, err := DecodeRecallHandle(h.Encode())
		if err != nil || again != h {
			t.Fatalf("%+v does not round-trip: %+v, %v", h, again, err)
		}
	})
}
