package protocol

// Headers of admin and query requests.

// CreateTopicRequestHeader is the ext of UPDATE_AND_CREATE_TOPIC (17).
type CreateTopicRequestHeader struct {
	Topic           string // topic
	DefaultTopic    string // defaultTopic (the official admin sends "defaultTopic")
	ReadQueueNums   int32  // readQueueNums
	WriteQueueNums  int32  // writeQueueNums
	Perm            int32  // perm: PermRead|PermWrite|... bits
	TopicFilterType string // topicFilterType: SINGLE_TAG or MULTI_TAG
	TopicSysFlag    int32  // topicSysFlag (optional)
	Order           bool   // order (optional)
	Attributes      string // attributes (RocketMQ 5; optional, "+key=value,..." form)
}

// Decode reads the header; the fields Java marks @CFNotNull are required.
func (h *CreateTopicRequestHeader) Decode(ext map[string]string) error {
	d := newExtDecoder("UPDATE_AND_CREATE_TOPIC", ext)
	*h = CreateTopicRequestHeader{
		Topic:           d.str("topic", true),
		DefaultTopic:    d.str("defaultTopic", true),
		ReadQueueNums:   d.int32("readQueueNums", true, 0),
		WriteQueueNums:  d.int32("writeQueueNums", true, 0),
		Perm:            d.int32("perm", true, 0),
		TopicFilterType: d.str("topicFilterType", true),
		TopicSysFlag:    d.int32("topicSysFlag", false, 0),
		Order:           d.bool("order", false),
		Attributes:      d.str("attributes", false),
	}
	return d.err
}

// Encode returns the header as extFields, as the official admin sends it.
func (h CreateTopicRequestHeader) Encode() map[string]string {
	e := make(extEncoder, 9)
	e.str("topic", h.Topic)
	e.str("defaultTopic", h.DefaultTopic)
	e.int32("readQueueNums", h.ReadQueueNums)
	e.int32("writeQueueNums", h.WriteQueueNums)
	e.int32("perm", h.Perm)
	e.str("topicFilterType", h.TopicFilterType)
	e.int32("topicSysFlag", h.TopicSysFlag)
	e.bool("order", h.Order)
	e.optStr("attributes", h.Attributes)
	return e
}

// TopicRequestHeader is an ext that names one topic: DELETE_TOPIC_IN_BROKER
// (215) and GET_TOPIC_STATS_INFO (202).
type TopicRequestHeader struct {
	Topic string // topic
}

// Encode returns the header as extFields.
func (h TopicRequestHeader) Encode() map[string]string {
	return map[string]string{"topic": h.Topic}
}

func (h *TopicRequestHeader) decode(name string, ext map[string]string) error {
	d := newExtDecoder(name, ext)
	h.Topic = d.str("topic", true)
	return d.err
}

// DeleteTopicRequestHeader is the ext of DELETE_TOPIC_IN_BROKER.
type DeleteTopicRequestHeader struct{ TopicRequestHeader }

// Decode reads the header; topic is required.
func (h *DeleteTopicRequestHeader) Decode(ext map[string]string) error {
	return h.decode("DELETE_TOPIC_IN_BROKER", ext)
}

// GetTopicStatsInfoRequestHeader is the ext of GET_TOPIC_STATS_INFO.
type GetTopicStatsInfoRequestHeader struct{ TopicRequestHeader }

// Decode reads the header; topic is required.
func (h *GetTopicStatsInfoRequestHeader) Decode(ext map[string]string) error {
	return h.decode("GET_TOPIC_STATS_INFO", ext)
}

// ViewMessageRequestHeader is the ext of VIEW_MESSAGE_BY_ID (33): the
// message at a commit log offset (decoded from an offsetMsgId).
type ViewMessageRequestHeader struct {
	Offset int64  // offset
	Topic  string // topic (RocketMQ 5; optional)
}

// Decode reads the header; offset is required.
func (h *ViewMessageRequestHeader) Decode(ext map[string]string) error {
	d := newExtDecoder("VIEW_MESSAGE_BY_ID", ext)
	*h = ViewMessageRequestHeader{
		Offset: d.int64("offset", true, 0),
		Topic:  d.str("topic", false),
	}
	return d.err
}

// Encode returns the header as extFields.
func (h ViewMessageRequestHeader) Encode() map[string]string {
	e := make(extEncoder, 2)
	e.int64("offset", h.Offset)
	e.optStr("topic", h.Topic)
	return e
}

// QueryMessageRequestHeader is the ext of QUERY_MESSAGE (12): messages of a
// topic by key within a store-time window.
type QueryMessageRequestHeader struct {
	Topic          string // topic
	Key            string // key
	MaxNum         int32  // maxNum
	BeginTimestamp int64  // beginTimestamp, ms
	EndTimestamp   int64  // endTimestamp, ms
}

// Decode reads the header; all fields are required.
func (h *QueryMessageRequestHeader) Decode(ext map[string]string) error {
	d := newExtDecoder("QUERY_MESSAGE", ext)
	*h = QueryMessageRequestHeader{
		Topic:          d.str("topic", true),
		Key:            d.str("key", true),
		MaxNum:         d.int32("maxNum", true, 0),
		BeginTimestamp: d.int64("beginTimestamp", true, 0),
		EndTimestamp:   d.int64("endTimestamp", true, 0),
	}
	return d.err
}

// Encode returns the header as extFields.
func (h QueryMessageRequestHeader) Encode() map[string]string {
	e := make(extEncoder, 5)
	e.str("topic", h.Topic)
	e.str("key", h.Key)
	e.int32("maxNum", h.MaxNum)
	e.int64("beginTimestamp", h.BeginTimestamp)
	e.int64("endTimestamp", h.EndTimestamp)
	return e
}

// QueryMessageResponseHeader is the ext of a QUERY_MESSAGE response; the
// body holds the found messages, encoded as in a pull body.
type QueryMessageResponseHeader struct {
	IndexLastUpdateTimestamp int64 // indexLastUpdateTimestamp
	IndexLastUpdatePhyoffset int64 // indexLastUpdatePhyoffset
}

// Decode reads the header; both fields are required.
func (h *QueryMessageResponseHeader) Decode(ext map[string]string) error {
	d := newExtDecoder("QUERY_MESSAGE response", ext)
	*h = QueryMessageResponseHeader{
		IndexLastUpdateTimestamp: d.int64("indexLastUpdateTimestamp", true, 0),
		IndexLastUpdatePhyoffset: d.int64("indexLastUpdatePhyoffset", true, 0),
	}
	return d.err
}

// Encode returns the header as extFields.
func (h QueryMessageResponseHeader) Encode() map[string]string {
	e := make(extEncoder, 2)
	e.int64("indexLastUpdateTimestamp", h.IndexLastUpdateTimestamp)
	e.int64("indexLastUpdatePhyoffset", h.IndexLastUpdatePhyoffset)
	return e
}

// GetConsumeStatsRequestHeader is the ext of GET_CONSUME_STATS (208).
type GetConsumeStatsRequestHeader struct {
	ConsumerGroup string // consumerGroup
	Topic         string // topic (optional: empty means every subscribed topic)
}

// Decode reads the header; consumerGroup is required.
func (h *GetConsumeStatsRequestHeader) Decode(ext map[string]string) error {
	d := newExtDecoder("GET_CONSUME_STATS", ext)
	*h = GetConsumeStatsRequestHeader{
		ConsumerGroup: d.str("consumerGroup", true),
		Topic:         d.str("topic", false),
	}
	return d.err
}

// Encode returns the header as extFields.
func (h GetConsumeStatsRequestHeader) Encode() map[string]string {
	e := make(extEncoder, 2)
	e.str("consumerGroup", h.ConsumerGroup)
	e.optStr("topic", h.Topic)
	return e
}
