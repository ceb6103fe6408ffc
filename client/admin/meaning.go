package admin

import "github.com/runnelmq/runnel/remoting/protocol"

// codeMeanings say in words what the response codes an operator meets
// mean, for tools that show a refusal to a person (the console). The
// names are remoting/protocol's table; the meanings are RocketMQ's, as its
// brokers and name servers use the codes.
var codeMeanings = map[int16]string{
	protocol.RespSystemError:               "the server failed to carry out the request",
	protocol.RespSystemBusy:                "the server is too busy to take the request now; try again",
	protocol.RespRequestCodeNotSupported:   "the server does not implement this request",
	protocol.RespFlushDiskTimeout:          "the message was stored but not flushed to disk in time",
	protocol.RespSlaveNotAvailable:         "the message was stored but no slave is there to copy it",
	protocol.RespFlushSlaveTimeout:         "the message was stored but not copied to a slave in time",
	protocol.RespMessageIllegal:            "the message is not acceptable (too large, or a bad property)",
	protocol.RespServiceNotAvailable:       "the broker does not take writes now (a slave, shutting down, or its disk is full)",
	protocol.RespVersionNotSupported:       "the server does not support this client's version",
	protocol.RespNoPermission:              "access refused: the credentials in use lack the permission, or the topic or group forbids it",
	protocol.RespTopicNotExist:             "no such topic",
	protocol.RespTopicExistAlready:         "the topic exists already",
	protocol.RespPullNotFound:              "no message at that offset",
	protocol.RespPullOffsetMoved:           "the offset is outside the queue",
	protocol.RespQueryNotFound:             "nothing matched the query",
	protocol.RespSubscriptionParseFailed:   "the subscription expression does not parse",
	protocol.RespSubscriptionNotExist:      "the consumer group has no such subscription",
	protocol.RespSubscriptionGroupNotExist: "no such consumer group",
	protocol.RespInvalidParameter:          "a parameter of the request is invalid",
	protocol.RespConsumerNotOnline:         "no client of the consumer group is online",
	protocol.RespConsumeMsgTimeout:         "the client did not finish consuming the message in time",
	protocol.RespNoMessage:                 "no message",
	protocol.RespPollingFull:               "too many requests are waiting on the broker",
	protocol.RespPollingTimeout:            "the wait for a message timed out",
	protocol.RespBrokerNotExist:            "no such broker",
	protocol.RespFlowControl:               "the broker is shedding load; try again",
	protocol.RespNotLeaderForQueue:         "this node does not lead the queue",
	protocol.RespIllegalOperation:          "the operation is not allowed",
	protocol.RespUserNotExist:              "no such user",
	protocol.RespPolicyNotExist:            "no such ACL policy",
}

// CodeMeaning says what a response code means, in words; "" for a code
// without one here (its name, protocol.ResponseCodeName, still says
// something).
func CodeMeaning(code int16) string { return codeMeanings[code] }

// Meaning is CodeMeaning of e's code.
func (e *ResponseError) Meaning() string { return CodeMeaning(e.Code) }
