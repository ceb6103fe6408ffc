package protocol

import "encoding/json"

// LockBatchRequestBody is the body of LOCK_BATCH_MQ (41) and
// UNLOCK_BATCH_MQ (42). The official client does not send onlyThisBroker.
type LockBatchRequestBody struct {
	ConsumerGroup  string         `json:"consumerGroup"`
	ClientID       string         `json:"clientId"`
	OnlyThisBroker bool           `json:"onlyThisBroker,omitempty"`
	MQSet          []MessageQueue `json:"mqSet"`
}

// UnlockBatchRequestBody has the same shape as LockBatchRequestBody.
type UnlockBatchRequestBody = LockBatchRequestBody

// Encode returns the body as JSON.
func (b LockBatchRequestBody) Encode() []byte {
	if b.MQSet == nil {
		b.MQSet = []MessageQueue{}
	}
	out, _ := json.Marshal(b) // plain strings and ints: cannot fail
	return out
}

// DecodeLockBatchRequestBody parses a LOCK_BATCH_MQ or UNLOCK_BATCH_MQ body.
func DecodeLockBatchRequestBody(body []byte) (*LockBatchRequestBody, error) {
	return decodeBodyAs[LockBatchRequestBody]("LOCK_BATCH_MQ", body)
}

// LockBatchResponseBody is the body of a LOCK_BATCH_MQ response: the queues
// now locked by the requester. The official client ignores the response
// code and reads only this.
type LockBatchResponseBody struct {
	LockOKMQSet []MessageQueue `json:"lockOKMQSet"`
}

// Encode returns the body as JSON; an empty set is [].
func (b LockBatchResponseBody) Encode() []byte {
	if b.LockOKMQSet == nil {
		b.LockOKMQSet = []MessageQueue{}
	}
	out, _ := json.Marshal(b)
	return out
}

// DecodeLockBatchResponseBody parses a LOCK_BATCH_MQ response body.
func DecodeLockBatchResponseBody(body []byte) (*LockBatchResponseBody, error) {
	return decodeBodyAs[LockBatchResponseBody]("LOCK_BATCH_MQ response", body)
}
