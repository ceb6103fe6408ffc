package protocol

import "slices"

// Pull request sysFlag bits (RocketMQ PullSysFlag).
const (
	PullFlagCommitOffset int32 = 1 << 0 // commitOffset carries an offset to store
	PullFlagSuspend      int32 = 1 << 1 // the broker may hold the request (long polling)
	PullFlagSubscription int32 = 1 << 2 // subscription/expressionType carry the filter
	PullFlagClassFilter  int32 = 1 << 3 // class filter mode (obsolete)
	PullFlagLitePull     int32 = 1 << 4 // Java lite pull consumer (LITE_PULL_MESSAGE)
)

// BuildPullSysFlag combines the pull flag bits.
func BuildPullSysFlag(commitOffset, suspend, subscription, classFilter bool) int32 {
	var f int32
	if commitOffset {
		f |= PullFlagCommitOffset
	}
	if suspend {
		f |= PullFlagSuspend
	}
	if subscription {
		f |= PullFlagSubscription
	}
	if classFilter {
		f |= PullFlagClassFilter
	}
	return f
}

// PullHasCommitOffset reports the COMMIT_OFFSET bit.
func PullHasCommitOffset(sysFlag int32) bool { return sysFlag&PullFlagCommitOffset != 0 }

// PullHasSuspend reports the SUSPEND bit.
func PullHasSuspend(sysFlag int32) bool { return sysFlag&PullFlagSuspend != 0 }

// PullHasSubscription reports the SUBSCRIPTION bit.
func PullHasSubscription(sysFlag int32) bool { return sysFlag&PullFlagSubscription != 0 }

// PullHasClassFilter reports the CLASS_FILTER bit.
func PullHasClassFilter(sysFlag int32) bool { return sysFlag&PullFlagClassFilter != 0 }

// PullClearCommitOffset returns sysFlag without the COMMIT_OFFSET bit (the
// client clears it when pulling from a slave).
func PullClearCommitOffset(sysFlag int32) int32 { return sysFlag &^ PullFlagCommitOffset }

// PullMessageRequestHeader is the ext of PULL_MESSAGE (11) and
// LITE_PULL_MESSAGE (361).
type PullMessageRequestHeader struct {
	ConsumerGroup        string // consumerGroup
	Topic                string // topic
	QueueID              int32  // queueId
	QueueOffset          int64  // queueOffset: first offset wanted
	MaxMsgNums           int32  // maxMsgNums: ≤ 0 still means at least one message
	SysFlag              int32  // sysFlag: PullFlag* bits
	CommitOffset         int64  // commitOffset: meaningful with PullFlagCommitOffset
	SuspendTimeoutMillis int64  // suspendTimeoutMillis: long-poll hold, ms
	Subscription         string // subscription: expression, with PullFlagSubscription (optional)
	SubVersion           int64  // subVersion
	ExpressionType       string // expressionType: TAG or SQL92; empty means TAG (optional)
	MaxMsgBytes          int32  // maxMsgBytes (RocketMQ 5; optional, 0 = unset)
	BrokerName           string // bname (optional)
}

// Decode reads the header; the fields Java marks @CFNotNull are required.
func (h *PullMessageRequestHeader) Decode(ext map[string]string) error {
	return h.decode(newExtDecoder("PULL_MESSAGE", ext))
}

// DecodeCommand is Decode of req's ext fields, read without decoding them
// into a map when they are undecoded.
func (h *PullMessageRequestHeader) DecodeCommand(req *Command) error {
	var d extDecoder
	d.fromCommand("PULL_MESSAGE", req)
	return h.decode(&d)
}

func (h *PullMessageRequestHeader) decode(d *extDecoder) error {
	*h = PullMessageRequestHeader{
		ConsumerGroup:        d.str("consumerGroup", true),
		Topic:                d.str("topic", true),
		QueueID:              d.int32("queueId", true, 0),
		QueueOffset:          d.int64("queueOffset", true, 0),
		MaxMsgNums:           d.int32("maxMsgNums", true, 0),
		SysFlag:              d.int32("sysFlag", true, 0),
		CommitOffset:         d.int64("commitOffset", true, 0),
		SuspendTimeoutMillis: d.int64("suspendTimeoutMillis", true, 0),
		Subscription:         d.str("subscription", false),
		SubVersion:           d.int64("subVersion", true, 0),
		ExpressionType:       d.str("expressionType", false),
		MaxMsgBytes:          d.int32("maxMsgBytes", false, 0),
		BrokerName:           d.str("bname", false),
	}
	return d.err
}

// Encode returns the header as extFields, as the official client sends it
// (Append's fields).
func (h PullMessageRequestHeader) Encode() map[string]string {
	return fieldMap(h.Append(nil))
}

// pullFields is the most fields Append adds.
const pullFields = 13

// Append appends the header's fields to dst in key order: a sender puts
// them in Command.MoreExt and leaves ExtFields nil, so a pull builds no
// map (a consumer keeping up sends about one pull per message), and a
// signer and the peer's verifier find them sorted. The keys and values are
// Encode's.
func (h PullMessageRequestHeader) Append(dst []Field) []Field {
	e := fieldList{slices.Grow(dst, pullFields)}
	e.optStr("bname", h.BrokerName)
	e.int64("commitOffset", h.CommitOffset)
	e.str("consumerGroup", h.ConsumerGroup)
	e.str("expressionType", h.ExpressionType)
	if h.MaxMsgBytes != 0 {
		e.int32("maxMsgBytes", h.MaxMsgBytes)
	}
	e.int32("maxMsgNums", h.MaxMsgNums)
	e.int32("queueId", h.QueueID)
	e.int64("queueOffset", h.QueueOffset)
	e.int64("subVersion", h.SubVersion)
	e.str("subscription", h.Subscription)
	e.int64("suspendTimeoutMillis", h.SuspendTimeoutMillis)
	e.int32("sysFlag", h.SysFlag)
	e.str("topic", h.Topic)
	return e.fs
}

// PullMessageResponseHeader is the ext of a pull response. The official
// client reads exactly these four keys; a missing one counts as 0.
type PullMessageResponseHeader struct {
	SuggestWhichBrokerID int64 // suggestWhichBrokerId: 0 = master
	NextBeginOffset      int64 // nextBeginOffset
	MinOffset            int64 // minOffset
	MaxOffset            int64 // maxOffset
}

// Decode reads the header; all four fields are required, as in Java.
func (h *PullMessageResponseHeader) Decode(ext map[string]string) error {
	return h.decode(newExtDecoder("PULL_MESSAGE response", ext))
}

// DecodeCommand is Decode of resp's ext fields, read without decoding them
// into a map when they are undecoded (an answer read raw,
// remoting.CallOptions.RawAnswer).
func (h *PullMessageResponseHeader) DecodeCommand(resp *Command) error {
	var d extDecoder
	d.fromCommand("PULL_MESSAGE response", resp)
	return h.decode(&d)
}

func (h *PullMessageResponseHeader) decode(d *extDecoder) error {
	*h = PullMessageResponseHeader{
		SuggestWhichBrokerID: d.int64("suggestWhichBrokerId", true, 0),
		NextBeginOffset:      d.int64("nextBeginOffset", true, 0),
		MinOffset:            d.int64("minOffset", true, 0),
		MaxOffset:            d.int64("maxOffset", true, 0),
	}
	return d.err
}

// Encode returns the header as extFields.
func (h PullMessageResponseHeader) Encode() map[string]string {
	return fieldMap(h.Append(nil))
}

// Append appends Encode's fields to dst: a broker answering a pull puts
// them in Command.MoreExt, so a pull's answer builds no map.
func (h PullMessageResponseHeader) Append(dst []Field) []Field {
	e := fieldList{slices.Grow(dst, 4)}
	e.int64("suggestWhichBrokerId", h.SuggestWhichBrokerID)
	e.int64("nextBeginOffset", h.NextBeginOffset)
	e.int64("minOffset", h.MinOffset)
	e.int64("maxOffset", h.MaxOffset)
	return e.fs
}
