package message

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// A recall handle names a timer message so that its producer can withdraw
// it before it falls due (RocketMQ 5.3's RecallMessageHandle): the broker
// answers a timer message's send with one (SEND_MESSAGE's recallHandle,
// gRPC's SendResultEntry.recall_handle), and the producer gives it back in
// RECALL_MESSAGE (or gRPC's RecallMessage). Brokers decode it to find the
// message; clients decode it to find the broker to ask, as Java's
// DefaultMQProducerImpl.recallMessage does. The format is coded here,
// below both.

// ErrBadRecallHandle is returned (wrapped) for a recall handle that does
// not parse.
var ErrBadRecallHandle = errors.New("message: bad recall handle")

// RecallHandle is what a recall handle names (Java RecallMessageHandle's
// version 1).
type RecallHandle struct {
	Topic, Broker string
	// Due is the message's due time, Unix ms, as its TIMER_OUT_MS says.
	Due     int64
	UniqKey string
}

// Encode is the handle as clients carry it: URL-safe base64 (with
// padding, as Java's Base64.getUrlEncoder) of "v1 topic broker due key".
func (h RecallHandle) Encode() string {
	raw := strings.Join([]string{"v1", h.Topic, h.Broker, strconv.FormatInt(h.Due, 10), h.UniqKey}, " ")
	return base64.URLEncoding.EncodeToString([]byte(raw))
}

// DecodeRecallHandle parses a handle Encode made (or Java's broker).
func DecodeRecallHandle(s string) (RecallHandle, error) {
	if s == "" {
		return RecallHandle{}, fmt.Errorf("%w: empty", ErrBadRecallHandle)
	}
	raw, err := base64.URLEncoding.DecodeString(s)
	if err != nil {
		return RecallHandle{}, fmt.Errorf("%w: not base64: %v", ErrBadRecallHandle, err)
	}
	f := strings.Split(string(raw), " ")
	if len(f) != 5 || f[0] != "v1" {
		return RecallHandle{}, fmt.Errorf("%w: not a version 1 handle", ErrBadRecallHandle)
	}
	due, err := strconv.ParseInt(f[3], 10, 64)
	if err != nil || due <= 0 || f[1] == "" || f[2] == "" || f[4] == "" {
		return RecallHandle{}, fmt.Errorf("%w: a field is missing or malformed", ErrBadRecallHandle)
	}
	return RecallHandle{Topic: f[1], Broker: f[2], Due: due, UniqKey: f[4]}, nil
}
