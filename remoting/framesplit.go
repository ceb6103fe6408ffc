package remoting

import (
	"encoding/binary"
	"fmt"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// frameSplitter cuts a byte stream into frames. Each frame it emits is a
// fresh slice (without the length prefix) that the receiver owns.
//
// A frame whose header is over maxHeader is not collected: its bytes are
// dropped as they arrive, but for the first and last protocol.SkimSize of
// its header, which are handed to oversize once the frame has passed, so
// the frame can be refused (protocol.SkimHeader finds its opaque) without
// holding it.
type frameSplitter struct {
	max       int
	maxHeader int                        // 0: no bound beyond max
	oversize  func(oversizedFrame) error // required when maxHeader > 0
	trust     int                        // announced length allocated up front; serverTrustedLen when less
	// pooled takes frames of pooled sizes from the frame pools (a server's
	// connections, whose runs give them back: framepool.go).
	pooled bool

	prefix [8]byte // the length and the header word
	nPre   int     // bytes of prefix collected
	frame  []byte  // frame being collected, nil between frames
	need   int     // length of the frame being collected (after the length)
	err    error   // sticky: once the stream is broken nothing more is emitted

	// The frame being dropped, when drop > 0.
	drop int // bytes of it still to come
	over oversizedFrame

	// first holds the stream's first bytes, to show when it turns out not
	// to be RocketMQ at all.
	first  [16]byte
	nFirst int
}

// oversizedFrame is what is kept of a frame with a header over the limit.
type oversizedFrame struct {
	serType    byte
	headerLen  int
	head, tail []byte
	pos        int // offset in the frame (after the length) of the next byte
}

// Announced frame lengths split allocates before the bytes arrive, at
// most: a server's, whose peers may be anyone, and a client's, whose peer
// is the server it chose (a pull's answer of 32 messages of 1 KiB is then
// one allocation, not grown and copied from 4 KiB in steps).
const (
	serverTrustedLen = 4 << 10
	clientTrustedLen = 256 << 10
)

func (s *frameSplitter) split(p []byte, emit func([]byte) error) (err error) {
	if s.err != nil {
		return s.err
	}
	if s.nFirst < len(s.first) {
		s.nFirst += copy(s.first[s.nFirst:], p)
	}
	defer func() { s.err = err }()
	for len(p) > 0 {
		if s.drop > 0 {
			k := min(s.drop, len(p))
			s.over.keep(p[:k])
			s.drop -= k
			p = p[k:]
			if s.drop == 0 {
				if err := s.oversize(s.over); err != nil {
					return err
				}
				s.over = oversizedFrame{}
			}
			continue
		}
		if s.frame == nil {
			k := copy(s.prefix[s.nPre:], p)
			s.nPre += k
			p = p[k:]
			// Every frame has its header word (FrameLength refuses less),
			// so the prefix's 8 bytes are all this frame's.
			if s.nPre < 4 {
				return nil
			}
			n, err := protocol.FrameLength(s.prefix[:4], s.max)
			if err != nil {
				return err
			}
			if s.nPre < 8 {
				return nil
			}
			s.nPre = 0
			word := binary.BigEndian.Uint32(s.prefix[4:])
			headerLen := int(word & 0xFFFFFF)
			if headerLen > n-4 {
				return fmt.Errorf("%w: header length %d exceeds frame of %d bytes", protocol.ErrBadHeader, headerLen, n)
			}
			if s.maxHeader > 0 && headerLen > s.maxHeader {
				s.drop = n - 4
				s.over = oversizedFrame{serType: byte(word >> 24), headerLen: headerLen, pos: 4}
				if s.drop == 0 {
					return s.oversize(s.over)
				}
				continue
			}
			s.need = n
			// Trust the length field for the allocation only up to
			// s.trust and grow with the bytes that actually arrive beyond
			// it: a peer announcing 16 MiB and sending nothing costs little.
			if s.pooled && frameClass(n) >= 0 {
				s.frame = getFrame(n)
			} else {
				s.frame = make([]byte, 0, min(n, max(len(p)+4, s.trust, serverTrustedLen)))
			}
			s.frame = append(s.frame, s.prefix[4:]...)
		}
		k := min(s.need-len(s.frame), len(p))
		s.frame = append(s.frame, p[:k]...)
		p = p[k:]
		if len(s.frame) == s.need {
			f := s.frame
			s.frame = nil
			if err := emit(f); err != nil {
				return err
			}
		}
	}
	return nil
}

// pending is how many more bytes complete what the splitter is in the
// middle of: the frame it collects or drops, or the length prefix and
// header word of the next one. A reader that waits for that many before
// feeding again feeds a frame whole, however many writes the peer made of
// it (the official client makes four: the length, the header word, the
// header, the body).
func (s *frameSplitter) pending() int {
	switch {
	case s.drop > 0:
		return s.drop
	case s.frame != nil:
		return s.need - len(s.frame)
	case s.nPre >= 4:
		// split checked the length before keeping more than its 4 bytes.
		return int(binary.BigEndian.Uint32(s.prefix[:4])) + 4 - s.nPre
	}
	return 4 - s.nPre
}

// between says the splitter holds nothing: what it was given ended with a
// whole frame.
func (s *frameSplitter) between() bool { return s.drop == 0 && s.frame == nil && s.nPre == 0 }

// keep notes b, the frame's bytes from o.pos on, keeping those in the
// first and last protocol.SkimSize bytes of the header.
func (o *oversizedFrame) keep(b []byte) {
	headStart, headerEnd := 4, 4+o.headerLen
	headEnd := headStart + min(o.headerLen, protocol.SkimSize)
	tailStart := headerEnd - min(o.headerLen, protocol.SkimSize)
	from, to := o.pos, o.pos+len(b)
	if lo, hi := max(from, headStart), min(to, headEnd); lo < hi {
		o.head = append(o.head, b[lo-from:hi-from]...)
	}
	if lo, hi := max(from, tailStart), min(to, headerEnd); lo < hi {
		o.tail = append(o.tail, b[lo-from:hi-from]...)
	}
	o.pos = to
}
