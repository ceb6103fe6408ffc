package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// ErrBadBody is returned (wrapped) for a command body that does not decode.
var ErrBadBody = errors.New("protocol: malformed body")

// decodeBody unmarshals a JSON body, naming the request in the error.
func decodeBody(name string, body []byte, v any) error {
	if len(body) == 0 {
		return fmt.Errorf("%w: %s: empty", ErrBadBody, name)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrBadBody, name, err)
	}
	return nil
}

// MessageQueue identifies one queue of a topic on one broker, as it appears
// in lock, stats and reset-offset bodies.
type MessageQueue struct {
	Topic      string `json:"topic"`
	BrokerName string `json:"brokerName"`
	QueueID    int32  `json:"queueId"`
}

// Less orders queues by topic, broker name, then queue id, the order the
// official client sorts them in before allocation.
func (q MessageQueue) Less(o MessageQueue) bool {
	if q.Topic != o.Topic {
		return q.Topic < o.Topic
	}
	if q.BrokerName != o.BrokerName {
		return q.BrokerName < o.BrokerName
	}
	return q.QueueID < o.QueueID
}

// AppendFastjsonKey writes q the way fastjson writes a MessageQueue used as
// a map key: a compact object with the fields in alphabetical order.
func (q MessageQueue) AppendFastjsonKey(dst []byte) []byte {
	dst = append(dst, `{"brokerName":`...)
	dst = appendJSONString(dst, q.BrokerName)
	dst = append(dst, `,"queueId":`...)
	dst = strconv.AppendInt(dst, int64(q.QueueID), 10)
	dst = append(dst, `,"topic":`...)
	dst = appendJSONString(dst, q.Topic)
	return append(dst, '}')
}
