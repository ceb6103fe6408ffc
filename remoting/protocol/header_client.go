package protocol

import "encoding/json"

// Headers of consumer and producer bookkeeping requests, in both directions.

// ConsumerSendMsgBackRequestHeader is the ext of CONSUMER_SEND_MSG_BACK (36).
type ConsumerSendMsgBackRequestHeader struct {
	Offset            int64  // offset: commit log offset of the original message
	Group             string // group: consumer group
	DelayLevel        int32  // delayLevel: 0 = broker picks 3+reconsumeTimes; <0 = straight to DLQ
	OriginMsgID       string // originMsgId (optional)
	OriginTopic       string // originTopic (optional)
	UnitMode          bool   // unitMode (optional)
	MaxReconsumeTimes int32  // maxReconsumeTimes; -1 when absent (the group's own limit applies)
	BrokerName        string // bname (optional)
}

// Decode reads the header; offset, group and delayLevel are required.
func (h *ConsumerSendMsgBackRequestHeader) Decode(ext map[string]string) error {
	d := newExtDecoder("CONSUMER_SEND_MSG_BACK", ext)
	*h = ConsumerSendMsgBackRequestHeader{
		Offset:            d.int64("offset", true, 0),
		Group:             d.str("group", true),
		DelayLevel:        d.int32("delayLevel", true, 0),
		OriginMsgID:       d.str("originMsgId", false),
		OriginTopic:       d.str("originTopic", false),
		UnitMode:          d.bool("unitMode", false),
		MaxReconsumeTimes: d.int32("maxReconsumeTimes", false, -1),
		BrokerName:        d.str("bname", false),
	}
	return d.err
}

// Encode returns the header as extFields. maxReconsumeTimes is omitted when
// it is -1.
func (h ConsumerSendMsgBackRequestHeader) Encode() map[string]string {
	e := make(extEncoder, 8)
	e.int64("offset", h.Offset)
	e.str("group", h.Group)
	e.int32("delayLevel", h.DelayLevel)
	e.optStr("originMsgId", h.OriginMsgID)
	e.optStr("originTopic", h.OriginTopic)
	e.bool("unitMode", h.UnitMode)
	if h.MaxReconsumeTimes != -1 {
		e.int32("maxReconsumeTimes", h.MaxReconsumeTimes)
	}
	e.optStr("bname", h.BrokerName)
	return e
}

// GetConsumerListByGroupRequestHeader is the ext of GET_CONSUMER_LIST_BY_GROUP (38).
type GetConsumerListByGroupRequestHeader struct {
	ConsumerGroup string // consumerGroup
}

// Decode reads the header; consumerGroup is required.
func (h *GetConsumerListByGroupRequestHeader) Decode(ext map[string]string) error {
	d := newExtDecoder("GET_CONSUMER_LIST_BY_GROUP", ext)
	h.ConsumerGroup = d.str("consumerGroup", true)
	return d.err
}

// Encode returns the header as extFields.
func (h GetConsumerListByGroupRequestHeader) Encode() map[string]string {
	return map[string]string{"consumerGroup": h.ConsumerGroup}
}

// GetConsumerListByGroupResponseBody is the body of a
// GET_CONSUMER_LIST_BY_GROUP response. The official client reads it with
// gjson and ignores the response code.
type GetConsumerListByGroupResponseBody struct {
	ConsumerIDList []string `json:"consumerIdList"`
}

// Encode returns the body as JSON; an empty list is [] rather than null.
func (b GetConsumerListByGroupResponseBody) Encode() []byte {
	if b.ConsumerIDList == nil {
		b.ConsumerIDList = []string{}
	}
	out, _ := json.Marshal(b) // cannot fail for []string
	return out
}

// Decode parses the body.
func (b *GetConsumerListByGroupResponseBody) Decode(body []byte) error {
	return decodeBody("GET_CONSUMER_LIST_BY_GROUP", body, b)
}

// UnregisterClientRequestHeader is the ext of UNREGISTER_CLIENT (35), sent by
// Java clients on shutdown (never by the Go client).
type UnregisterClientRequestHeader struct {
	ClientID      string // clientID
	ProducerGroup string // producerGroup (optional)
	ConsumerGroup string // consumerGroup (optional)
}

// Decode reads the header; clientID is required.
func (h *UnregisterClientRequestHeader) Decode(ext map[string]string) error {
	d := newExtDecoder("UNREGISTER_CLIENT", ext)
	*h = UnregisterClientRequestHeader{
		ClientID:      d.str("clientID", true),
		ProducerGroup: d.str("producerGroup", false),
		ConsumerGroup: d.str("consumerGroup", false),
	}
	return d.err
}

// Encode returns the header as extFields.
func (h UnregisterClientRequestHeader) Encode() map[string]string {
	e := make(extEncoder, 3)
	e.str("clientID", h.ClientID)
	e.optStr("producerGroup", h.ProducerGroup)
	e.optStr("consumerGroup", h.ConsumerGroup)
	return e
}

// Transaction states of END_TRANSACTION's commitOrRollback, equal to the
// message sysFlag transaction bits (RocketMQ MessageSysFlag).
const (
	TransactionNotType  int32 = 0
	TransactionPrepared int32 = 4
	TransactionCommit   int32 = 8
	TransactionRollback int32 = 12
)

// EndTransactionRequestHeader is the ext of END_TRANSACTION (37).
type EndTransactionRequestHeader struct {
	ProducerGroup        string // producerGroup
	TranStateTableOffset int64  // tranStateTableOffset: the half message's queue offset
	CommitLogOffset      int64  // commitLogOffset: the half message's physical offset
	CommitOrRollback     int32  // commitOrRollback: Transaction* state
	FromTransactionCheck bool   // fromTransactionCheck (optional)
	MsgID                string // msgId: the UNIQ_KEY
	TransactionID        string // transactionId (optional)
	BrokerName           string // bname (optional)
}

// Decode reads the header; the fields Java marks @CFNotNull are required.
func (h *EndTransactionRequestHeader) Decode(ext map[string]string) error {
	d := newExtDecoder("END_TRANSACTION", ext)
	*h = EndTransactionRequestHeader{
		ProducerGroup:        d.str("producerGroup", true),
		TranStateTableOffset: d.int64("tranStateTableOffset", true, 0),
		CommitLogOffset:      d.int64("commitLogOffset", true, 0),
		CommitOrRollback:     d.int32("commitOrRollback", true, 0),
		FromTransactionCheck: d.bool("fromTransactionCheck", false),
		MsgID:                d.str("msgId", true),
		TransactionID:        d.str("transactionId", false),
		BrokerName:           d.str("bname", false),
	}
	return d.err
}

// Encode returns the header as extFields.
func (h EndTransactionRequestHeader) Encode() map[string]string {
	e := make(extEncoder, 8)
	e.str("producerGroup", h.ProducerGroup)
	e.int64("tranStateTableOffset", h.TranStateTableOffset)
	e.int64("commitLogOffset", h.CommitLogOffset)
	e.int32("commitOrRollback", h.CommitOrRollback)
	e.bool("fromTransactionCheck", h.FromTransactionCheck)
	e.str("msgId", h.MsgID)
	e.optStr("transactionId", h.TransactionID)
	e.optStr("bname", h.BrokerName)
	return e
}

// CheckTransactionStateRequestHeader is the ext of CHECK_TRANSACTION_STATE
// (39), broker to producer; the body is the half message.
type CheckTransactionStateRequestHeader struct {
	TranStateTableOffset int64  // tranStateTableOffset
	CommitLogOffset      int64  // commitLogOffset
	MsgID                string // msgId (optional)
	TransactionID        string // transactionId (optional)
	OffsetMsgID          string // offsetMsgId (optional)
}

// Decode reads the header; the two offsets are required.
func (h *CheckTransactionStateRequestHeader) Decode(ext map[string]string) error {
	d := newExtDecoder("CHECK_TRANSACTION_STATE", ext)
	*h = CheckTransactionStateRequestHeader{
		TranStateTableOffset: d.int64("tranStateTableOffset", true, 0),
		CommitLogOffset:      d.int64("commitLogOffset", true, 0),
		MsgID:                d.str("msgId", false),
		TransactionID:        d.str("transactionId", false),
		OffsetMsgID:          d.str("offsetMsgId", false),
	}
	return d.err
}

// Encode returns the header as extFields.
func (h CheckTransactionStateRequestHeader) Encode() map[string]string {
	e := make(extEncoder, 5)
	e.int64("tranStateTableOffset", h.TranStateTableOffset)
	e.int64("commitLogOffset", h.CommitLogOffset)
	e.optStr("msgId", h.MsgID)
	e.optStr("transactionId", h.TransactionID)
	e.optStr("offsetMsgId", h.OffsetMsgID)
	return e
}

// NotifyConsumerIDsChangedRequestHeader is the ext of
// NOTIFY_CONSUMER_IDS_CHANGED (40), broker to consumer, oneway.
type NotifyConsumerIDsChangedRequestHeader struct {
	ConsumerGroup string // consumerGroup
}

// Decode reads the header; consumerGroup is required.
func (h *NotifyConsumerIDsChangedRequestHeader) Decode(ext map[string]string) error {
	d := newExtDecoder("NOTIFY_CONSUMER_IDS_CHANGED", ext)
	h.ConsumerGroup = d.str("consumerGroup", true)
	return d.err
}

// Encode returns the header as extFields.
func (h NotifyConsumerIDsChangedRequestHeader) Encode() map[string]string {
	return map[string]string{"consumerGroup": h.ConsumerGroup}
}

// GetConsumerRunningInfoRequestHeader is the ext of GET_CONSUMER_RUNNING_INFO
// (307), broker to consumer. ClientID must equal the client's own id.
type GetConsumerRunningInfoRequestHeader struct {
	ConsumerGroup string // consumerGroup
	ClientID      string // clientId
	JstackEnable  bool   // jstackEnable (optional)
}

// Decode reads the header; consumerGroup and clientId are required.
func (h *GetConsumerRunningInfoRequestHeader) Decode(ext map[string]string) error {
	d := newExtDecoder("GET_CONSUMER_RUNNING_INFO", ext)
	*h = GetConsumerRunningInfoRequestHeader{
		ConsumerGroup: d.str("consumerGroup", true),
		ClientID:      d.str("clientId", true),
		JstackEnable:  d.bool("jstackEnable", false),
	}
	return d.err
}

// Encode returns the header as extFields.
func (h GetConsumerRunningInfoRequestHeader) Encode() map[string]string {
	e := make(extEncoder, 3)
	e.str("consumerGroup", h.ConsumerGroup)
	e.str("clientId", h.ClientID)
	e.bool("jstackEnable", h.JstackEnable)
	return e
}

// ResetOffsetRequestHeader is the ext of RESET_CONSUMER_CLIENT_OFFSET (220,
// broker to consumer) and INVOKE_BROKER_TO_RESET_OFFSET (222, admin to
// broker).
type ResetOffsetRequestHeader struct {
	Topic     string // topic
	Group     string // group
	Timestamp int64  // timestamp: reset to the first message stored at or after it, ms
	IsForce   bool   // isForce (optional: the official client does not send it)
	QueueID   int32  // queueId (RocketMQ 5; optional, -1 = all queues)
	Offset    int64  // offset (RocketMQ 5; optional, -1 = unset)
}

// Decode reads the header; topic, group and timestamp are required.
func (h *ResetOffsetRequestHeader) Decode(ext map[string]string) error {
	d := newExtDecoder("RESET_OFFSET", ext)
	*h = ResetOffsetRequestHeader{
		Topic:     d.str("topic", true),
		Group:     d.str("group", true),
		Timestamp: d.int64("timestamp", true, 0),
		IsForce:   d.bool("isForce", false),
		QueueID:   d.int32("queueId", false, -1),
		Offset:    d.int64("offset", false, -1),
	}
	return d.err
}

// Encode returns the header as extFields; queueId and offset are omitted
// when -1.
func (h ResetOffsetRequestHeader) Encode() map[string]string {
	e := make(extEncoder, 6)
	e.str("topic", h.Topic)
	e.str("group", h.Group)
	e.int64("timestamp", h.Timestamp)
	e.bool("isForce", h.IsForce)
	if h.QueueID != -1 {
		e.int32("queueId", h.QueueID)
	}
	if h.Offset != -1 {
		e.int64("offset", h.Offset)
	}
	return e
}
