package remotingdoor

import (
	"context"
	"fmt"

	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// registerHandlers wires every request code the broker serves.
func (d *Door) registerHandlers() {
	h := d.srv.Handle
	for _, code := range sendCodes {
		h(code, d.handleSend)
	}
	d.srv.HandleRun(sendCodes, d.handleSendRun)
	h(protocol.ReqSendReplyMessage, d.handleSendReply)
	h(protocol.ReqSendReplyMessageV2, d.handleSendReply)
	h(protocol.ReqRecallMessage, withHeader(d.handleRecall))
	h(protocol.ReqPullMessage, withHeader(d.handlePull))
	h(protocol.ReqLitePullMessage, withHeader(d.handlePull))
	h(protocol.ReqQueryConsumerOffset, withHeader(d.handleQueryConsumerOffset))
	h(protocol.ReqUpdateConsumerOffset, withHeader(d.handleUpdateConsumerOffset))
	h(protocol.ReqGetMaxOffset, withHeader(d.handleGetMaxOffset))
	h(protocol.ReqGetMinOffset, withHeader(d.handleGetMinOffset))
	h(protocol.ReqSearchOffsetByTimestamp, withHeader(d.handleSearchOffset))
	h(protocol.ReqGetEarliestMsgStoreTime, withHeader(d.handleEarliestMsgStoreTime))
	h(protocol.ReqHeartBeat, d.handleHeartbeat)
	h(protocol.ReqUnregisterClient, withHeader(d.handleUnregisterClient))
	h(protocol.ReqGetConsumerListByGroup, withHeader(d.handleGetConsumerList))
	h(protocol.ReqLockBatchMQ, d.handleLockBatch)
	h(protocol.ReqUnlockBatchMQ, d.handleUnlockBatch)
	h(protocol.ReqUpdateAndCreateTopic, withHeader(d.handleCreateTopic))
	h(protocol.ReqDeleteTopicInBroker, withHeader(d.handleDeleteTopic))
	h(protocol.ReqGetAllTopicConfig, d.handleGetAllTopicConfig)
	h(protocol.ReqGetTopicStatsInfo, withHeader(d.handleTopicStats))
	h(protocol.ReqGetConsumeStats, withHeader(d.handleConsumeStats))
	h(protocol.ReqGetBrokerRuntimeInfo, d.handleRuntimeInfo)
	h(protocol.ReqViewMessageByID, withHeader(d.handleViewMessage))
	h(protocol.ReqQueryMessage, withHeader(d.handleQueryMessage))
	h(protocol.ReqConsumerSendMsgBack, withHeader(d.handleConsumerSendMsgBack))
	h(protocol.ReqEndTransaction, withHeader(d.handleEndTransaction))
	h(protocol.ReqGetAllSubscriptionGroupConfig, d.handleGetAllSubscriptionGroups)
	h(protocol.ReqUpdateAndCreateSubscriptionGroup, d.handleUpdateGroup)
	h(protocol.ReqUpdateBrokerConfig, d.handleUpdateBrokerConfig)
	h(protocol.ReqGetAllConsumerOffset, d.handleGetAllConsumerOffsets)
	h(protocol.ReqQueryTopicConsumeByWho, d.handleTopicConsumeByWho)
	h(protocol.ReqInvokeBrokerToResetOffset, withHeader(d.handleResetOffset))
	h(protocol.ReqGetConsumerConnectionList, d.handleConsumerConnections)
	h(protocol.ReqGetProducerConnectionList, d.handleProducerConnections)
	h(protocol.ReqGetTopicConfig, d.handleGetTopicConfig)
	h(protocol.ReqGetBrokerConfig, d.handleGetBrokerConfig)
	h(protocol.ReqGetConsumerRunningInfo, withHeader(d.handleConsumerRunningInfo))
	h(protocol.ReqConsumeMessageDirectly, d.handleConsumeMessageDirectly)
	h(protocol.ReqInvokeBrokerToGetConsumerStatus, d.handleGetConsumerStatus)
	h(protocol.ReqDeleteSubscriptionGroup, withHeader(d.handleDeleteGroup))
	h(protocol.ReqCloneGroupOffset, withHeader(d.handleCloneGroupOffset))
	h(protocol.ReqPopMessage, withHeader(d.handlePop))
	h(protocol.ReqAckMessage, withHeader(d.handleAck))
	h(protocol.ReqBatchAckMessage, d.handleBatchAck)
	h(protocol.ReqChangeMessageInvisibleTime, withHeader(d.handleChangeInvisible))
	h(protocol.ReqNotification, withHeader(d.handleNotification))
	d.registerAuthHandlers()
	d.srv.HandleDefault(d.handleUnsupported)
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

// requiredExt reads field, which a request served without a typed header
// must carry; without it the answer is the SYSTEM_ERROR a header's Decode
// gives for a missing field.
func requiredExt(req *protocol.Command, field string) (string, *protocol.Command) {
	v := req.Ext(field)
	if v == "" {
		return "", errResponse(req, protocol.RespSystemError, "protocol: %s header: %s: missing", protocol.RequestCodeName(req.Code), field)
	}
	return v, nil
}

// errResponse answers req with code and remark.
func errResponse(req *protocol.Command, code int16, format string, args ...any) *protocol.Command {
	return protocol.NewResponse(req, code, fmt.Sprintf(format, args...))
}

// failure answers req with a core refusal's code and remark; any other
// error is a SYSTEM_ERROR with its text.
func failure(req *protocol.Command, err error) *protocol.Command {
	code, remark := codeOf(err)
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
	return answerWith(req, nil, nil, err)
}

// answerWith answers req SUCCESS with ext and body, or with err's refusal
// (an *auth.Error, a core refusal: failure).
func answerWith(req *protocol.Command, ext map[string]string, body []byte, err error) *protocol.Command {
	if err != nil {
		return failure(req, err)
	}
	return success(req, ext, body)
}

// handleUnsupported answers codes the broker does not serve.
func (d *Door) handleUnsupported(_ context.Context, c *remoting.Conn, req *protocol.Command) *protocol.Command {
	d.log.Debug("broker: request code not supported", "code", req.Code, "remote", c.RemoteAddr())
	return errResponse(req, protocol.RespRequestCodeNotSupported,
		"request code %d (%s) not supported by this broker", req.Code, protocol.RequestCodeName(req.Code))
}
