package protocol

// WritePermOfBrokerRequestHeader is the header of WIPE_WRITE_PERM_OF_BROKER
// and ADD_WRITE_PERM_OF_BROKER (Java WipeWritePermOfBrokerRequestHeader,
// AddWritePermOfBrokerRequestHeader: the same one field).
type WritePermOfBrokerRequestHeader struct {
	BrokerName string // brokerName
}

// Encode returns the ext fields.
func (h WritePermOfBrokerRequestHeader) Encode() map[string]string {
	return extEncoder{"brokerName": h.BrokerName}
}

// Decode reads the header; brokerName is required.
func (h *WritePermOfBrokerRequestHeader) Decode(ext map[string]string) error {
	d := newExtDecoder("WRITE_PERM_OF_BROKER", ext)
	h.BrokerName = d.str("brokerName", true)
	return d.err
}

// WritePermOfBrokerResponseHeader is the answer's header: how many
// topics' queue data changed, under wipeTopicCount for a wipe and
// addTopicCount for an add (Java WipeWritePermOfBrokerResponseHeader,
// AddWritePermOfBrokerResponseHeader).
type WritePermOfBrokerResponseHeader struct {
	TopicCount int32
}

// Encode returns the ext fields for the answer to request code req.
func (h WritePermOfBrokerResponseHeader) Encode(req int16) map[string]string {
	e := extEncoder{}
	e.int32(writePermCountKey(req), h.TopicCount)
	return e
}

// Decode reads the answer to request code req.
func (h *WritePermOfBrokerResponseHeader) Decode(req int16, ext map[string]string) error {
	d := newExtDecoder(RequestCodeName(req)+" response", ext)
	h.TopicCount = d.int32(writePermCountKey(req), true, 0)
	return d.err
}

func writePermCountKey(req int16) string {
	if req == ReqAddWritePermOfBroker {
		return "addTopicCount"
	}
	return "wipeTopicCount"
}
