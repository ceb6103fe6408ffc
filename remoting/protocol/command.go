package protocol

import (
	"fmt"
	"sync/atomic"
)

// Flag bits of a Command.
const (
	// FlagResponse marks a response; a request has it clear.
	FlagResponse int32 = 1
	// FlagOneway marks a request whose sender wants no answer. The official
	// Go client never sets it, even for its "oneway" calls.
	FlagOneway int32 = 2
)

// Serialize types, the high byte of the frame's second word.
const (
	SerializeJSON     byte = 0
	SerializeRocketMQ byte = 1
)

// Version is the protocol version Runnel announces (RocketMQ V4_5_2, the value
// the official Go client sends).
const Version int16 = 317

// LanguageGo is what Runnel puts in the language field.
const LanguageGo = "GO"

// Command is one remoting request or response.
//
// ExtFields values are always strings on the wire; typed headers convert
// to and from them.
type Command struct {
	Code      int16
	Language  string
	Version   int16
	Opaque    int32
	Flag      int32
	Remark    string
	ExtFields map[string]string
	// MoreExt are ext fields encoded after ExtFields, for a sender adding
	// fields to a map it does not own without copying it (a client's
	// signature). A key in both is encoded twice, and decoders keep the
	// later one: MoreExt's. Decoding never sets it.
	MoreExt []Field
	Body    []byte

	// SerializeType is the header encoding the command arrived in, or the one
	// to encode it with. Responses default to the request's.
	SerializeType byte
}

// Field is one ext field.
type Field struct{ Key, Value string }

var opaqueSeq atomic.Int32

// NextOpaque returns a process-wide unique request id.
func NextOpaque() int32 { return opaqueSeq.Add(1) }

// NewRequest builds a request with a fresh opaque.
func NewRequest(code int16, ext map[string]string, body []byte) *Command {
	return &Command{
		Code:      code,
		Language:  LanguageGo,
		Version:   Version,
		Opaque:    NextOpaque(),
		ExtFields: ext,
		Body:      body,
	}
}

// NewResponse builds the response to req with the given code and remark.
func NewResponse(req *Command, code int16, remark string) *Command {
	return &Command{
		Code:          code,
		Language:      LanguageGo,
		Version:       Version,
		Opaque:        req.Opaque,
		Flag:          FlagResponse,
		Remark:        remark,
		SerializeType: req.SerializeType,
	}
}

// IsResponse reports whether c is a response.
func (c *Command) IsResponse() bool { return c.Flag&FlagResponse != 0 }

// IsOneway reports whether c is a request that wants no answer.
func (c *Command) IsOneway() bool { return c.Flag&FlagOneway != 0 }

// Ext returns the extFields value for key, or "".
func (c *Command) Ext(key string) string {
	if c.ExtFields == nil {
		return ""
	}
	return c.ExtFields[key]
}

// SetExt sets an extFields value, allocating the map on first use.
func (c *Command) SetExt(key, value string) {
	if c.ExtFields == nil {
		c.ExtFields = make(map[string]string, 4)
	}
	c.ExtFields[key] = value
}

func (c *Command) String() string {
	kind := "request"
	if c.IsResponse() {
		kind = "response"
	}
	return fmt.Sprintf("%s{code=%d opaque=%d flag=%d remark=%q ext=%v body=%dB}",
		kind, c.Code, c.Opaque, c.Flag, c.Remark, c.ExtFields, len(c.Body))
}
