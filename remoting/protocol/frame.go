package protocol

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// MaxFrameSize is the largest frame (the length field's value) accepted by
// default, as in RocketMQ's NettyDecoder.
const MaxFrameSize = 16 << 20

// Errors returned by the frame decoder. Each means the peer sent bytes that
// are not a RocketMQ frame; the connection should be closed.
var (
	// ErrFrameTooLarge is returned for a length field above the limit.
	ErrFrameTooLarge = errors.New("protocol: frame too large")
	// ErrFrameTooShort is returned for a frame with no room for its header length.
	ErrFrameTooShort = errors.New("protocol: frame too short")
	// ErrBadHeader is returned for a header that does not decode.
	ErrBadHeader = errors.New("protocol: malformed header")
)

// FrameLength validates a frame's 4-byte length prefix against max and
// returns the number of bytes that follow it. Readers must check it before
// allocating a buffer for the frame, and servers should never pass max <= 0
// (no limit): the prefix is the peer's claim, up to 2 GiB.
func FrameLength(prefix []byte, max int) (int, error) {
	if len(prefix) < 4 {
		return 0, ErrFrameTooShort
	}
	n := int(int32(binary.BigEndian.Uint32(prefix)))
	if n < 4 {
		return 0, fmt.Errorf("%w: length %d", ErrFrameTooShort, n)
	}
	if max > 0 && n > max {
		return 0, fmt.Errorf("%w: %d bytes, limit %d", ErrFrameTooLarge, n, max)
	}
	return n, nil
}

// ReadFrame reads one frame from r, a blocking reader such as a net.Conn,
// and returns the bytes after its length prefix, for DecodeFrame. The
// prefix is checked against max (FrameLength) before anything is
// allocated for the rest. remoting's connections split their streams
// themselves; this is for a peer that makes one call on a socket of its
// own (the image probe) and for tests.
func ReadFrame(r io.Reader, max int) ([]byte, error) {
	var prefix [4]byte
	if _, err := io.ReadFull(r, prefix[:]); err != nil {
		return nil, err
	}
	n, err := FrameLength(prefix[:], max)
	if err != nil {
		return nil, err
	}
	frame := make([]byte, n)
	if _, err := io.ReadFull(r, frame); err != nil {
		return nil, err
	}
	return frame, nil
}

// DecodeFrame decodes the bytes after a frame's length prefix, with no
// Limits. The Body of the result aliases frame (so frame must not be reused
// while the command is alive); remark and extFields strings are copies.
func DecodeFrame(frame []byte) (*Command, error) { return DecodeFrameLimits(frame, Limits{}) }

// DecodeFrameLimits is DecodeFrame within lim. A frame that is well-formed
// but must be refused (a header over lim, a JSON code outside int16)
// yields a *RequestError, which says how to answer it; any other error
// means the bytes are not a RocketMQ frame.
func DecodeFrameLimits(frame []byte, lim Limits) (*Command, error) {
	return decodeFrame(frame, lim, true)
}

// decodeFrame is DecodeFrameLimits; without lazy every request's ext fields
// are decoded into the map (the reference the tests compare lazy with).
func decodeFrame(frame []byte, lim Limits, lazy bool) (*Command, error) {
	if len(frame) < 4 {
		return nil, ErrFrameTooShort
	}
	word := binary.BigEndian.Uint32(frame)
	serType := byte(word >> 24)
	headerLen := int(word & 0xFFFFFF)
	if headerLen > len(frame)-4 {
		return nil, fmt.Errorf("%w: header length %d exceeds frame of %d bytes", ErrBadHeader, headerLen, len(frame))
	}
	header := frame[4 : 4+headerLen]
	if lim.MaxHeaderSize > 0 && headerLen > lim.MaxHeaderSize {
		k := min(len(header), SkimSize)
		head, tail := header[:k], header[len(header)-k:]
		return nil, RefuseOversizedHeader(serType, head, tail, headerLen, lim.MaxHeaderSize)
	}
	var (
		cmd *Command
		err error
	)
	switch serType {
	case SerializeJSON:
		cmd, err = decodeJSONHeaderLimit(header, lim.MaxExtFields, lazy, lim.RawAnswers)
	case SerializeRocketMQ:
		cmd, err = decodeBinaryHeaderLimit(header, lim.MaxExtFields, lazy, lim.RawAnswers)
	default:
		return nil, fmt.Errorf("%w: unknown serialize type %d", ErrBadHeader, serType)
	}
	if err != nil {
		var re *RequestError
		if errors.As(err, &re) {
			re.Request.SerializeType = serType
		}
		return nil, err
	}
	cmd.SerializeType = serType
	if body := frame[4+headerLen:]; len(body) > 0 {
		cmd.Body = body
	}
	return cmd, nil
}

// tooManyExtFields is the RequestError of a header with more than limit
// ext fields; c holds the rest of what was decoded.
func tooManyExtFields(c *Command, limit int) *RequestError {
	c.ExtFields, c.rawExt, c.rawIdx = nil, nil, nil
	return &RequestError{
		Request: c,
		Code:    RespSystemError,
		Remark:  fmt.Sprintf("request header has more than %d ext fields (maxExtFields)", limit),
		Err:     ErrTooManyExtFields,
	}
}

// AppendFrame appends c's whole frame, length prefix included, to dst.
func AppendFrame(dst []byte, c *Command) ([]byte, error) {
	dst, err := AppendFrameHead(dst, c)
	if err != nil {
		return dst, err
	}
	return append(dst, c.Body...), nil
}

// AppendFrameHead appends c's frame without its body to dst: the length
// prefix (which counts the body) and the header. The frame is whole once
// c.Body follows it, so a writer can send a large body from where it lies
// (a vectored write) instead of copying it after the head.
func AppendFrameHead(dst []byte, c *Command) ([]byte, error) {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0, 0, 0, 0, 0)
	var err error
	switch c.SerializeType {
	case SerializeJSON:
		dst = appendJSONHeader(dst, c)
	case SerializeRocketMQ:
		dst, err = appendBinaryHeader(dst, c)
		if err != nil {
			return dst[:start], err
		}
	default:
		return dst[:start], fmt.Errorf("protocol: unknown serialize type %d", c.SerializeType)
	}
	headerLen := len(dst) - start - 8
	if headerLen > 0xFFFFFF {
		return dst[:start], fmt.Errorf("protocol: header of %d bytes too large", headerLen)
	}
	total := len(dst) - start - 4 + len(c.Body)
	if int64(total) > int64(^uint32(0)>>1) {
		return dst[:start], ErrFrameTooLarge
	}
	binary.BigEndian.PutUint32(dst[start:], uint32(total))
	binary.BigEndian.PutUint32(dst[start+4:], uint32(c.SerializeType)<<24|uint32(headerLen))
	return dst, nil
}

// EncodeFrame returns c's whole frame, length prefix included.
func EncodeFrame(c *Command) ([]byte, error) {
	return AppendFrame(make([]byte, 0, 128+len(c.Body)+32*len(c.Fields())), c)
}
