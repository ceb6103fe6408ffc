package message

import (
	"bytes"
	"compress/zlib"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"sync"
	"time"
)

// ErrBadMessageID is returned (wrapped) for an offsetMsgId that does not parse.
var ErrBadMessageID = errors.New("message: bad message id")

// OffsetMsgID encodes a store host and a commit-log offset as RocketMQ's
// offsetMsgId: uppercase hex of IP (4 or 16 bytes), port (int32) and offset
// (int64); 32 characters for IPv4, 56 for IPv6.
func OffsetMsgID(storeHost netip.AddrPort, physOffset int64) string {
	var out [56]byte
	return string(appendOffsetMsgID(out[:0], storeHost, physOffset))
}

// appendOffsetMsgID appends OffsetMsgID's text to dst.
func appendOffsetMsgID(dst []byte, storeHost netip.AddrPort, physOffset int64) []byte {
	var raw [28]byte
	b := appendHost(raw[:0], storeHost)
	b = binary.BigEndian.AppendUint64(b, uint64(physOffset))
	return appendUpperHex(dst, b)
}

// appendUpperHex appends src as uppercase hex, the form of RocketMQ's ids.
// Ids are made per message (stored, decoded, sent), so they are built in a
// caller's stack buffer and cost one allocation, the string.
func appendUpperHex(dst, src []byte) []byte {
	const digits = "0123456789ABCDEF"
	for _, v := range src {
		dst = append(dst, digits[v>>4], digits[v&0xF])
	}
	return dst
}

// ParseOffsetMsgID reverses OffsetMsgID.
func ParseOffsetMsgID(id string) (netip.AddrPort, int64, error) {
	var ipLen int
	switch len(id) {
	case 32:
		ipLen = 4
	case 56:
		ipLen = 16
	default:
		return netip.AddrPort{}, 0, fmt.Errorf("%w: %q has %d characters, want 32 or 56", ErrBadMessageID, id, len(id))
	}
	raw, err := hex.DecodeString(id)
	if err != nil {
		return netip.AddrPort{}, 0, fmt.Errorf("%w: %q: %v", ErrBadMessageID, id, err)
	}
	addr, _ := netip.AddrFromSlice(raw[:ipLen])
	port := int32(binary.BigEndian.Uint32(raw[ipLen:]))
	if port < 0 || port > 65535 {
		return netip.AddrPort{}, 0, fmt.Errorf("%w: %q: port %d", ErrBadMessageID, id, port)
	}
	off := int64(binary.BigEndian.Uint64(raw[ipLen+4:]))
	return netip.AddrPortFrom(addr, uint16(port)), off, nil
}

// UniqIDGenerator makes client message ids (the UNIQ_KEY property) in the
// layout of Java's MessageClientIDSetter: a 20-hex-digit uppercase prefix
// of IPv4 (4 bytes), pid (int16) and a class-loader id (int32), then 12 hex
// digits of milliseconds since the start of the month (int32) and a counter
// (int16). Each producer of ids (a broker, a client) owns one, so the host
// in an id is its maker's, even with several in one process.
type UniqIDGenerator struct {
	prefix string

	mu         sync.Mutex
	monthStart time.Time
	nextMonth  time.Time
	counter    uint16
}

// NewUniqIDGenerator returns a generator whose ids embed host; a host that
// is not IPv4 (or the zero address) gets a random address instead, as the
// Go client falls back to a fake IP, which keeps ids unique but hides the
// host.
func NewUniqIDGenerator(host netip.Addr) *UniqIDGenerator {
	var ip [4]byte
	if h := host.Unmap(); h.Is4() {
		ip = h.As4()
	} else {
		_, _ = rand.Read(ip[:])
	}
	b := make([]byte, 0, 10)
	b = append(b, ip[:]...)
	b = binary.BigEndian.AppendUint16(b, uint16(os.Getpid()))
	b = binary.BigEndian.AppendUint32(b, 0) // class-loader id: 0, as the Go client
	return &UniqIDGenerator{prefix: string(appendUpperHex(nil, b))}
}

// anonymousIDs serves NewUniqID.
var anonymousIDs = NewUniqIDGenerator(netip.Addr{})

// NewUniqID returns a fresh id from a generator of a random address, for
// makers of messages that have no host of their own (tests, tools).
func NewUniqID() string { return anonymousIDs.Next() }

// Next returns a fresh id.
func (g *UniqIDGenerator) Next() string { return g.next(time.Now()) }

func (g *UniqIDGenerator) next(now time.Time) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !now.Before(g.nextMonth) || now.Before(g.monthStart) {
		y, mo, _ := now.Date()
		g.monthStart = time.Date(y, mo, 1, 0, 0, 0, 0, now.Location())
		g.nextMonth = g.monthStart.AddDate(0, 1, 0)
	}
	g.counter++
	var tail [6]byte
	binary.BigEndian.PutUint32(tail[:], uint32(now.Sub(g.monthStart).Milliseconds()))
	binary.BigEndian.PutUint16(tail[4:], g.counter)
	// Uppercase like Java's MessageClientIDSetter: ids are compared as
	// strings, so a lowercase tail would not match a Java-made id.
	var out [32]byte
	id := append(out[:0], g.prefix...)
	return string(appendUpperHex(id, tail[:]))
}

// ErrDecompress is returned (wrapped) by Decompress for bad or oversized input.
var ErrDecompress = errors.New("message: decompress")

// Compress zlib-compresses b at the given level (the Go client uses 5).
func Compress(b []byte, level int) ([]byte, error) {
	var buf bytes.Buffer
	w, err := zlib.NewWriterLevel(&buf, level)
	if err != nil {
		return nil, fmt.Errorf("message: compress: %w", err)
	}
	if _, err := w.Write(b); err != nil {
		return nil, fmt.Errorf("message: compress: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("message: compress: %w", err)
	}
	return buf.Bytes(), nil
}

// Decompress inflates a zlib stream, failing if the output would exceed max
// bytes (max <= 0 means no limit).
func Decompress(b []byte, max int) ([]byte, error) {
	r, err := zlib.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDecompress, err)
	}
	defer r.Close()
	var src io.Reader = r
	if max > 0 {
		src = io.LimitReader(r, int64(max)+1)
	}
	out, err := io.ReadAll(src)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDecompress, err)
	}
	if max > 0 && len(out) > max {
		return nil, fmt.Errorf("%w: output exceeds %d bytes", ErrDecompress, max)
	}
	return out, nil
}
