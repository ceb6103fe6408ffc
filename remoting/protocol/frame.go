package protocol

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
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
// returns the number of bytes that follow it.
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

// DecodeFrame decodes the bytes after a frame's length prefix. The Body of
// the result aliases frame.
func DecodeFrame(frame []byte) (*Command, error) {
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
	var (
		cmd *Command
		err error
	)
	switch serType {
	case SerializeJSON:
		cmd, err = decodeJSONHeader(header)
	case SerializeRocketMQ:
		cmd, err = decodeBinaryHeader(header)
	default:
		return nil, fmt.Errorf("%w: unknown serialize type %d", ErrBadHeader, serType)
	}
	if err != nil {
		return nil, err
	}
	cmd.SerializeType = serType
	if body := frame[4+headerLen:]; len(body) > 0 {
		cmd.Body = body
	}
	return cmd, nil
}

// AppendFrame appends c's whole frame, length prefix included, to dst.
func AppendFrame(dst []byte, c *Command) ([]byte, error) {
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
	dst = append(dst, c.Body...)
	total := len(dst) - start - 4
	if int64(total) > int64(^uint32(0)>>1) {
		return dst[:start], ErrFrameTooLarge
	}
	binary.BigEndian.PutUint32(dst[start:], uint32(total))
	binary.BigEndian.PutUint32(dst[start+4:], uint32(c.SerializeType)<<24|uint32(headerLen))
	return dst, nil
}

// EncodeFrame returns c's whole frame, length prefix included.
func EncodeFrame(c *Command) ([]byte, error) {
	return AppendFrame(make([]byte, 0, 128+len(c.Body)+32*len(c.ExtFields)), c)
}

// appendJSONHeader writes the header in the order the official Go client
// uses: code, language, version, opaque, flag, remark, extFields. Every
// extFields value is a JSON string.
func appendJSONHeader(dst []byte, c *Command) []byte {
	lang := c.Language
	if lang == "" {
		lang = LanguageGo
	}
	dst = append(dst, `{"code":`...)
	dst = strconv.AppendInt(dst, int64(c.Code), 10)
	dst = append(dst, `,"language":`...)
	dst = appendJSONString(dst, lang)
	dst = append(dst, `,"version":`...)
	dst = strconv.AppendInt(dst, int64(c.Version), 10)
	dst = append(dst, `,"opaque":`...)
	dst = strconv.AppendInt(dst, int64(c.Opaque), 10)
	dst = append(dst, `,"flag":`...)
	dst = strconv.AppendInt(dst, int64(c.Flag), 10)
	dst = append(dst, `,"remark":`...)
	dst = appendJSONString(dst, c.Remark)
	dst = append(dst, `,"extFields":{`...)
	first := true
	for k, v := range c.ExtFields {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = appendJSONString(dst, k)
		dst = append(dst, ':')
		dst = appendJSONString(dst, v)
	}
	return append(dst, "}}"...)
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string. Invalid UTF-8 passes through
// byte for byte, as RocketMQ's own encoders do, rather than being replaced.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		b := s[i]
		switch {
		case b == '"' || b == '\\':
			dst = append(dst, '\\', b)
		case b < 0x20:
			switch b {
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
		default:
			dst = append(dst, b)
		}
	}
	return append(dst, '"')
}

type jsonHeader struct {
	Code      int16                `json:"code"`
	Language  json.RawMessage      `json:"language"`
	Version   int16                `json:"version"`
	Opaque    int32                `json:"opaque"`
	Flag      int32                `json:"flag"`
	Remark    *string              `json:"remark"`
	ExtFields map[string]extString `json:"extFields"`
}

// extString accepts any JSON scalar as an extFields value. RocketMQ peers send
// strings; a lenient decoder keeps a sloppy third-party peer working.
type extString string

func (e *extString) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*e = extString(s)
		return nil
	}
	switch string(b) {
	case "null":
		*e = ""
		return nil
	}
	if len(b) > 0 && (b[0] == '{' || b[0] == '[') {
		return fmt.Errorf("extFields value is not a scalar")
	}
	*e = extString(b)
	return nil
}

func decodeJSONHeader(b []byte) (*Command, error) {
	var h jsonHeader
	if err := json.Unmarshal(b, &h); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadHeader, err)
	}
	c := &Command{Code: h.Code, Version: h.Version, Opaque: h.Opaque, Flag: h.Flag}
	if len(h.Language) > 0 {
		var s string
		if json.Unmarshal(h.Language, &s) == nil {
			c.Language = s
		} else {
			c.Language = string(h.Language)
		}
	}
	if h.Remark != nil {
		c.Remark = *h.Remark
	}
	if len(h.ExtFields) > 0 {
		c.ExtFields = make(map[string]string, len(h.ExtFields))
		for k, v := range h.ExtFields {
			c.ExtFields[k] = string(v)
		}
	}
	return c, nil
}
