package protocol

import (
	"slices"

	"github.com/runnelmq/runnel/topicconf"
)

// DefaultTopicKey is the template topic new topics are auto-created from
// (RocketMQ TopicValidator.AUTO_CREATE_TOPIC_KEY_TOPIC).
const DefaultTopicKey = topicconf.DefaultTopic

// SendMessageRequestHeader is the ext of SEND_MESSAGE (10) and
// SEND_REPLY_MESSAGE (324) with long keys, and of SEND_MESSAGE_V2 (310),
// SEND_BATCH_MESSAGE (320) and SEND_REPLY_MESSAGE_V2 (325) with the short
// keys a..n. Use DecodeSendMessageHeader to pick the form by request code.
type SendMessageRequestHeader struct {
	ProducerGroup         string // producerGroup / a
	Topic                 string // topic / b
	DefaultTopic          string // defaultTopic / c
	DefaultTopicQueueNums int32  // defaultTopicQueueNums / d
	QueueID               int32  // queueId / e
	SysFlag               int32  // sysFlag / f (message sysFlag bits)
	BornTimestamp         int64  // bornTimestamp / g, epoch ms
	Flag                  int32  // flag / h, the user flag
	Properties            string // properties / i, the property string
	ReconsumeTimes        int32  // reconsumeTimes / j
	UnitMode              bool   // unitMode / k
	MaxReconsumeTimes     int32  // maxReconsumeTimes / l (Java: consumeRetryTimes); -1 = absent: a struct literal must set it, 0 is a real maximum
	Batch                 bool   // batch / m
	BrokerName            string // bname / n (RocketMQ 5 static topics; optional)
}

// sendV2Keys maps each field to its V2 short key; the comments above give
// the same table.
var sendV2Keys = struct {
	producerGroup, topic, defaultTopic, defaultTopicQueueNums, queueID, sysFlag, bornTimestamp,
	flag, properties, reconsumeTimes, unitMode, maxReconsumeTimes, batch, brokerName string
}{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n"}

// sendV2Fields is the number of fields of sendV2Keys.
const sendV2Fields = 14

// IsSendV2Code reports whether a send request with this code carries the
// short-key (V2) header, as Java's SendMessageRequestHeader.parseRequestHeader decides.
func IsSendV2Code(code int16) bool {
	return code == ReqSendMessageV2 || code == ReqSendBatchMessage || code == ReqSendReplyMessageV2
}

// DecodeSendMessageHeader decodes a send header in the form the request code
// implies: short keys for SEND_MESSAGE_V2, SEND_BATCH_MESSAGE and
// SEND_REPLY_MESSAGE_V2, long keys otherwise. A V2 code whose ext has the
// long keys instead (no "b" but a "topic") is read as long keys, so a
// confused peer still gets a precise answer.
func DecodeSendMessageHeader(code int16, ext map[string]string) (SendMessageRequestHeader, error) {
	var h SendMessageRequestHeader
	d := newExtDecoder(RequestCodeName(code), ext)
	return h, h.decode(code, d)
}

// DecodeSendMessageCommand is DecodeSendMessageHeader of req's code and ext
// fields, read without decoding them into a map when they are undecoded.
func DecodeSendMessageCommand(req *Command) (SendMessageRequestHeader, error) {
	return DecodeSendMessageCommandWith(req, nil)
}

// DecodeSendMessageCommandWith is DecodeSendMessageCommand making the
// strings of undecoded values with strs (nil: a string each), which a run
// of sends shares.
func DecodeSendMessageCommandWith(req *Command, strs *Strings) (SendMessageRequestHeader, error) {
	var (
		h SendMessageRequestHeader
		d extDecoder
	)
	d.fromCommand(RequestCodeName(req.Code), req)
	d.strs = strs
	return h, h.decode(req.Code, &d)
}

func (h *SendMessageRequestHeader) decode(code int16, d *extDecoder) error {
	if IsSendV2Code(code) && (d.has(sendV2Keys.topic) || !d.has("topic")) {
		return h.decodeV2(d)
	}
	return h.decodeV1(d)
}

// Decode reads the long-key (V1) form.
func (h *SendMessageRequestHeader) Decode(ext map[string]string) error {
	return h.decodeV1(newExtDecoder("SEND_MESSAGE", ext))
}

// DecodeV2 reads the short-key (V2) form.
func (h *SendMessageRequestHeader) DecodeV2(ext map[string]string) error {
	return h.decodeV2(newExtDecoder("SEND_MESSAGE_V2", ext))
}

func (h *SendMessageRequestHeader) decodeV1(d *extDecoder) error {
	*h = SendMessageRequestHeader{
		ProducerGroup:         d.repeated("producerGroup", true),
		Topic:                 d.repeated("topic", true),
		DefaultTopic:          d.repeated("defaultTopic", true),
		DefaultTopicQueueNums: d.int32("defaultTopicQueueNums", true, 0),
		QueueID:               d.int32("queueId", true, 0),
		SysFlag:               d.int32("sysFlag", true, 0),
		BornTimestamp:         d.int64("bornTimestamp", true, 0),
		Flag:                  d.int32("flag", true, 0),
		Properties:            d.str("properties", false),
		ReconsumeTimes:        d.int32("reconsumeTimes", false, 0),
		UnitMode:              d.bool("unitMode", false),
		MaxReconsumeTimes:     d.int32("maxReconsumeTimes", false, -1),
		Batch:                 d.bool("batch", false),
		BrokerName:            d.repeated("bname", false),
	}
	return d.err
}

func (h *SendMessageRequestHeader) decodeV2(d *extDecoder) error {
	k := sendV2Keys
	*h = SendMessageRequestHeader{
		ProducerGroup:         d.repeated(k.producerGroup, true),
		Topic:                 d.repeated(k.topic, true),
		DefaultTopic:          d.repeated(k.defaultTopic, true),
		DefaultTopicQueueNums: d.int32(k.defaultTopicQueueNums, true, 0),
		QueueID:               d.int32(k.queueID, true, 0),
		SysFlag:               d.int32(k.sysFlag, true, 0),
		BornTimestamp:         d.int64(k.bornTimestamp, true, 0),
		Flag:                  d.int32(k.flag, true, 0),
		Properties:            d.str(k.properties, false),
		ReconsumeTimes:        d.int32(k.reconsumeTimes, false, 0),
		UnitMode:              d.bool(k.unitMode, false),
		MaxReconsumeTimes:     d.int32(k.maxReconsumeTimes, false, -1),
		Batch:                 d.bool(k.batch, false),
		BrokerName:            d.repeated(k.brokerName, false),
	}
	if he, ok := d.err.(*HeaderError); ok {
		he.Field += " (" + v2LongName[he.Field] + ")"
	}
	return d.err
}

var v2LongName = map[string]string{
	"a": "producerGroup", "b": "topic", "c": "defaultTopic", "d": "defaultTopicQueueNums",
	"e": "queueId", "f": "sysFlag", "g": "bornTimestamp", "h": "flag", "i": "properties",
	"j": "reconsumeTimes", "k": "unitMode", "l": "maxReconsumeTimes", "m": "batch", "n": "bname",
}

// Encode returns the long-key (V1) form, as the official Go client sends it
// for SEND_MESSAGE.
func (h SendMessageRequestHeader) Encode() map[string]string {
	e := make(extEncoder, 16)
	e.str("producerGroup", h.ProducerGroup)
	e.str("topic", h.Topic)
	e.str("defaultTopic", h.DefaultTopic)
	e.int32("defaultTopicQueueNums", h.DefaultTopicQueueNums)
	e.int32("queueId", h.QueueID)
	e.int32("sysFlag", h.SysFlag)
	e.int64("bornTimestamp", h.BornTimestamp)
	e.int32("flag", h.Flag)
	e.str("properties", h.Properties)
	e.int32("reconsumeTimes", h.ReconsumeTimes)
	e.bool("unitMode", h.UnitMode)
	if h.MaxReconsumeTimes != -1 {
		e.int32("maxReconsumeTimes", h.MaxReconsumeTimes)
	}
	e.bool("batch", h.Batch)
	e.optStr("bname", h.BrokerName)
	return e
}

// EncodeV2 returns the short-key form used by SEND_MESSAGE_V2 and
// SEND_BATCH_MESSAGE, as a map (AppendV2's fields).
func (h SendMessageRequestHeader) EncodeV2() map[string]string {
	return fieldMap(h.AppendV2(nil))
}

// AppendV2 appends the short-key form's fields to dst in key order: a
// sender puts them in Command.MoreExt and leaves ExtFields nil, so a send
// builds no map, and a signer (ACL sorts the fields by key) and the
// peer's verifier find them sorted.
func (h SendMessageRequestHeader) AppendV2(dst []Field) []Field {
	k := sendV2Keys
	e := fieldList{slices.Grow(dst, sendV2Fields)}
	e.str(k.producerGroup, h.ProducerGroup)
	e.str(k.topic, h.Topic)
	e.str(k.defaultTopic, h.DefaultTopic)
	e.int32(k.defaultTopicQueueNums, h.DefaultTopicQueueNums)
	e.int32(k.queueID, h.QueueID)
	e.int32(k.sysFlag, h.SysFlag)
	e.int64(k.bornTimestamp, h.BornTimestamp)
	e.int32(k.flag, h.Flag)
	e.str(k.properties, h.Properties)
	e.int32(k.reconsumeTimes, h.ReconsumeTimes)
	e.bool(k.unitMode, h.UnitMode)
	if h.MaxReconsumeTimes != -1 {
		e.int32(k.maxReconsumeTimes, h.MaxReconsumeTimes)
	}
	e.bool(k.batch, h.Batch)
	e.optStr(k.brokerName, h.BrokerName)
	return e.fs
}

// SendMessageResponseHeader is the ext of a send response. The official
// client reads msgId (the offsetMsgId), queueId, queueOffset, transactionId,
// MSG_REGION and TRACE_ON.
type SendMessageResponseHeader struct {
	MsgID         string // msgId: offsetMsgId; comma-joined for a batch
	QueueID       int32  // queueId
	QueueOffset   int64  // queueOffset: of the first message for a batch
	TransactionID string // transactionId: Java sets the UNIQ_KEY
	BatchUniqID   string // batchUniqId (RocketMQ 5; optional)
	MsgRegion     string // MSG_REGION (optional; the client defaults it to DefaultRegion)
	TraceOn       string // TRACE_ON: "true"/"false" (optional)
	RecallHandle  string // recallHandle: a timer message's, for RECALL_MESSAGE (RocketMQ 5.3; optional)
}

// Decode reads the header; msgId, queueId and queueOffset are required.
func (h *SendMessageResponseHeader) Decode(ext map[string]string) error {
	return h.decode(newExtDecoder("SEND_MESSAGE response", ext))
}

// DecodeCommand is Decode of resp's ext fields, read without decoding them
// into a map when they are undecoded (an answer read raw,
// remoting.CallOptions.RawAnswer).
func (h *SendMessageResponseHeader) DecodeCommand(resp *Command) error {
	var d extDecoder
	d.fromCommand("SEND_MESSAGE response", resp)
	return h.decode(&d)
}

func (h *SendMessageResponseHeader) decode(d *extDecoder) error {
	*h = SendMessageResponseHeader{
		MsgID:         d.str("msgId", true),
		QueueID:       d.int32("queueId", true, 0),
		QueueOffset:   d.int64("queueOffset", true, 0),
		TransactionID: d.str("transactionId", false),
		BatchUniqID:   d.str("batchUniqId", false),
		MsgRegion:     d.str("MSG_REGION", false),
		TraceOn:       d.str("TRACE_ON", false),
		RecallHandle:  d.str("recallHandle", false),
	}
	return d.err
}

// Encode returns the header as extFields.
func (h SendMessageResponseHeader) Encode() map[string]string {
	return fieldMap(h.Append(nil))
}

// SendResponseFields is the most fields SendMessageResponseHeader.Append
// adds: room for them lets a caller append without a reallocation.
const SendResponseFields = 8

// Append appends Encode's fields to dst: a broker answering a send puts
// them in Command.MoreExt, so a send's answer builds no map.
func (h SendMessageResponseHeader) Append(dst []Field) []Field {
	e := fieldList{slices.Grow(dst, SendResponseFields)}
	e.str("msgId", h.MsgID)
	e.int32("queueId", h.QueueID)
	e.int64("queueOffset", h.QueueOffset)
	e.optStr("transactionId", h.TransactionID)
	e.optStr("batchUniqId", h.BatchUniqID)
	e.optStr("MSG_REGION", h.MsgRegion)
	e.optStr("TRACE_ON", h.TraceOn)
	e.optStr("recallHandle", h.RecallHandle)
	return e.fs
}
