package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/runnelmq/runnel/message"
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

// decodeBodyAs is decodeBody into a new T.
func decodeBodyAs[T any](name string, body []byte) (*T, error) {
	v := new(T)
	if err := decodeBody(name, body, v); err != nil {
		return nil, err
	}
	return v, nil
}

// MessageQueue identifies one queue of a topic on one broker in lock, stats
// and reset-offset bodies: package message's Queue, under its wire name.
type MessageQueue = message.Queue

// AppendQueueKey writes q the way fastjson writes a MessageQueue used as a
// map key: a compact object with the fields in alphabetical order.
func AppendQueueKey(dst []byte, q MessageQueue) []byte {
	dst = append(dst, `{"brokerName":`...)
	dst = appendJSONString(dst, q.BrokerName)
	dst = append(dst, `,"queueId":`...)
	dst = strconv.AppendInt(dst, int64(q.QueueID), 10)
	dst = append(dst, `,"topic":`...)
	dst = appendJSONString(dst, q.Topic)
	return append(dst, '}')
}
