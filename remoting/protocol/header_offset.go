package protocol

// Offset queries: QUERY_CONSUMER_OFFSET (14), UPDATE_CONSUMER_OFFSET (15),
// SEARCH_OFFSET_BY_TIMESTAMP (29), GET_MAX_OFFSET (30), GET_MIN_OFFSET (31),
// GET_EARLIEST_MSG_STORETIME (32).

// QueryConsumerOffsetRequestHeader is the ext of QUERY_CONSUMER_OFFSET.
type QueryConsumerOffsetRequestHeader struct {
	ConsumerGroup string // consumerGroup
	Topic         string // topic
	QueueID       int32  // queueId
	BrokerName    string // bname (optional)
}

// Decode reads the header; all but bname are required.
func (h *QueryConsumerOffsetRequestHeader) Decode(ext map[string]string) error {
	return h.decode(newExtDecoder("QUERY_CONSUMER_OFFSET", ext))
}

// DecodeCommand is Decode of req's ext fields, read without decoding them
// into a map when they are undecoded.
func (h *QueryConsumerOffsetRequestHeader) DecodeCommand(req *Command) error {
	var d extDecoder
	d.fromCommand("QUERY_CONSUMER_OFFSET", req)
	return h.decode(&d)
}

func (h *QueryConsumerOffsetRequestHeader) decode(d *extDecoder) error {
	*h = QueryConsumerOffsetRequestHeader{
		ConsumerGroup: d.str("consumerGroup", true),
		Topic:         d.str("topic", true),
		QueueID:       d.int32("queueId", true, 0),
		BrokerName:    d.str("bname", false),
	}
	return d.err
}

// Encode returns the header as extFields.
func (h QueryConsumerOffsetRequestHeader) Encode() map[string]string {
	e := make(extEncoder, 4)
	e.str("consumerGroup", h.ConsumerGroup)
	e.str("topic", h.Topic)
	e.int32("queueId", h.QueueID)
	e.optStr("bname", h.BrokerName)
	return e
}

// QueryConsumerOffsetResponseHeader is the ext of a successful
// QUERY_CONSUMER_OFFSET response: the next offset to consume.
type QueryConsumerOffsetResponseHeader struct {
	Offset int64 // offset
}

// Decode reads the header; offset is required.
func (h *QueryConsumerOffsetResponseHeader) Decode(ext map[string]string) error {
	return decodeOffset("QUERY_CONSUMER_OFFSET response", ext, &h.Offset)
}

// Encode returns the header as extFields.
func (h QueryConsumerOffsetResponseHeader) Encode() map[string]string { return encodeOffset(h.Offset) }

// UpdateConsumerOffsetRequestHeader is the ext of UPDATE_CONSUMER_OFFSET. The
// official client may send commitOffset -1; callers ignore negatives.
type UpdateConsumerOffsetRequestHeader struct {
	ConsumerGroup string // consumerGroup
	Topic         string // topic
	QueueID       int32  // queueId
	CommitOffset  int64  // commitOffset
	BrokerName    string // bname (optional)
}

// Decode reads the header; all but bname are required.
func (h *UpdateConsumerOffsetRequestHeader) Decode(ext map[string]string) error {
	return h.decode(newExtDecoder("UPDATE_CONSUMER_OFFSET", ext))
}

// DecodeCommand is Decode of req's ext fields, read without decoding them
// into a map when they are undecoded.
func (h *UpdateConsumerOffsetRequestHeader) DecodeCommand(req *Command) error {
	var d extDecoder
	d.fromCommand("UPDATE_CONSUMER_OFFSET", req)
	return h.decode(&d)
}

func (h *UpdateConsumerOffsetRequestHeader) decode(d *extDecoder) error {
	*h = UpdateConsumerOffsetRequestHeader{
		ConsumerGroup: d.str("consumerGroup", true),
		Topic:         d.str("topic", true),
		QueueID:       d.int32("queueId", true, 0),
		CommitOffset:  d.int64("commitOffset", true, 0),
		BrokerName:    d.str("bname", false),
	}
	return d.err
}

// Encode returns the header as extFields.
func (h UpdateConsumerOffsetRequestHeader) Encode() map[string]string {
	e := make(extEncoder, 5)
	e.str("consumerGroup", h.ConsumerGroup)
	e.str("topic", h.Topic)
	e.int32("queueId", h.QueueID)
	e.int64("commitOffset", h.CommitOffset)
	e.optStr("bname", h.BrokerName)
	return e
}

// QueueRequestHeader is the ext shared by GET_MAX_OFFSET, GET_MIN_OFFSET and
// GET_EARLIEST_MSG_STORETIME: one queue of one topic.
type QueueRequestHeader struct {
	Topic      string // topic
	QueueID    int32  // queueId
	BrokerName string // bname (optional)
}

func (h *QueueRequestHeader) decode(name string, ext map[string]string) error {
	d := newExtDecoder(name, ext)
	*h = QueueRequestHeader{
		Topic:      d.str("topic", true),
		QueueID:    d.int32("queueId", true, 0),
		BrokerName: d.str("bname", false),
	}
	return d.err
}

// Encode returns the header as extFields.
func (h QueueRequestHeader) Encode() map[string]string {
	e := make(extEncoder, 3)
	e.str("topic", h.Topic)
	e.int32("queueId", h.QueueID)
	e.optStr("bname", h.BrokerName)
	return e
}

// GetMaxOffsetRequestHeader is the ext of GET_MAX_OFFSET.
type GetMaxOffsetRequestHeader struct{ QueueRequestHeader }

// Decode reads the header; topic and queueId are required.
func (h *GetMaxOffsetRequestHeader) Decode(ext map[string]string) error {
	return h.decode("GET_MAX_OFFSET", ext)
}

// GetMaxOffsetResponseHeader is the ext of a GET_MAX_OFFSET response: the
// offset the next message will get. The official client reads it whatever
// the response code.
type GetMaxOffsetResponseHeader struct {
	Offset int64 // offset
}

// Decode reads the header; offset is required.
func (h *GetMaxOffsetResponseHeader) Decode(ext map[string]string) error {
	return decodeOffset("GET_MAX_OFFSET response", ext, &h.Offset)
}

// Encode returns the header as extFields.
func (h GetMaxOffsetResponseHeader) Encode() map[string]string { return encodeOffset(h.Offset) }

// GetMinOffsetRequestHeader is the ext of GET_MIN_OFFSET.
type GetMinOffsetRequestHeader struct{ QueueRequestHeader }

// Decode reads the header; topic and queueId are required.
func (h *GetMinOffsetRequestHeader) Decode(ext map[string]string) error {
	return h.decode("GET_MIN_OFFSET", ext)
}

// GetMinOffsetResponseHeader is the ext of a GET_MIN_OFFSET response.
type GetMinOffsetResponseHeader struct {
	Offset int64 // offset
}

// Decode reads the header; offset is required.
func (h *GetMinOffsetResponseHeader) Decode(ext map[string]string) error {
	return decodeOffset("GET_MIN_OFFSET response", ext, &h.Offset)
}

// Encode returns the header as extFields.
func (h GetMinOffsetResponseHeader) Encode() map[string]string { return encodeOffset(h.Offset) }

// GetEarliestMsgStoretimeRequestHeader is the ext of GET_EARLIEST_MSG_STORETIME.
type GetEarliestMsgStoretimeRequestHeader struct{ QueueRequestHeader }

// Decode reads the header; topic and queueId are required.
func (h *GetEarliestMsgStoretimeRequestHeader) Decode(ext map[string]string) error {
	return h.decode("GET_EARLIEST_MSG_STORETIME", ext)
}

// GetEarliestMsgStoretimeResponseHeader is the ext of its response.
type GetEarliestMsgStoretimeResponseHeader struct {
	Timestamp int64 // timestamp: store time of the oldest message, ms
}

// Decode reads the header; timestamp is required.
func (h *GetEarliestMsgStoretimeResponseHeader) Decode(ext map[string]string) error {
	d := newExtDecoder("GET_EARLIEST_MSG_STORETIME response", ext)
	h.Timestamp = d.int64("timestamp", true, 0)
	return d.err
}

// Encode returns the header as extFields.
func (h GetEarliestMsgStoretimeResponseHeader) Encode() map[string]string {
	e := make(extEncoder, 1)
	e.int64("timestamp", h.Timestamp)
	return e
}

// SearchOffsetRequestHeader is the ext of SEARCH_OFFSET_BY_TIMESTAMP.
type SearchOffsetRequestHeader struct {
	Topic      string // topic
	QueueID    int32  // queueId
	Timestamp  int64  // timestamp, ms
	BrokerName string // bname (optional)
}

// Decode reads the header; all but bname are required.
func (h *SearchOffsetRequestHeader) Decode(ext map[string]string) error {
	d := newExtDecoder("SEARCH_OFFSET_BY_TIMESTAMP", ext)
	*h = SearchOffsetRequestHeader{
		Topic:      d.str("topic", true),
		QueueID:    d.int32("queueId", true, 0),
		Timestamp:  d.int64("timestamp", true, 0),
		BrokerName: d.str("bname", false),
	}
	return d.err
}

// Encode returns the header as extFields.
func (h SearchOffsetRequestHeader) Encode() map[string]string {
	e := make(extEncoder, 4)
	e.str("topic", h.Topic)
	e.int32("queueId", h.QueueID)
	e.int64("timestamp", h.Timestamp)
	e.optStr("bname", h.BrokerName)
	return e
}

// SearchOffsetResponseHeader is the ext of its response: the first offset
// whose store time is at or after the timestamp.
type SearchOffsetResponseHeader struct {
	Offset int64 // offset
}

// Decode reads the header; offset is required.
func (h *SearchOffsetResponseHeader) Decode(ext map[string]string) error {
	return decodeOffset("SEARCH_OFFSET_BY_TIMESTAMP response", ext, &h.Offset)
}

// Encode returns the header as extFields.
func (h SearchOffsetResponseHeader) Encode() map[string]string { return encodeOffset(h.Offset) }

func decodeOffset(name string, ext map[string]string, dst *int64) error {
	d := newExtDecoder(name, ext)
	*dst = d.int64("offset", true, 0)
	return d.err
}

func encodeOffset(off int64) map[string]string {
	e := make(extEncoder, 1)
	e.int64("offset", off)
	return e
}
