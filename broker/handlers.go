package broker

import (
	"context"
	"fmt"

	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// The remoting front door: each handler decodes a request, calls the core
// and encodes the result. Refusals come back from the core as errors and
// become responses in one place, failure.

// registerHandlers wires every request code the broker serves.
func (b *Broker) registerHandlers() {
	h := b.srv.Handle
	for _, code := range sendCodes {
		h(code, b.handleSend)
	}
	b.srv.HandleRun(sendCodes, b.handleSendRun)
	h(protocol.ReqSendReplyMessage, b.handleSendReply)
	h(protocol.ReqSendReplyMessageV2, b.handleSendReply)
	h(protocol.ReqPullMessage, withHeader(b.handlePull))
	h(protocol.ReqLitePullMessage, withHeader(b.handlePull))
	h(protocol.ReqQueryConsumerOffset, withHeader(b.handleQueryConsumerOffset))
	h(protocol.ReqUpdateConsumerOffset, withHeader(b.handleUpdateConsumerOffset))
	h(protocol.ReqGetMaxOffset, withHeader(b.handleGetMaxOffset))
	h(protocol.ReqGetMinOffset, withHeader(b.handleGetMinOffset))
	h(protocol.ReqSearchOffsetByTimestamp, withHeader(b.handleSearchOffset))
	h(protocol.ReqGetEarliestMsgStoreTime, withHeader(b.handleEarliestMsgStoreTime))
	h(protocol.ReqHeartBeat, b.handleHeartbeat)
	h(protocol.ReqUnregisterClient, withHeader(b.handleUnregisterClient))
	h(protocol.ReqGetConsumerListByGroup, withHeader(b.handleGetConsumerList))
	h(protocol.ReqLockBatchMQ, b.handleLockBatch)
	h(protocol.ReqUnlockBatchMQ, b.handleUnlockBatch)
	h(protocol.ReqUpdateAndCreateTopic, withHeader(b.handleCreateTopic))
	h(protocol.ReqDeleteTopicInBroker, withHeader(b.handleDeleteTopic))
	h(protocol.ReqGetAllTopicConfig, b.handleGetAllTopicConfig)
	h(protocol.ReqGetTopicStatsInfo, withHeader(b.handleTopicStats))
	h(protocol.ReqGetConsumeStats, withHeader(b.handleConsumeStats))
	h(protocol.ReqGetBrokerRuntimeInfo, b.handleRuntimeInfo)
	h(protocol.ReqViewMessageByID, withHeader(b.handleViewMessage))
	h(protocol.ReqQueryMessage, withHeader(b.handleQueryMessage))
	h(protocol.ReqConsumerSendMsgBack, withHeader(b.handleConsumerSendMsgBack))
	h(protocol.ReqEndTransaction, withHeader(b.handleEndTransaction))
	h(protocol.ReqGetAllSubscriptionGroupConfig, b.handleGetAllSubscriptionGroups)
	h(protocol.ReqUpdateAndCreateSubscriptionGroup, b.handleUpdateGroup)
	h(protocol.ReqUpdateBrokerConfig, b.handleUpdateBrokerConfig)
	h(protocol.ReqGetAllConsumerOffset, b.handleGetAllConsumerOffsets)
	h(protocol.ReqQueryTopicConsumeByWho, b.handleTopicConsumeByWho)
	h(protocol.ReqInvokeBrokerToResetOffset, withHeader(b.handleResetOffset))
	h(protocol.ReqGetConsumerConnectionList, b.handleConsumerConnections)
	h(protocol.ReqGetProducerConnectionList, b.handleProducerConnections)
	h(protocol.ReqGetTopicConfig, b.handleGetTopicConfig)
	h(protocol.ReqGetBrokerConfig, b.handleGetBrokerConfig)
	h(protocol.ReqGetConsumerRunningInfo, withHeader(b.handleConsumerRunningInfo))
	h(protocol.ReqConsumeMessageDirectly, b.handleConsumeMessageDirectly)
	h(protocol.ReqInvokeBrokerToGetConsumerStatus, b.handleGetConsumerStatus)
	h(protocol.ReqDeleteSubscriptionGroup, withHeader(b.handleDeleteGroup))
	h(protocol.ReqCloneGroupOffset, withHeader(b.handleCloneGroupOffset))
	b.registerAuthHandlers()
	b.srv.HandleDefault(b.handleUnsupported)
}

// header is a typed request header of remoting/protocol.
type header[H any] interface {
	*H
	Decode(ext map[string]string) error
}

// commandHeader is a typed header that reads a request's ext fields
// without decoding them into a map (the hot requests' headers).
type commandHeader interface {
	DecodeCommand(req *protocol.Command) error
}

// withHeader adapts a handler of a decoded header: a header that does not
// decode is answered SYSTEM_ERROR with the decoder's message, as Java
// answers a header it cannot read.
func withHeader[H any, P header[H]](fn func(ctx context.Context, c *remoting.Conn, req *protocol.Command, h *H) *protocol.Command) remoting.Handler {
	return func(ctx context.Context, c *remoting.Conn, req *protocol.Command) *protocol.Command {
		var h H
		var err error
		if ch, ok := any(P(&h)).(commandHeader); ok {
			err = ch.DecodeCommand(req)
		} else {
			err = P(&h).Decode(req.Fields())
		}
		if err != nil {
			return errResponse(req, protocol.RespSystemError, "%v", err)
		}
		return fn(ctx, c, req, &h)
	}
}

// errResponse answers req with code and remark.
func errResponse(req *protocol.Command, code int16, format string, args ...any) *protocol.Command {
	return protocol.NewResponse(req, code, fmt.Sprintf(format, args...))
}

// failure answers req with a core refusal's code and remark; any other
// error is a SYSTEM_ERROR with its text.
func failure(req *protocol.Command, err error) *protocol.Command {
	code, remark := core.CodeOf(err)
	return protocol.NewResponse(req, code, remark)
}

// success answers req SUCCESS with ext fields and body.
func success(req *protocol.Command, ext map[string]string, body []byte) *protocol.Command {
	resp := protocol.NewResponse(req, protocol.RespSuccess, "")
	resp.ExtFields = ext
	resp.Body = body
	return resp
}

// successFields is success with the header as a field list
// (Command.MoreExt), for the answers of sends and pulls: no map each.
func successFields(req *protocol.Command, fs []protocol.Field) *protocol.Command {
	resp := protocol.NewResponse(req, protocol.RespSuccess, "")
	resp.MoreExt = fs
	return resp
}

// outcome answers req SUCCESS, or with err's refusal.
func outcome(req *protocol.Command, err error) *protocol.Command {
	if err != nil {
		return failure(req, err)
	}
	return success(req, nil, nil)
}

// handleUnsupported answers codes the broker does not serve.
func (b *Broker) handleUnsupported(_ context.Context, c *remoting.Conn, req *protocol.Command) *protocol.Command {
	b.log.Debug("broker: request code not supported", "code", req.Code, "remote", c.RemoteAddr())
	return errResponse(req, protocol.RespRequestCodeNotSupported,
		"request code %d (%s) not supported by this broker", req.Code, protocol.RequestCodeName(req.Code))
}
