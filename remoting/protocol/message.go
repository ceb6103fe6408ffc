package protocol

import "github.com/runnelmq/runnel/message"

// The message model is package message's: the message, its properties and
// sysFlag bits, and the stored record's codec (a PULL body is stored
// records end to end). The wire speaks of messages in every header and
// body, so protocol keeps their names: these are the same types and
// constants, not copies. The codec's functions are called as message's.

// Message is what a producer sends (message.Message).
type Message = message.Message

// MessageExt is a message as stored and delivered (message.MessageExt).
type MessageExt = message.MessageExt

// Property is one name/value pair of a message's properties.
type Property = message.Property

// ErrMessageTooLarge is message.ErrMessageTooLarge: a send whose topic or
// properties the record cannot hold.
var ErrMessageTooLarge = message.ErrMessageTooLarge

// Property names (RocketMQ MessageConst), package message's under the wire
// package's name; like the sysflags and topic.go's perms, aliases, not
// copies.
const (
	PropertyKeys                    = message.PropertyKeys
	PropertyTags                    = message.PropertyTags
	PropertyWaitStoreMsgOK          = message.PropertyWaitStoreMsgOK
	PropertyDelayTimeLevel          = message.PropertyDelayTimeLevel
	PropertyRetryTopic              = message.PropertyRetryTopic
	PropertyRealTopic               = message.PropertyRealTopic
	PropertyRealQueueID             = message.PropertyRealQueueID
	PropertyTransactionPrepared     = message.PropertyTransactionPrepared
	PropertyProducerGroup           = message.PropertyProducerGroup
	PropertyMinOffset               = message.PropertyMinOffset
	PropertyMaxOffset               = message.PropertyMaxOffset
	PropertyBuyerID                 = message.PropertyBuyerID
	PropertyOriginMessageID         = message.PropertyOriginMessageID
	PropertyTransferFlag            = message.PropertyTransferFlag
	PropertyCorrectionFlag          = message.PropertyCorrectionFlag
	PropertyMQ2Flag                 = message.PropertyMQ2Flag
	PropertyReconsumeTime           = message.PropertyReconsumeTime
	PropertyMsgRegion               = message.PropertyMsgRegion
	PropertyTraceSwitch             = message.PropertyTraceSwitch
	PropertyUniqClientMessageIDKey  = message.PropertyUniqClientMessageIDKey
	PropertyMaxReconsumeTimes       = message.PropertyMaxReconsumeTimes
	PropertyConsumeStartTimestamp   = message.PropertyConsumeStartTimestamp
	PropertyTranPreparedQueueOffset = message.PropertyTranPreparedQueueOffset
	PropertyTransactionCheckTimes   = message.PropertyTransactionCheckTimes
	PropertyCheckImmunityTimeInSecs = message.PropertyCheckImmunityTimeInSecs
	PropertyInstanceID              = message.PropertyInstanceID
	PropertyCorrelationID           = message.PropertyCorrelationID
	PropertyMessageReplyToClient    = message.PropertyMessageReplyToClient
	PropertyMessageTTL              = message.PropertyMessageTTL
	PropertyReplyMessageArriveTime  = message.PropertyReplyMessageArriveTime
	PropertyPushReplyTime           = message.PropertyPushReplyTime
	PropertyCluster                 = message.PropertyCluster
	PropertyMessageType             = message.PropertyMessageType
	PropertyShardingKey             = message.PropertyShardingKey
	PropertyTimerDeliverMS          = message.PropertyTimerDeliverMS
	PropertyTimerDelaySec           = message.PropertyTimerDelaySec
	PropertyTransactionID           = message.PropertyTransactionID
	PropertySeparator               = message.PropertySeparator

	KeySeparator = message.KeySeparator
)

// Message sysFlag bits (RocketMQ MessageSysFlag).
const (
	SysFlagCompressed      = message.SysFlagCompressed
	SysFlagMultiTags       = message.SysFlagMultiTags
	SysFlagTransactionMask = message.SysFlagTransactionMask
	SysFlagTransactionNot  = message.SysFlagTransactionNot
	SysFlagTransactionPrep = message.SysFlagTransactionPrep
	SysFlagTransactionComm = message.SysFlagTransactionComm
	SysFlagTransactionRoll = message.SysFlagTransactionRoll
	SysFlagBornHostV6      = message.SysFlagBornHostV6
	SysFlagStoreHostV6     = message.SysFlagStoreHostV6
	SysFlagNeedUnwrap      = message.SysFlagNeedUnwrap
	SysFlagInnerBatch      = message.SysFlagInnerBatch
	SysFlagCompressionMask = message.SysFlagCompressionMask
	SysFlagCompressionLZ4  = message.SysFlagCompressionLZ4
	SysFlagCompressionZSTD = message.SysFlagCompressionZSTD
	SysFlagCompressionZLIB = message.SysFlagCompressionZLIB
)
