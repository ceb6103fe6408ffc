package message

// systemProperties are the property names RocketMQ reserves for itself
// (Java MessageConst.STRING_HASH_SET): a RocketMQ 5 client may not set
// them as user properties, and they are not shown to it as such.
var systemProperties = map[string]bool{
	PropertyTraceSwitch: true, PropertyMsgRegion: true, PropertyKeys: true, PropertyTags: true,
	PropertyWaitStoreMsgOK: true, PropertyDelayTimeLevel: true, PropertyRetryTopic: true,
	PropertyRealTopic: true, PropertyRealQueueID: true, PropertyTransactionPrepared: true,
	PropertyProducerGroup: true, PropertyMinOffset: true, PropertyMaxOffset: true, PropertyBuyerID: true,
	PropertyOriginMessageID: true, PropertyTransferFlag: true, PropertyCorrectionFlag: true,
	"MQ2_FLAG": true, PropertyReconsumeTime: true, PropertyUniqClientMessageIDKey: true,
	PropertyMaxReconsumeTimes: true, PropertyConsumeStartTimestamp: true,
	"POP_CK": true, "POP_CK_OFFSET": true, "1ST_POP_TIME": true,
	PropertyTranPreparedQueueOffset: true, "DUP_INFO": true, "EXTEND_UNIQ_INFO": true,
	PropertyInstanceID: true, PropertyCorrelationID: true, PropertyMessageReplyToClient: true,
	PropertyMessageTTL: true, PropertyReplyMessageArriveTime: true, PropertyPushReplyTime: true,
	PropertyCluster: true, PropertyMessageType: true, "INNER_MULTI_QUEUE_OFFSET": true,
	"TIMER_DELAY_MS": true, PropertyTimerDelaySec: true, PropertyTimerDeliverMS: true,
	"TIMER_ENQUEUE_MS": true, "TIMER_DEQUEUE_MS": true, "TIMER_ROLL_TIMES": true, "TIMER_OUT_MS": true,
	"TIMER_DEL_UNIQKEY": true, "TIMER_DELAY_LEVEL": true, "__BORNHOST": true, "BORN_TIMESTAMP": true,
	"DLQ_ORIGIN_TOPIC": true, "DLQ_ORIGIN_MESSAGE_ID": true, "__CRC32#": true,
	// Not in Java's set, but the broker's own: a message group and the
	// transaction bookkeeping a client must not forge.
	PropertyShardingKey: true, "__SHARDINGKEY": true, PropertyTransactionCheckTimes: true,
	PropertyCheckImmunityTimeInSecs: true, PropertyTransactionID: true, "TRACE_CONTEXT": true,
}

// IsSystemProperty reports whether name is a property RocketMQ reserves.
func IsSystemProperty(name string) bool { return systemProperties[name] }
