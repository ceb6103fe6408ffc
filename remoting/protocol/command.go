package protocol

import (
	"fmt"
	"sync/atomic"
	"unsafe"
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
//
// A decoded request of a send or a pull (lazyExtCode) arrives with its
// ext fields undecoded and ExtFields nil: read them with Ext, Fields or a
// typed header's DecodeCommand, never through ExtFields directly (see
// extraw.go). A command built in memory has them in ExtFields, and every
// accessor reads them there. Fields, SetExt and encoding decode them (they
// modify the command); Ext and DecodeCommand only read, so several
// goroutines may use those at once.
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
	// ReleaseBody, when set on a response, is called at most once, when
	// the connection no longer refers to Body: after the write that carried
	// it (or failed to), once Body was copied into the write buffer, or
	// when the connection was closed already. Its owner may then reuse
	// Body's memory (a pooled pull buffer). It is not called for a frame a
	// close drops from the write buffer, nor for a response nobody sends:
	// that memory is the collector's.
	ReleaseBody func()

	// SerializeType is the header encoding the command arrived in, or the one
	// to encode it with. Responses default to the request's.
	SerializeType byte

	// rawExt, when not nil, is the ext section as it arrived, checked but
	// not decoded (ExtFields is nil meanwhile), in the encoding rawSer. It
	// aliases the frame, which the command owns.
	rawExt []byte
	rawSer byte
	// rawIdx, for a JSON rawExt, is where its fields are (found when it was
	// checked), so reads do not scan the text again.
	rawIdx []extSpan
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

// Ext returns the extFields value for key, or "". On undecoded ext fields
// it scans them for key and decodes nothing else.
func (c *Command) Ext(key string) string {
	// A field in MoreExt is encoded after the rest and decoded over them,
	// so the last one there is the field's value (a command being sent:
	// decoding never sets MoreExt).
	for i := len(c.MoreExt) - 1; i >= 0; i-- {
		if c.MoreExt[i].Key == key {
			return c.MoreExt[i].Value
		}
	}
	if c.rawExt != nil {
		if c.rawIdx != nil {
			// Only the value found is unescaped.
			v, _ := indexGet(c.rawExt, c.rawIdx, key)
			return internValue(v)
		}
		v := ""
		_ = walkExt(c.rawSer, c.rawExt, func(k, val []byte) {
			if string(k) == key {
				v = internValue(val)
			}
		})
		return v
	}
	if c.ExtFields == nil {
		return ""
	}
	return c.ExtFields[key]
}

// RangeExt calls fn with each ext field until fn returns false, without
// decoding undecoded ones into the map: in wire order then (a repeated key
// comes once per occurrence, the last being the one Ext returns), in map
// order otherwise. For a verifier that reads every field (ACL's signature).
// MoreExt is not ranged over: a command being sent has its fields there,
// and a decoded one has none.
func (c *Command) RangeExt(fn func(key, value string) bool) {
	if c.rawExt == nil {
		for k, v := range c.ExtFields {
			if !fn(k, v) {
				return
			}
		}
		return
	}
	stop := false
	c.walkRaw(func(k, v []byte) {
		if !stop {
			stop = !fn(internKey(k), internValue(v))
		}
	})
}

// RangeExtBytes is RangeExt without making strings: key and val are valid
// only during the call and must not be modified (they alias the frame, a
// scratch buffer, or the map's strings). For a verifier that copies what
// it keeps, so a request it reads whole allocates nothing for it.
func (c *Command) RangeExtBytes(fn func(key, val []byte) bool) {
	if c.rawExt == nil {
		for k, v := range c.ExtFields {
			if !fn(unsafe.Slice(unsafe.StringData(k), len(k)), unsafe.Slice(unsafe.StringData(v), len(v))) {
				return
			}
		}
		return
	}
	stop := false
	c.walkRaw(func(k, v []byte) {
		if !stop {
			stop = !fn(k, v)
		}
	})
}

// Fields returns the ext fields as a map, decoding them on first use; the
// map is c's ExtFields.
func (c *Command) Fields() map[string]string {
	if c.rawExt != nil {
		if c.ExtFields == nil {
			c.ExtFields = c.decodeRaw()
		}
		c.rawExt, c.rawIdx = nil, nil
	}
	return c.ExtFields
}

// SetExt sets an extFields value, allocating the map on first use.
func (c *Command) SetExt(key, value string) {
	c.Fields()
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
		kind, c.Code, c.Opaque, c.Flag, c.Remark, c.extView(), len(c.Body))
}

// extView is the ext fields as a map without changing c: a decoded copy
// when they are undecoded.
func (c *Command) extView() map[string]string {
	if c.rawExt != nil && c.ExtFields == nil {
		return c.decodeRaw()
	}
	return c.ExtFields
}
