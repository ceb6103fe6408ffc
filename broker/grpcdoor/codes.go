package grpcdoor

import (
	"errors"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/runnelmq/runnel/broker/core"
)

// codes is the one mapping of the core's refusals to
// apache.rocketmq.v2.Code: the code RocketMQ's proxy gives the same
// situation (its ResponseBuilder and GrpcValidator), or, where the proxy
// passes a broker's answer on as INTERNAL_SERVER_ERROR, the code the SDKs
// act on best.
var reasonCodes = map[core.Reason]v2.Code{
	core.Internal:        v2.Code_INTERNAL_SERVER_ERROR,
	core.BadRequest:      v2.Code_BAD_REQUEST,
	core.InvalidName:     v2.Code_BAD_REQUEST,
	core.ReservedName:    v2.Code_BAD_REQUEST,
	core.InvalidArgument: v2.Code_BAD_REQUEST,
	core.IllegalMessage:  v2.Code_BAD_REQUEST,
	core.Forbidden:       v2.Code_FORBIDDEN,
	// A slave (a replicated group's follower), a full disk, a broker
	// shutting down: the SDKs retry another queue on it.
	core.Unavailable:          v2.Code_HA_NOT_AVAILABLE,
	core.TopicNotFound:        v2.Code_TOPIC_NOT_FOUND,
	core.GroupOffline:         v2.Code_CONSUMER_GROUP_NOT_FOUND,
	core.NoClient:             v2.Code_NOT_FOUND,
	core.ClientTimeout:        v2.Code_PROXY_TIMEOUT,
	core.SubscriptionNotFound: v2.Code_CONSUMER_GROUP_NOT_FOUND,
	core.SubscriptionStale:    v2.Code_BAD_REQUEST,
	core.BadFilter:            v2.Code_ILLEGAL_FILTER_EXPRESSION,
	core.FilterUnsupported:    v2.Code_UNSUPPORTED,
	core.FilterDataMissing:    v2.Code_ILLEGAL_FILTER_EXPRESSION,
	core.NoMessage:            v2.Code_MESSAGE_NOT_FOUND,
	core.NotFound:             v2.Code_NOT_FOUND,
	core.TransactionRefused:   v2.Code_INVALID_TRANSACTION_ID,
	core.InvalidReceipt:       v2.Code_INVALID_RECEIPT_HANDLE,
	core.ExpiredReceipt:       v2.Code_INVALID_RECEIPT_HANDLE,
	core.MessageTypeMismatch:  v2.Code_MESSAGE_PROPERTY_CONFLICT_WITH_TYPE,
	core.IllegalOperation:     v2.Code_BAD_REQUEST,
}

// refusal is an error that carries its own v2 code: the door's own
// refusals (a bad request field, a missing client id) and access
// control's.
type refusal struct {
	code v2.Code
	msg  string
}

func (r *refusal) Error() string { return "grpcdoor: " + r.code.String() + ": " + r.msg }

// refuse returns a refusal with code and msg.
func refuse(code v2.Code, msg string) *refusal { return &refusal{code: code, msg: msg} }

// statusOf is the Status err is answered with: the door's refusal, the
// core's refusal through codes, or INTERNAL_SERVER_ERROR with the error's
// text. A nil err is OK.
func statusOf(err error) *v2.Status {
	if err == nil {
		return okStatus()
	}
	var r *refusal
	if errors.As(err, &r) {
		return &v2.Status{Code: r.code, Message: r.msg}
	}
	if e, ok := core.ReasonOf(err); ok {
		code, ok := reasonCodes[e.Reason]
		if !ok {
			code = v2.Code_INTERNAL_SERVER_ERROR
		}
		return &v2.Status{Code: code, Message: e.Remark}
	}
	return &v2.Status{Code: v2.Code_INTERNAL_SERVER_ERROR, Message: err.Error()}
}

// okStatus is the proxy's OK: its code's name as the message.
func okStatus() *v2.Status { return &v2.Status{Code: v2.Code_OK, Message: v2.Code_OK.String()} }

// status is a Status of code with msg.
func status(code v2.Code, msg string) *v2.Status { return &v2.Status{Code: code, Message: msg} }
