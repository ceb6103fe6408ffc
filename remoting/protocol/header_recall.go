package protocol

// RecallMessageRequestHeader is the ext of RECALL_MESSAGE (370, Java
// 5.3's RecallMessageRequestHeader): the recall handle a timer message's
// send was answered with (SendMessageResponseHeader.RecallHandle) and its
// topic. bname is RpcRequestHeader's broker name, which Java's producer
// sets to the broker the handle names.
type RecallMessageRequestHeader struct {
	ProducerGroup string // producerGroup (optional)
	Topic         string // topic
	RecallHandle  string // recallHandle
	BrokerName    string // bname (optional)
}

// Decode reads the header; topic and recallHandle are required.
func (h *RecallMessageRequestHeader) Decode(ext map[string]string) error {
	d := newExtDecoder("RECALL_MESSAGE", ext)
	*h = RecallMessageRequestHeader{
		ProducerGroup: d.str("producerGroup", false),
		Topic:         d.str("topic", true),
		RecallHandle:  d.str("recallHandle", true),
		BrokerName:    d.str("bname", false),
	}
	return d.err
}

// Encode returns the header as extFields.
func (h RecallMessageRequestHeader) Encode() map[string]string {
	e := make(extEncoder, 4)
	e.optStr("producerGroup", h.ProducerGroup)
	e.str("topic", h.Topic)
	e.str("recallHandle", h.RecallHandle)
	e.optStr("bname", h.BrokerName)
	return e
}

// RecallMessageResponseHeader is the ext of a successful RECALL_MESSAGE
// answer: the recalled message's id, its UNIQ_KEY.
type RecallMessageResponseHeader struct {
	MsgID string // msgId
}

// Decode reads the header; msgId is required.
func (h *RecallMessageResponseHeader) Decode(ext map[string]string) error {
	d := newExtDecoder("RECALL_MESSAGE response", ext)
	h.MsgID = d.str("msgId", true)
	return d.err
}

// Encode returns the header as extFields.
func (h RecallMessageResponseHeader) Encode() map[string]string {
	e := make(extEncoder, 1)
	e.str("msgId", h.MsgID)
	return e
}
