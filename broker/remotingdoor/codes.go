package remotingdoor

import (
	"errors"

	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// codes is the one mapping of the core's refusals to RocketMQ response
// codes: the code Java's broker answers the same situation with (see each
// Reason's doc).
var codes = map[core.Reason]int16{
	core.Internal:             protocol.RespSystemError,
	core.BadRequest:           protocol.RespSystemError,
	core.InvalidName:          protocol.RespSystemError,
	core.ReservedName:         protocol.RespSystemError,
	core.InvalidArgument:      protocol.RespInvalidParameter,
	core.IllegalMessage:       protocol.RespMessageIllegal,
	core.Forbidden:            protocol.RespNoPermission,
	core.Unavailable:          protocol.RespServiceNotAvailable,
	core.TopicNotFound:        protocol.RespTopicNotExist,
	core.GroupOffline:         protocol.RespConsumerNotOnline,
	core.NoClient:             protocol.RespSystemError,
	core.ClientTimeout:        protocol.RespConsumeMsgTimeout,
	core.SubscriptionNotFound: protocol.RespSubscriptionNotExist,
	core.SubscriptionStale:    protocol.RespSubscriptionNotLatest,
	core.BadFilter:            protocol.RespSubscriptionParseFailed,
	core.FilterUnsupported:    protocol.RespSystemError,
	core.FilterDataMissing:    protocol.RespFilterDataNotExist,
	core.NoMessage:            protocol.RespSystemError,
	core.NotFound:             protocol.RespQueryNotFound,
	core.TransactionRefused:   protocol.RespSystemError,
	core.InvalidReceipt:       protocol.RespNoMessage,
	core.ExpiredReceipt:       protocol.RespNoMessage,
	core.MessageTypeMismatch:  protocol.RespMessageIllegal,
	core.IllegalOperation:     protocol.RespIllegalOperation,
}

// refusal is an error that carries its own response code and remark:
// ACL 2.0's refusals (*auth.Error), which answer as Java's do.
type refusal interface {
	error
	ResponseCode() (code int16, remark string)
}

// codeOf returns the response code and remark for err: the core's
// refusal's, a refusal's own, or SYSTEM_ERROR with the error's text.
func codeOf(err error) (int16, string) {
	if e, ok := core.ReasonOf(err); ok {
		if code, ok := codes[e.Reason]; ok {
			return code, e.Remark
		}
		return protocol.RespSystemError, e.Remark
	}
	var r refusal
	if errors.As(err, &r) {
		return r.ResponseCode()
	}
	return protocol.RespSystemError, err.Error()
}
