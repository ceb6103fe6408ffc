package protocol

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
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

// MessageQueue identifies one queue of a topic on one broker: in lock,
// stats and reset-offset bodies, and in the client, which has no other
// queue type.
//
// Invariants: CompareQueues is the order RocketMQ clients (Java and the
// official Go client) sort queues in before allocation (topic, then broker
// name, then queue id), so every member of a consumer group, whatever its
// implementation, computes the same split; String is byte for byte Java's
// MessageQueue.toString, which the consistent-hash strategy hashes.
type MessageQueue struct {
	Topic      string `json:"topic"`
	BrokerName string `json:"brokerName"`
	QueueID    int32  `json:"queueId"`
}

// String returns the Java MessageQueue.toString form,
// "MessageQueue [topic=T, brokerName=B, queueId=N]".
func (q MessageQueue) String() string {
	return "MessageQueue [topic=" + q.Topic + ", brokerName=" + q.BrokerName + ", queueId=" + strconv.Itoa(int(q.QueueID)) + "]"
}

// CompareQueues orders queues by topic, then broker name, then queue id
// (numerically), returning -1, 0 or +1.
func CompareQueues(a, b MessageQueue) int {
	if c := strings.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	if c := strings.Compare(a.BrokerName, b.BrokerName); c != 0 {
		return c
	}
	return cmp.Compare(a.QueueID, b.QueueID)
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
