package protocol

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
)

// Limits bounds what a request's header may hold, so that a peer cannot
// make a server allocate far more than it sent: a header of a million tiny
// ext fields costs ~100 bytes of map and strings per 8 bytes of frame. A
// zero field means no limit.
//
// RocketMQ's Java decoder bounds only the frame (16 MiB, NettyDecoder) and
// so the header with it. The defaults below leave room for every header a
// RocketMQ client sends for a message Java would store: the largest is a
// send's properties, which Java caps at 32767 bytes (Short.MAX_VALUE) and
// which JSON-escapes to at most six times that with its \u0001 and \u0002
// separators; the request with the most ext fields has about thirty.
type Limits struct {
	// MaxHeaderSize is the largest header (the frame's 24-bit header
	// length) accepted. Default DefaultMaxHeaderSize.
	MaxHeaderSize int
	// MaxExtFields is the most extFields entries accepted. Default
	// DefaultMaxExtFields.
	MaxExtFields int
	// RawAnswers leaves every response's ext fields undecoded, as the
	// requests of sends and pulls are (extraw.go), for a receiver that
	// decodes them (Command.Fields) when it has found the call the answer
	// is for and that call did not ask to read them raw. It does not bound
	// anything; it rides here as the one set of decode options.
	RawAnswers bool
}

// Default limits of a server's requests (see Limits).
const (
	DefaultMaxHeaderSize = 256 << 10
	DefaultMaxExtFields  = 1024
)

// RequestError is returned by DecodeFrameLimits for a frame that is
// well-formed but must be refused, with what the refusal needs: the
// request's opaque and flags, and the response code and remark to answer.
// The connection stays usable.
type RequestError struct {
	// Request holds what was decoded of the header: code (0 when out of
	// range), language, version, opaque and flag, but no ext fields and no
	// body.
	Request *Command
	Code    int16 // response code to answer with
	Remark  string
	Err     error // ErrCodeOutOfRange, ErrHeaderTooLarge or ErrTooManyExtFields
}

func (e *RequestError) Error() string { return "protocol: " + e.Remark }

func (e *RequestError) Unwrap() error { return e.Err }

// Reasons a RequestError gives.
var (
	// ErrCodeOutOfRange: a JSON header's code does not fit the int16 of
	// RocketMQ's request codes; Java answers such a code
	// REQUEST_CODE_NOT_SUPPORTED, as any code it has no processor for.
	ErrCodeOutOfRange = errors.New("protocol: request code out of range")
	// ErrHeaderTooLarge: the header is over Limits.MaxHeaderSize.
	ErrHeaderTooLarge = errors.New("protocol: header too large")
	// ErrTooManyExtFields: the header has more than Limits.MaxExtFields
	// ext fields.
	ErrTooManyExtFields = errors.New("protocol: too many ext fields")
)

// RefuseOversizedHeader returns the *RequestError of a header of n bytes
// over limit, of which head and tail are the first and last SkimSize
// bytes. When its opaque cannot be found (see SkimHeader) the frame cannot
// be answered, and the error wraps ErrBadHeader instead.
func RefuseOversizedHeader(serType byte, head, tail []byte, n, limit int) error {
	req, ok := SkimHeader(serType, head, tail)
	if !ok {
		return fmt.Errorf("%w: header of %d bytes exceeds the limit of %d bytes (maxHeaderSize), with no opaque to answer it by", ErrBadHeader, n, limit)
	}
	return &RequestError{
		Request: req,
		Code:    RespSystemError,
		Remark:  fmt.Sprintf("request header of %d bytes exceeds the limit of %d bytes (maxHeaderSize)", n, limit),
		Err:     ErrHeaderTooLarge,
	}
}

// SkimSize is how many bytes of each end of an oversized header SkimHeader
// needs.
const SkimSize = 1 << 10

// SkimHeader finds a header's code, opaque and flag from only its first
// and last bytes (up to SkimSize each), for answering a header too large
// to read whole. A ROCKETMQ binary header has them at fixed offsets. In a
// JSON header they are read from the top-level fields that fit in head
// (the official Go client writes code, language, version, opaque and flag
// first), else found in tail (Java's fastjson sorts the fields, so flag and
// opaque follow the extFields); a match in tail is a best effort, as an ext
// value could imitate one. ok is false when no opaque was found.
func SkimHeader(serType byte, head, tail []byte) (cmd *Command, ok bool) {
	switch serType {
	case SerializeRocketMQ:
		if len(head) < 13 {
			return nil, false
		}
		c := &Command{
			Code:          int16(binary.BigEndian.Uint16(head[0:])),
			Version:       int16(binary.BigEndian.Uint16(head[3:])),
			Opaque:        int32(binary.BigEndian.Uint32(head[5:])),
			Flag:          int32(binary.BigEndian.Uint32(head[9:])),
			SerializeType: serType,
		}
		return c, true
	case SerializeJSON:
	default:
		return nil, false
	}
	c := &Command{SerializeType: serType}
	var haveOpaque, haveFlag bool
	d := jsonDecoder{b: head}
	if d.expect('{') != nil {
		return nil, false
	}
fields:
	for {
		key, err := d.rawString()
		if err != nil || d.expect(':') != nil {
			break
		}
		d.ws()
		switch string(key) {
		case "code", "opaque", "flag":
			v, err := d.integer(string(key), 32)
			if err != nil {
				break fields
			}
			switch string(key) {
			case "code":
				if int64(int16(v)) == v {
					c.Code = int16(v)
				}
			case "opaque":
				c.Opaque, haveOpaque = int32(v), true
			case "flag":
				c.Flag, haveFlag = int32(v), true
			}
		default:
			if d.skip(0) != nil {
				break fields
			}
		}
		if d.peek() != ',' {
			break
		}
		d.i++
	}
	if !haveOpaque {
		c.Opaque, haveOpaque = lastJSONInt(tail, `"opaque":`)
	}
	if !haveFlag {
		c.Flag, _ = lastJSONInt(tail, `"flag":`)
	}
	return c, haveOpaque
}

// lastJSONInt finds the last key in b followed by an int32 and a ',' or '}'.
func lastJSONInt(b []byte, key string) (int32, bool) {
	for end := len(b); ; {
		i := bytes.LastIndex(b[:end], []byte(key))
		if i < 0 {
			return 0, false
		}
		end = i
		rest := bytes.TrimLeft(b[i+len(key):], " \t\r\n")
		j := 0
		if j < len(rest) && rest[j] == '-' {
			j++
		}
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		tailRest := bytes.TrimLeft(rest[j:], " \t\r\n")
		if j == 0 || len(tailRest) == 0 || (tailRest[0] != ',' && tailRest[0] != '}') {
			continue
		}
		v, err := strconv.ParseInt(string(rest[:j]), 10, 32)
		if err != nil {
			continue
		}
		return int32(v), true
	}
}
