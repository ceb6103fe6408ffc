package remoting

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// splitEvents runs a splitter with a small header limit over stream fed in
// chunks of size n (0: of what its pending asks for) and returns what it
// emitted, in order.
func splitEvents(stream []byte, n int) []string {
	var events []string
	s := frameSplitter{max: 1 << 20, maxHeader: 64}
	s.oversize = func(o oversizedFrame) error {
		events = append(events, fmt.Sprintf("over %d %d %q %q", o.serType, o.headerLen, o.head, o.tail))
		return nil
	}
	emit := func(f []byte) error {
		events = append(events, fmt.Sprintf("frame %q", f))
		return nil
	}
	for len(stream) > 0 {
		k := min(n, len(stream))
		if n == 0 {
			// What netpollRead waits for before feeding again.
			if k = min(s.pending(), len(stream)); k <= 0 {
				return append(events, fmt.Sprintf("error pending %d", s.pending()))
			}
		}
		if err := s.split(stream[:k], emit); err != nil {
			return append(events, "error "+err.Error())
		}
		stream = stream[k:]
	}
	return events
}

// The splitter emits the same frames and keeps the same ends of oversized
// headers however the stream is cut.
func FuzzFrameSplitter(f *testing.F) {
	var seed []byte
	seed = append(seed, rawJSONFrame(`{"code":1,"opaque":2,"extFields":{"v":"`+strings.Repeat("x", 3000)+`"}}`)...)
	seed = append(seed, mustFrame(f, protocol.NewRequest(5, map[string]string{"a": "b"}, []byte("body")))...)
	seed = append(seed, rawJSONFrame(strings.Repeat("y", 65))...)
	f.Add(seed, 7)
	f.Add(seed, 1)
	f.Fuzz(func(t *testing.T, stream []byte, n int) {
		if n <= 0 || len(stream) > 1<<16 {
			return
		}
		whole := splitEvents(stream, len(stream)+1)
		if cut := splitEvents(stream, n); !slices.Equal(whole, cut) {
			t.Fatalf("fed in %d-byte chunks:\n%q\nwhole:\n%q", n, cut, whole)
		}
		if cut := splitEvents(stream, 0); !slices.Equal(whole, cut) {
			t.Fatalf("fed what pending asks for:\n%q\nwhole:\n%q", cut, whole)
		}
	})
}

// TestFrameSplitterPending: a reader that waits for what pending asks
// feeds each frame in two steps, however many writes it came in (the
// official client makes four of each request), and never feeds a part of
// the next with the end of one.
func TestFrameSplitterPending(t *testing.T) {
	frame := mustFrame(t, protocol.NewRequest(10, map[string]string{"topic": "t"}, []byte("body")))
	s := frameSplitter{max: protocol.MaxFrameSize}
	var got []int
	emit := func([]byte) error { got = append(got, -1); return nil }
	stream := slices.Concat(frame, frame)
	for len(stream) > 0 {
		k := s.pending()
		got = append(got, k)
		if err := s.split(stream[:k], emit); err != nil {
			t.Fatal(err)
		}
		stream = stream[k:]
	}
	rest := len(frame) - 4
	if want := []int{4, rest, -1, 4, rest, -1}; !slices.Equal(got, want) {
		t.Fatalf("pending, and -1 for each frame emitted: %v, want %v", got, want)
	}
	// Partway through the length or the header word.
	s.split(frame[:2], emit)
	if k := s.pending(); k != 2 {
		t.Fatalf("pending after 2 bytes of a length: %d, want 2", k)
	}
	s.split(frame[2:6], emit)
	if k := s.pending(); k != len(frame)-6 {
		t.Fatalf("pending after 6 bytes: %d, want %d", k, len(frame)-6)
	}
}

func TestFrameSplitterKeepsOversizedHeaderEnds(t *testing.T) {
	header := `{"code":1,"opaque":2,"extFields":{"v":"` + strings.Repeat("x", 5000) + `"},"opaque":3}`
	frame := rawJSONFrame(header)
	for _, n := range []int{1, 3, 1000, len(frame)} {
		ev := splitEvents(append(frame, frame...), n)
		want := fmt.Sprintf("over 0 %d %q %q", len(header), header[:protocol.SkimSize], header[len(header)-protocol.SkimSize:])
		if len(ev) != 2 || ev[0] != want || ev[1] != want {
			t.Fatalf("chunks of %d: %q", n, ev)
		}
	}
}

// A frame trickling in is collected in one allocation when its announced
// length is within the splitter's trust (a client's: a pull's answer), and
// a server's splitter allocates no more than serverTrustedLen up front for
// a length it has not seen the bytes of.
func TestFrameSplitterTrust(t *testing.T) {
	frame := mustFrame(t, protocol.NewRequest(5, nil, make([]byte, 40<<10)))
	for _, c := range []struct {
		trust  int
		copies bool // whether the frame outgrew its first allocation
	}{{clientTrustedLen, false}, {0, true}} {
		s := frameSplitter{max: protocol.MaxFrameSize, trust: c.trust}
		var caps []int
		grew := false
		var got []byte
		for p := frame; len(p) > 0; p = p[min(1000, len(p)):] {
			if err := s.split(p[:min(1000, len(p))], func(f []byte) error { got = f; return nil }); err != nil {
				t.Fatal(err)
			}
			if s.frame != nil {
				if len(caps) > 0 && cap(s.frame) != caps[len(caps)-1] {
					grew = true
				}
				caps = append(caps, cap(s.frame))
			}
		}
		if len(got) != len(frame)-4 {
			t.Fatalf("trust %d: emitted %d bytes, want %d", c.trust, len(got), len(frame)-4)
		}
		if grew != c.copies {
			t.Errorf("trust %d: grew %v, want %v (capacities %v)", c.trust, grew, c.copies, caps[:min(len(caps), 8)])
		}
	}
	// A server's splitter told of 16 MiB, given 8 bytes.
	s := frameSplitter{max: protocol.MaxFrameSize}
	head := []byte{0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10}
	if err := s.split(head, func([]byte) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if s.frame == nil || cap(s.frame) > serverTrustedLen {
		t.Fatalf("announced 16 MiB: allocated %d up front, want at most %d", cap(s.frame), serverTrustedLen)
	}
}
