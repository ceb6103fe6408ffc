package protocol

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// RocketMQ 5's POP requests: POP_MESSAGE (3442), ACK_MESSAGE (3443),
// CHANGE_MESSAGE_INVISIBLETIME (3445), NOTIFICATION (3446) and
// BATCH_ACK_MESSAGE (3543), with Java's headers and body.

// PopMessageRequestHeader is the ext of POP_MESSAGE.
type PopMessageRequestHeader struct {
	ConsumerGroup string // consumerGroup
	Topic         string // topic
	QueueID       int32  // queueId: -1 for every queue of the topic
	MaxMsgNums    int32  // maxMsgNums
	InvisibleTime int64  // invisibleTime (ms)
	PollTime      int64  // pollTime (ms): how long the broker may hold the pop
	BornTime      int64  // bornTime (ms): when the client sent it
	InitMode      int32  // initMode: ConsumeInitMode MIN 0, MAX 1
	ExpType       string // expType (optional): TAG or SQL92
	Exp           string // exp (optional)
	Order         bool   // order (optional): a FIFO pop
	AttemptID     string // attemptId (optional)
}

// Consume init modes (Java ConsumeInitMode).
const (
	ConsumeInitModeMin = 0
	ConsumeInitModeMax = 1
)

// Decode reads the header; group, topic, queue, the counts and times and
// initMode are required, as Java's @CFNotNull fields.
func (h *PopMessageRequestHeader) Decode(ext map[string]string) error {
	d := newExtDecoder("POP_MESSAGE", ext)
	*h = PopMessageRequestHeader{
		ConsumerGroup: d.str("consumerGroup", true),
		Topic:         d.str("topic", true),
		QueueID:       d.int32("queueId", true, 0),
		MaxMsgNums:    d.int32("maxMsgNums", true, 0),
		InvisibleTime: d.int64("invisibleTime", true, 0),
		PollTime:      d.int64("pollTime", true, 0),
		BornTime:      d.int64("bornTime", true, 0),
		InitMode:      d.int32("initMode", true, 0),
		ExpType:       d.str("expType", false),
		Exp:           d.str("exp", false),
		Order:         d.bool("order", false),
		AttemptID:     d.str("attemptId", false),
	}
	return d.err
}

// Encode returns the header as extFields.
func (h PopMessageRequestHeader) Encode() map[string]string {
	e := make(extEncoder, 12)
	e.str("consumerGroup", h.ConsumerGroup)
	e.str("topic", h.Topic)
	e.int32("queueId", h.QueueID)
	e.int32("maxMsgNums", h.MaxMsgNums)
	e.int64("invisibleTime", h.InvisibleTime)
	e.int64("pollTime", h.PollTime)
	e.int64("bornTime", h.BornTime)
	e.int32("initMode", h.InitMode)
	e.optStr("expType", h.ExpType)
	e.optStr("exp", h.Exp)
	e.bool("order", h.Order)
	e.optStr("attemptId", h.AttemptID)
	return e
}

// PopMessageResponseHeader is the ext of a POP_MESSAGE answer. A Java
// client builds each message's receipt handle from it (unless the message
// carries one in POP_CK): popTime, invisibleTime and reviveQid are the
// answer's, and the start and message offsets per queue are in
// startOffsetInfo and msgOffsetInfo, ';'-separated entries of
// "topicType queueId offset[,offset...]" (Java ExtraInfoUtil).
type PopMessageResponseHeader struct {
	PopTime         int64  // popTime
	InvisibleTime   int64  // invisibleTime
	ReviveQid       int32  // reviveQid
	RestNum         int64  // restNum
	StartOffsetInfo string // startOffsetInfo (optional)
	MsgOffsetInfo   string // msgOffsetInfo (optional)
	OrderCountInfo  string // orderCountInfo (optional)
}

// Decode reads the header; the four numbers are required.
func (h *PopMessageResponseHeader) Decode(ext map[string]string) error {
	d := newExtDecoder("POP_MESSAGE response", ext)
	*h = PopMessageResponseHeader{
		PopTime:         d.int64("popTime", true, 0),
		InvisibleTime:   d.int64("invisibleTime", true, 0),
		ReviveQid:       d.int32("reviveQid", true, 0),
		RestNum:         d.int64("restNum", true, 0),
		StartOffsetInfo: d.str("startOffsetInfo", false),
		MsgOffsetInfo:   d.str("msgOffsetInfo", false),
		OrderCountInfo:  d.str("orderCountInfo", false),
	}
	return d.err
}

// Encode returns the header as extFields.
func (h PopMessageResponseHeader) Encode() map[string]string {
	e := make(extEncoder, 7)
	e.int64("popTime", h.PopTime)
	e.int64("invisibleTime", h.InvisibleTime)
	e.int32("reviveQid", h.ReviveQid)
	e.int64("restNum", h.RestNum)
	e.optStr("startOffsetInfo", h.StartOffsetInfo)
	e.optStr("msgOffsetInfo", h.MsgOffsetInfo)
	e.optStr("orderCountInfo", h.OrderCountInfo)
	return e
}

// AckMessageRequestHeader is the ext of ACK_MESSAGE: a popped message's
// topic (a retry topic's name for a message that came back through one),
// queue and offset, and its receipt handle (extraInfo).
type AckMessageRequestHeader struct {
	ConsumerGroup string // consumerGroup
	Topic         string // topic
	QueueID       int32  // queueId
	ExtraInfo     string // extraInfo
	Offset        int64  // offset
}

// Decode reads the header; every field is required.
func (h *AckMessageRequestHeader) Decode(ext map[string]string) error {
	d := newExtDecoder("ACK_MESSAGE", ext)
	*h = AckMessageRequestHeader{
		ConsumerGroup: d.str("consumerGroup", true),
		Topic:         d.str("topic", true),
		QueueID:       d.int32("queueId", true, 0),
		ExtraInfo:     d.str("extraInfo", true),
		Offset:        d.int64("offset", true, 0),
	}
	return d.err
}

// Encode returns the header as extFields.
func (h AckMessageRequestHeader) Encode() map[string]string {
	e := make(extEncoder, 5)
	e.str("consumerGroup", h.ConsumerGroup)
	e.str("topic", h.Topic)
	e.int32("queueId", h.QueueID)
	e.str("extraInfo", h.ExtraInfo)
	e.int64("offset", h.Offset)
	return e
}

// ChangeInvisibleTimeRequestHeader is the ext of
// CHANGE_MESSAGE_INVISIBLETIME: ACK_MESSAGE's fields and the new invisible
// time (ms, from now).
type ChangeInvisibleTimeRequestHeader struct {
	ConsumerGroup string // consumerGroup
	Topic         string // topic
	QueueID       int32  // queueId
	ExtraInfo     string // extraInfo
	Offset        int64  // offset
	InvisibleTime int64  // invisibleTime
}

// Decode reads the header; every field is required.
func (h *ChangeInvisibleTimeRequestHeader) Decode(ext map[string]string) error {
	d := newExtDecoder("CHANGE_MESSAGE_INVISIBLETIME", ext)
	*h = ChangeInvisibleTimeRequestHeader{
		ConsumerGroup: d.str("consumerGroup", true),
		Topic:         d.str("topic", true),
		QueueID:       d.int32("queueId", true, 0),
		ExtraInfo:     d.str("extraInfo", true),
		Offset:        d.int64("offset", true, 0),
		InvisibleTime: d.int64("invisibleTime", true, 0),
	}
	return d.err
}

// Encode returns the header as extFields.
func (h ChangeInvisibleTimeRequestHeader) Encode() map[string]string {
	e := make(extEncoder, 6)
	e.str("consumerGroup", h.ConsumerGroup)
	e.str("topic", h.Topic)
	e.int32("queueId", h.QueueID)
	e.str("extraInfo", h.ExtraInfo)
	e.int64("offset", h.Offset)
	e.int64("invisibleTime", h.InvisibleTime)
	return e
}

// ChangeInvisibleTimeResponseHeader is the ext of a
// CHANGE_MESSAGE_INVISIBLETIME answer: what the message's new receipt
// handle is built from.
type ChangeInvisibleTimeResponseHeader struct {
	PopTime       int64 // popTime
	InvisibleTime int64 // invisibleTime
	ReviveQid     int32 // reviveQid
}

// Decode reads the header; every field is required.
func (h *ChangeInvisibleTimeResponseHeader) Decode(ext map[string]string) error {
	d := newExtDecoder("CHANGE_MESSAGE_INVISIBLETIME response", ext)
	*h = ChangeInvisibleTimeResponseHeader{
		PopTime:       d.int64("popTime", true, 0),
		InvisibleTime: d.int64("invisibleTime", true, 0),
		ReviveQid:     d.int32("reviveQid", true, 0),
	}
	return d.err
}

// Encode returns the header as extFields.
func (h ChangeInvisibleTimeResponseHeader) Encode() map[string]string {
	e := make(extEncoder, 3)
	e.int64("popTime", h.PopTime)
	e.int64("invisibleTime", h.InvisibleTime)
	e.int32("reviveQid", h.ReviveQid)
	return e
}

// NotificationRequestHeader is the ext of NOTIFICATION: is there anything
// to pop for the group, holding the answer up to pollTime until there is.
type NotificationRequestHeader struct {
	ConsumerGroup string // consumerGroup
	Topic         string // topic
	QueueID       int32  // queueId: -1 for every queue
	PollTime      int64  // pollTime
	BornTime      int64  // bornTime
	Order         bool   // order (optional)
	AttemptID     string // attemptId (optional)
}

// Decode reads the header; all but order and attemptId are required.
func (h *NotificationRequestHeader) Decode(ext map[string]string) error {
	d := newExtDecoder("NOTIFICATION", ext)
	*h = NotificationRequestHeader{
		ConsumerGroup: d.str("consumerGroup", true),
		Topic:         d.str("topic", true),
		QueueID:       d.int32("queueId", true, 0),
		PollTime:      d.int64("pollTime", true, 0),
		BornTime:      d.int64("bornTime", true, 0),
		Order:         d.bool("order", false),
		AttemptID:     d.str("attemptId", false),
	}
	return d.err
}

// Encode returns the header as extFields.
func (h NotificationRequestHeader) Encode() map[string]string {
	e := make(extEncoder, 7)
	e.str("consumerGroup", h.ConsumerGroup)
	e.str("topic", h.Topic)
	e.int32("queueId", h.QueueID)
	e.int64("pollTime", h.PollTime)
	e.int64("bornTime", h.BornTime)
	e.bool("order", h.Order)
	e.optStr("attemptId", h.AttemptID)
	return e
}

// NotificationResponseHeader is the ext of a NOTIFICATION answer.
type NotificationResponseHeader struct {
	HasMsg      bool // hasMsg
	PollingFull bool // pollingFull (optional)
}

// Decode reads the header; hasMsg is required.
func (h *NotificationResponseHeader) Decode(ext map[string]string) error {
	d := newExtDecoder("NOTIFICATION response", ext)
	*h = NotificationResponseHeader{HasMsg: d.bool("hasMsg", true), PollingFull: d.bool("pollingFull", false)}
	return d.err
}

// Encode returns the header as extFields.
func (h NotificationResponseHeader) Encode() map[string]string {
	e := make(extEncoder, 2)
	e.bool("hasMsg", h.HasMsg)
	e.bool("pollingFull", h.PollingFull)
	return e
}

// BatchAck is one entry of a BATCH_ACK_MESSAGE body (Java BatchAck): the
// messages of one pop on one queue, named by the pop's start offset and a
// bit per message past it, with the pop's time. Java writes the short
// JSON names and reads the long ones too; so does Decode.
type BatchAck struct {
	ConsumerGroup string
	Topic         string
	// Retry is the topic type, as a receipt handle's ("0" the topic,
	// "1" its retry topic, "2" its retry topic by Java's V2 name).
	Retry         string
	StartOffset   int64
	QueueID       int32
	ReviveQueueID int32
	PopTime       int64
	InvisibleTime int64
	// BitSet holds a bit per offset past StartOffset, Java's
	// BitSet.toByteArray (little-endian bytes), sent as base64.
	BitSet []byte
}

// Offsets are the queue offsets the entry acknowledges.
func (b *BatchAck) Offsets() []int64 {
	var out []int64
	for i, x := range b.BitSet {
		for bit := 0; bit < 8; bit++ {
			if x&(1<<bit) != 0 {
				out = append(out, b.StartOffset+int64(i*8+bit))
			}
		}
	}
	return out
}

// SetOffsets makes the bits say offsets, which must not be below
// StartOffset.
func (b *BatchAck) SetOffsets(offsets []int64) {
	b.BitSet = nil
	for _, off := range offsets {
		i := int(off - b.StartOffset)
		for len(b.BitSet) <= i/8 {
			b.BitSet = append(b.BitSet, 0)
		}
		b.BitSet[i/8] |= 1 << (i % 8)
	}
}

// BatchAckBody is the body of BATCH_ACK_MESSAGE (Java
// BatchAckMessageRequestBody).
type BatchAckBody struct {
	BrokerName string
	Acks       []BatchAck
}

// maxBatchAckBits bounds the offsets one entry's bits may name: a pop
// returns at most 32 messages, spread over at most a few thousand
// offsets (what its filter skipped).
const maxBatchAckBits = 1 << 16

// batchAckJSON is BatchAck's JSON, short names and long ones.
type batchAckJSON struct {
	C  *string `json:"c,omitempty"`
	T  *string `json:"t,omitempty"`
	R  *string `json:"r,omitempty"`
	SO *int64  `json:"so,omitempty"`
	Q  *int32  `json:"q,omitempty"`
	RQ *int32  `json:"rq,omitempty"`
	PT *int64  `json:"pt,omitempty"`
	IT *int64  `json:"it,omitempty"`
	B  *string `json:"b,omitempty"`

	ConsumerGroup *string `json:"consumerGroup,omitempty"`
	Topic         *string `json:"topic,omitempty"`
	Retry         *string `json:"retry,omitempty"`
	StartOffset   *int64  `json:"startOffset,omitempty"`
	QueueID       *int32  `json:"queueId,omitempty"`
	ReviveQueueID *int32  `json:"reviveQueueId,omitempty"`
	PopTime       *int64  `json:"popTime,omitempty"`
	InvisibleTime *int64  `json:"invisibleTime,omitempty"`
	BitSet        *string `json:"bitSet,omitempty"`
}

// DecodeBatchAckBody decodes a BATCH_ACK_MESSAGE body. It never panics;
// a body that is not Java's JSON, or whose bits name more offsets than a
// pop can have popped, is an error.
func DecodeBatchAckBody(b []byte) (BatchAckBody, error) {
	var raw struct {
		BrokerName string         `json:"brokerName"`
		Acks       []batchAckJSON `json:"acks"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return BatchAckBody{}, fmt.Errorf("protocol: BATCH_ACK_MESSAGE body: %w", err)
	}
	out := BatchAckBody{BrokerName: raw.BrokerName, Acks: make([]BatchAck, 0, len(raw.Acks))}
	for i, a := range raw.Acks {
		e := BatchAck{
			ConsumerGroup: pick(a.C, a.ConsumerGroup), Topic: pick(a.T, a.Topic), Retry: pick(a.R, a.Retry),
			StartOffset: pick(a.SO, a.StartOffset), QueueID: pick(a.Q, a.QueueID), ReviveQueueID: pick(a.RQ, a.ReviveQueueID),
			PopTime: pick(a.PT, a.PopTime), InvisibleTime: pick(a.IT, a.InvisibleTime),
		}
		if s := pick(a.B, a.BitSet); s != "" {
			bits, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return BatchAckBody{}, fmt.Errorf("protocol: BATCH_ACK_MESSAGE ack %d: bit set: %w", i, err)
			}
			if len(bits)*8 > maxBatchAckBits {
				return BatchAckBody{}, fmt.Errorf("protocol: BATCH_ACK_MESSAGE ack %d: a bit set of %d bytes", i, len(bits))
			}
			e.BitSet = bits
		}
		out.Acks = append(out.Acks, e)
	}
	return out, nil
}

// pick is the short-named field's value, else the long-named one's.
func pick[T any](short, long *T) T {
	switch {
	case short != nil:
		return *short
	case long != nil:
		return *long
	}
	var zero T
	return zero
}

// Encode encodes the body as Java's client does (short names).
func (b BatchAckBody) Encode() []byte {
	acks := make([]batchAckJSON, len(b.Acks))
	for i := range b.Acks {
		a := &b.Acks[i]
		bits := base64.StdEncoding.EncodeToString(a.BitSet)
		acks[i] = batchAckJSON{C: &a.ConsumerGroup, T: &a.Topic, R: &a.Retry, SO: &a.StartOffset, Q: &a.QueueID,
			RQ: &a.ReviveQueueID, PT: &a.PopTime, IT: &a.InvisibleTime, B: &bits}
	}
	out, _ := json.Marshal(struct {
		BrokerName string         `json:"brokerName,omitempty"`
		Acks       []batchAckJSON `json:"acks"`
	}{b.BrokerName, acks}) // strings and numbers always encode
	return out
}
