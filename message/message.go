package message

import (
	"net/netip"
	"slices"
	"strings"
)

// Property names, as RocketMQ's MessageConst spells them.
const (
	PropertyKeys                    = "KEYS"
	PropertyTags                    = "TAGS"
	PropertyWaitStoreMsgOK          = "WAIT"
	PropertyDelayTimeLevel          = "DELAY"
	PropertyRetryTopic              = "RETRY_TOPIC"
	PropertyRealTopic               = "REAL_TOPIC"
	PropertyRealQueueID             = "REAL_QID"
	PropertyTransactionPrepared     = "TRAN_MSG"
	PropertyProducerGroup           = "PGROUP"
	PropertyMinOffset               = "MIN_OFFSET"
	PropertyMaxOffset               = "MAX_OFFSET"
	PropertyBuyerID                 = "BUYER_ID"
	PropertyOriginMessageID         = "ORIGIN_MESSAGE_ID"
	PropertyTransferFlag            = "TRANSFER_FLAG"
	PropertyCorrectionFlag          = "CORRECTION_FLAG"
	PropertyMQ2Flag                 = "MQ2_FLAG"
	PropertyReconsumeTime           = "RECONSUME_TIME"
	PropertyMsgRegion               = "MSG_REGION"
	PropertyTraceSwitch             = "TRACE_ON"
	PropertyUniqClientMessageIDKey  = "UNIQ_KEY"
	PropertyMaxReconsumeTimes       = "MAX_RECONSUME_TIMES"
	PropertyConsumeStartTimestamp   = "CONSUME_START_TIME"
	PropertyTranPreparedQueueOffset = "TRAN_PREPARED_QUEUE_OFFSET"
	PropertyTransactionCheckTimes   = "TRANSACTION_CHECK_TIMES"
	PropertyCheckImmunityTimeInSecs = "CHECK_IMMUNITY_TIME_IN_SECONDS"
	PropertyInstanceID              = "INSTANCE_ID"
	PropertyCorrelationID           = "CORRELATION_ID"
	PropertyMessageReplyToClient    = "REPLY_TO_CLIENT"
	PropertyMessageTTL              = "TTL"
	PropertyReplyMessageArriveTime  = "ARRIVE_TIME"
	PropertyPushReplyTime           = "PUSH_REPLY_TIME"
	PropertyCluster                 = "CLUSTER"
	PropertyMessageType             = "MSG_TYPE"
	PropertyShardingKey             = "SHARDING_KEY"
	PropertyTimerDeliverMS          = "TIMER_DELIVER_MS"
	PropertyTimerDelaySec           = "TIMER_DELAY_SEC"
	PropertyTransactionID           = "__transactionId__"
	// PropertyPopCK carries a popped message's receipt handle (POP_CK);
	// PropertyFirstPopTime when it was first popped (1ST_POP_TIME).
	PropertyPopCK        = "POP_CK"
	PropertyFirstPopTime = "1ST_POP_TIME"

	// KeySeparator separates several keys inside the KEYS property.
	KeySeparator = " "
)

// Message sysFlag bits (RocketMQ MessageSysFlag).
const (
	SysFlagCompressed      int32 = 0x1
	SysFlagMultiTags       int32 = 0x2
	SysFlagTransactionMask int32 = 0xC
	SysFlagTransactionNot  int32 = 0x0
	SysFlagTransactionPrep int32 = 0x4
	SysFlagTransactionComm int32 = 0x8
	SysFlagTransactionRoll int32 = 0xC
	SysFlagBornHostV6      int32 = 0x10
	SysFlagStoreHostV6     int32 = 0x20
	SysFlagNeedUnwrap      int32 = 0x40
	SysFlagInnerBatch      int32 = 0x80
	SysFlagCompressionMask int32 = 0x700
	SysFlagCompressionLZ4  int32 = 0x100
	SysFlagCompressionZSTD int32 = 0x200
	SysFlagCompressionZLIB int32 = 0x300
	sysFlagHostFamilyBits        = SysFlagBornHostV6 | SysFlagStoreHostV6
)

// Message is what a producer sends: a topic, a user flag, properties and a
// body. Properties may be nil.
type Message struct {
	Topic      string
	Flag       int32
	Properties map[string]string
	Body       []byte
}

// Property returns the named property, or "" if it is not set.
func (m *Message) Property(name string) string { return m.Properties[name] }

// SetProperty sets a property, allocating the map if needed.
func (m *Message) SetProperty(name, value string) {
	if m.Properties == nil {
		m.Properties = make(map[string]string)
	}
	m.Properties[name] = value
}

// Tags returns the TAGS property.
func (m *Message) Tags() string { return m.Properties[PropertyTags] }

// Keys returns the KEYS property split on spaces, without empty entries.
func (m *Message) Keys() []string {
	return strings.Fields(m.Properties[PropertyKeys])
}

// UniqKey returns the client message id (UNIQ_KEY), or "".
func (m *Message) UniqKey() string { return m.Properties[PropertyUniqClientMessageIDKey] }

// MessageExt is a message as stored by the broker and delivered by a pull.
type MessageExt struct {
	Message
	QueueID                   int32
	StoreSize                 int32
	QueueOffset               int64
	SysFlag                   int32
	BornTimestamp             int64
	BornHost                  netip.AddrPort
	StoreTimestamp            int64
	StoreHost                 netip.AddrPort
	CommitLogOffset           int64
	BodyCRC                   int32
	ReconsumeTimes            int32
	PreparedTransactionOffset int64

	// MsgID is UNIQ_KEY when present, else OffsetMsgID, as the official
	// clients present it. Filled by the decoder; ignored by the encoder.
	MsgID string
	// OffsetMsgID encodes StoreHost and CommitLogOffset. Filled by the
	// decoder; ignored by the encoder.
	OffsetMsgID string
}

// Property separators (MessageDecoder.NAME_VALUE_SEPARATOR, PROPERTY_SEPARATOR).
const (
	NameValueSeparator = '\x01'
	PropertySeparator  = '\x02'
)

// MarshalProperties encodes properties as name\x01value\x02 pairs, with the
// trailing separator RocketMQ writes. Names are sorted so that equal maps
// encode to equal bytes (the store relies on this for determinism).
// Names or values containing \x01 or \x02 cannot round-trip; the encoder does
// not reject them because Java does not either.
func MarshalProperties(props map[string]string) string {
	if len(props) == 0 {
		return ""
	}
	return string(AppendProperties(make([]byte, 0, PropertiesLen(props)), props))
}

// AppendProperties appends MarshalProperties(props) to dst.
func AppendProperties(dst []byte, props map[string]string) []byte {
	if len(props) == 0 {
		return dst
	}
	var small [8]Property // most messages have a handful of properties
	return AppendSortedProperties(dst, SortProperties(small[:0], props))
}

// Property is one name/value pair of a message's properties.
type Property struct{ Name, Value string }

// SortProperties appends props to dst in name order, the order every
// encoder writes them. An encoder given the sorted pairs (StoredSizeOf,
// AppendStoredMessageOf) does not walk the map again.
func SortProperties(dst []Property, props map[string]string) []Property {
	n := len(dst)
	for k, v := range props {
		dst = append(dst, Property{k, v})
	}
	slices.SortFunc(dst[n:], func(a, b Property) int { return strings.Compare(a.Name, b.Name) })
	return dst
}

// PropertyOf returns the value of name among sorted pairs, or "".
func PropertyOf(props []Property, name string) string {
	for _, p := range props { // a handful: a scan beats a search
		if p.Name == name {
			return p.Value
		}
	}
	return ""
}

// AppendSortedProperties appends the wire form of props, pairs already in
// name order (SortProperties), to dst: what AppendProperties appends for
// their map.
func AppendSortedProperties(dst []byte, props []Property) []byte {
	for _, p := range props {
		dst = append(dst, p.Name...)
		dst = append(dst, NameValueSeparator)
		dst = append(dst, p.Value...)
		dst = append(dst, PropertySeparator)
	}
	return dst
}

// PropertiesLen is len(MarshalProperties(props)).
func PropertiesLen(props map[string]string) int {
	n := 0
	for k, v := range props {
		n += len(k) + len(v) + 2
	}
	return n
}

func sortedPropertiesLen(props []Property) int {
	n := 0
	for _, p := range props {
		n += len(p.Name) + len(p.Value) + 2
	}
	return n
}

// UnmarshalProperties parses a property string the way the official clients
// do: split on \x02, then on \x01, keeping entries with exactly a name and a
// value. It never fails; malformed entries are skipped.
func UnmarshalProperties(s string) map[string]string {
	props := make(map[string]string)
	for len(s) > 0 {
		var item string
		if i := strings.IndexByte(s, PropertySeparator); i >= 0 {
			item, s = s[:i], s[i+1:]
		} else {
			item, s = s, ""
		}
		i := strings.IndexByte(item, NameValueSeparator)
		if i < 0 || strings.IndexByte(item[i+1:], NameValueSeparator) >= 0 {
			continue
		}
		props[item[:i]] = item[i+1:]
	}
	return props
}
