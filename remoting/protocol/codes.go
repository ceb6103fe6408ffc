package protocol

import "strconv"

// Request codes (RocketMQ RequestCode). Names follow the Java constants;
// where the official Go client uses another name, an alias is given.
const (
	ReqSendMessage                      int16 = 10
	ReqPullMessage                      int16 = 11
	ReqQueryMessage                     int16 = 12
	ReqQueryBrokerOffset                int16 = 13
	ReqQueryConsumerOffset              int16 = 14
	ReqUpdateConsumerOffset             int16 = 15
	ReqUpdateAndCreateTopic             int16 = 17
	ReqUpdateAndCreateTopicList         int16 = 18
	ReqGetAllTopicConfig                int16 = 21
	ReqGetTopicConfigList               int16 = 22
	ReqGetTopicNameList                 int16 = 23
	ReqUpdateBrokerConfig               int16 = 25
	ReqGetBrokerConfig                  int16 = 26
	ReqTriggerDeleteFiles               int16 = 27
	ReqGetBrokerRuntimeInfo             int16 = 28
	ReqSearchOffsetByTimestamp          int16 = 29
	ReqGetMaxOffset                     int16 = 30
	ReqGetMinOffset                     int16 = 31
	ReqGetEarliestMsgStoreTime          int16 = 32
	ReqViewMessageByID                  int16 = 33
	ReqHeartBeat                        int16 = 34
	ReqUnregisterClient                 int16 = 35
	ReqConsumerSendMsgBack              int16 = 36
	ReqEndTransaction                   int16 = 37
	ReqGetConsumerListByGroup           int16 = 38
	ReqCheckTransactionState            int16 = 39
	ReqNotifyConsumerIDsChanged         int16 = 40
	ReqLockBatchMQ                      int16 = 41
	ReqUnlockBatchMQ                    int16 = 42
	ReqGetAllConsumerOffset             int16 = 43
	ReqGetAllDelayOffset                int16 = 45
	ReqCheckClientConfig                int16 = 46
	ReqGetClientConfig                  int16 = 47
	ReqUpdateAndCreateACLConfig         int16 = 50
	ReqDeleteACLConfig                  int16 = 51
	ReqGetBrokerClusterACLInfo          int16 = 52
	ReqUpdateGlobalWhiteAddrsConfig     int16 = 53
	ReqGetBrokerClusterACLConfig        int16 = 54
	ReqGetTimerCheckPoint               int16 = 60
	ReqGetTimerMetrics                  int16 = 61
	ReqPutKVConfig                      int16 = 100
	ReqGetKVConfig                      int16 = 101
	ReqDeleteKVConfig                   int16 = 102
	ReqRegisterBroker                   int16 = 103
	ReqUnregisterBroker                 int16 = 104
	ReqGetRouteInfoByTopic              int16 = 105
	ReqGetBrokerClusterInfo             int16 = 106
	ReqUpdateAndCreateSubscriptionGroup int16 = 200
	ReqGetAllSubscriptionGroupConfig    int16 = 201
	ReqGetTopicStatsInfo                int16 = 202
	ReqGetConsumerConnectionList        int16 = 203
	ReqGetProducerConnectionList        int16 = 204
	ReqWipeWritePermOfBroker            int16 = 205
	ReqGetAllTopicListFromNameServer    int16 = 206
	ReqDeleteSubscriptionGroup          int16 = 207
	ReqGetConsumeStats                  int16 = 208
	ReqSuspendConsumer                  int16 = 209
	ReqResumeConsumer                   int16 = 210
	ReqResetConsumerOffsetInConsumer    int16 = 211
	ReqResetConsumerOffsetInBroker      int16 = 212
	ReqAdjustConsumerThreadPool         int16 = 213
	ReqWhoConsumeTheMessage             int16 = 214
	ReqDeleteTopicInBroker              int16 = 215
	ReqDeleteTopicInNameSrv             int16 = 216
	ReqRegisterTopicInNameSrv           int16 = 217
	ReqGetKVListByNamespace             int16 = 219
	ReqResetConsumerClientOffset        int16 = 220
	ReqGetConsumerStatusFromClient      int16 = 221
	ReqInvokeBrokerToResetOffset        int16 = 222
	ReqInvokeBrokerToGetConsumerStatus  int16 = 223
	ReqGetTopicsByCluster               int16 = 224
	ReqUpdateAndCreateSubGroupList      int16 = 225
	ReqQueryTopicConsumeByWho           int16 = 300
	ReqRegisterFilterServer             int16 = 301
	ReqRegisterMessageFilterClass       int16 = 302
	ReqQueryConsumeTimeSpan             int16 = 303
	ReqGetSystemTopicListFromNS         int16 = 304
	ReqGetSystemTopicListFromBroker     int16 = 305
	ReqCleanExpiredConsumeQueue         int16 = 306
	ReqGetConsumerRunningInfo           int16 = 307
	ReqQueryCorrectionOffset            int16 = 308
	ReqConsumeMessageDirectly           int16 = 309
	ReqSendMessageV2                    int16 = 310
	ReqGetUnitTopicList                 int16 = 311
	ReqGetHasUnitSubTopicList           int16 = 312
	ReqGetHasUnitSubUnUnitTopicList     int16 = 313
	ReqCloneGroupOffset                 int16 = 314
	ReqViewBrokerStatsData              int16 = 315
	ReqCleanUnusedTopic                 int16 = 316
	ReqGetBrokerConsumeStats            int16 = 317
	ReqUpdateNamesrvConfig              int16 = 318
	ReqGetNamesrvConfig                 int16 = 319
	ReqSendBatchMessage                 int16 = 320
	ReqQueryConsumeQueue                int16 = 321
	ReqQueryDataVersion                 int16 = 322
	ReqResumeCheckHalfMessage           int16 = 323
	ReqSendReplyMessage                 int16 = 324
	ReqSendReplyMessageV2               int16 = 325
	ReqPushReplyMessageToClient         int16 = 326
	ReqAddWritePermOfBroker             int16 = 327
	ReqGetAllProducerInfo               int16 = 328
	ReqDeleteExpiredCommitLog           int16 = 329
	ReqQueryTopicsByConsumer            int16 = 343
	ReqQuerySubscriptionByConsumer      int16 = 345
	ReqGetTopicConfig                   int16 = 351
	ReqGetSubscriptionGroupConfig       int16 = 352
	ReqUpdateAndGetGroupForbidden       int16 = 353
	ReqCheckRocksdbCqWriteProgress      int16 = 354
	ReqLitePullMessage                  int16 = 361
	ReqRecallMessage                    int16 = 370
	ReqQueryAssignment                  int16 = 400
	ReqSetMessageRequestMode            int16 = 401
	ReqGetAllMessageRequestMode         int16 = 402
	ReqUpdateAndCreateStaticTopic       int16 = 513
	ReqGetBrokerMemberGroup             int16 = 901
	ReqAddBroker                        int16 = 902
	ReqRemoveBroker                     int16 = 903
	ReqBrokerHeartbeat                  int16 = 904
	ReqNotifyMinBrokerIDChange          int16 = 905
	ReqExchangeBrokerHAInfo             int16 = 906
	ReqGetBrokerHAStatus                int16 = 907
	ReqResetMasterFlushOffset           int16 = 908
	ReqAuthCreateUser                   int16 = 3001
	ReqAuthUpdateUser                   int16 = 3002
	ReqAuthDeleteUser                   int16 = 3003
	ReqAuthGetUser                      int16 = 3004
	ReqAuthListUser                     int16 = 3005
	ReqAuthCreateACL                    int16 = 3006
	ReqAuthUpdateACL                    int16 = 3007
	ReqAuthDeleteACL                    int16 = 3008
	ReqAuthGetACL                       int16 = 3009
	ReqAuthListACL                      int16 = 3010
	ReqPopMessage                       int16 = 3442
	ReqAckMessage                       int16 = 3443
	ReqPeekMessage                      int16 = 3444
	ReqChangeMessageInvisibleTime       int16 = 3445
	ReqNotification                     int16 = 3446
	ReqPollingInfo                      int16 = 3447
	ReqBatchAckMessage                  int16 = 3543
)

// Aliases under the official Go client's names (internal/request.go).
const (
	ReqCreateTopic                = ReqUpdateAndCreateTopic
	ReqResetConsumerOffset        = ReqResetConsumerClientOffset
	ReqGetConsumerStatsFromClient = ReqGetConsumerStatusFromClient
)

// Response codes (RocketMQ ResponseCode and RemotingSysResponseCode).
const (
	RespSuccess                    int16 = 0
	RespSystemError                int16 = 1
	RespSystemBusy                 int16 = 2
	RespRequestCodeNotSupported    int16 = 3
	RespTransactionFailed          int16 = 4
	RespFlushDiskTimeout           int16 = 10
	RespSlaveNotAvailable          int16 = 11
	RespFlushSlaveTimeout          int16 = 12
	RespMessageIllegal             int16 = 13
	RespServiceNotAvailable        int16 = 14
	RespVersionNotSupported        int16 = 15
	RespNoPermission               int16 = 16
	RespTopicNotExist              int16 = 17
	RespTopicExistAlready          int16 = 18
	RespPullNotFound               int16 = 19
	RespPullRetryImmediately       int16 = 20
	RespPullOffsetMoved            int16 = 21
	RespQueryNotFound              int16 = 22
	RespSubscriptionParseFailed    int16 = 23
	RespSubscriptionNotExist       int16 = 24
	RespSubscriptionNotLatest      int16 = 25
	RespSubscriptionGroupNotExist  int16 = 26
	RespFilterDataNotExist         int16 = 27
	RespFilterDataNotLatest        int16 = 28
	RespInvalidParameter           int16 = 29
	RespTransactionShouldCommit    int16 = 200
	RespTransactionShouldRollback  int16 = 201
	RespTransactionStateUnknown    int16 = 202
	RespTransactionStateGroupWrong int16 = 203
	RespNoBuyerID                  int16 = 204
	RespNotInCurrentUnit           int16 = 205
	RespConsumerNotOnline          int16 = 206
	RespConsumeMsgTimeout          int16 = 207
	RespNoMessage                  int16 = 208
	RespPollingFull                int16 = 209
	RespPollingTimeout             int16 = 210
	RespBrokerNotExist             int16 = 211
	RespBrokerDispatchNotComplete  int16 = 212
	RespBroadcastConsumption       int16 = 213
	RespFlowControl                int16 = 215
	RespNotLeaderForQueue          int16 = 501
	RespIllegalOperation           int16 = 604
	RespRPCUnknown                 int16 = -1000
	RespRPCAddrIsNull              int16 = -1002
	RespRPCSendToChannelFailed     int16 = -1004
	RespRPCTimeout                 int16 = -1006
	RespGoAway                     int16 = 1500
	RespUserNotExist               int16 = 3001
	RespPolicyNotExist             int16 = 3002
)

// requestCodeNames holds the Java constant name of each request code, for
// logs and error messages (one table: its rows look alike).
var requestCodeNames = map[int16]string{
	10: "SEND_MESSAGE", 11: "PULL_MESSAGE", 12: "QUERY_MESSAGE", 13: "QUERY_BROKER_OFFSET",
	14: "QUERY_CONSUMER_OFFSET", 15: "UPDATE_CONSUMER_OFFSET", 17: "UPDATE_AND_CREATE_TOPIC",
	18: "UPDATE_AND_CREATE_TOPIC_LIST", 21: "GET_ALL_TOPIC_CONFIG", 22: "GET_TOPIC_CONFIG_LIST",
	23: "GET_TOPIC_NAME_LIST", 25: "UPDATE_BROKER_CONFIG", 26: "GET_BROKER_CONFIG",
	27: "TRIGGER_DELETE_FILES", 28: "GET_BROKER_RUNTIME_INFO", 29: "SEARCH_OFFSET_BY_TIMESTAMP",
	30: "GET_MAX_OFFSET", 31: "GET_MIN_OFFSET", 32: "GET_EARLIEST_MSG_STORETIME",
	33: "VIEW_MESSAGE_BY_ID", 34: "HEART_BEAT", 35: "UNREGISTER_CLIENT", 36: "CONSUMER_SEND_MSG_BACK",
	37: "END_TRANSACTION", 38: "GET_CONSUMER_LIST_BY_GROUP", 39: "CHECK_TRANSACTION_STATE",
	40: "NOTIFY_CONSUMER_IDS_CHANGED", 41: "LOCK_BATCH_MQ", 42: "UNLOCK_BATCH_MQ",
	43: "GET_ALL_CONSUMER_OFFSET", 45: "GET_ALL_DELAY_OFFSET", 46: "CHECK_CLIENT_CONFIG",
	47: "GET_CLIENT_CONFIG", 50: "UPDATE_AND_CREATE_ACL_CONFIG", 51: "DELETE_ACL_CONFIG",
	52: "GET_BROKER_CLUSTER_ACL_INFO", 53: "UPDATE_GLOBAL_WHITE_ADDRS_CONFIG",
	54: "GET_BROKER_CLUSTER_ACL_CONFIG", 60: "GET_TIMER_CHECK_POINT", 61: "GET_TIMER_METRICS",
	100: "PUT_KV_CONFIG", 101: "GET_KV_CONFIG", 102: "DELETE_KV_CONFIG", 103: "REGISTER_BROKER",
	104: "UNREGISTER_BROKER", 105: "GET_ROUTEINFO_BY_TOPIC", 106: "GET_BROKER_CLUSTER_INFO",
	200: "UPDATE_AND_CREATE_SUBSCRIPTIONGROUP", 201: "GET_ALL_SUBSCRIPTIONGROUP_CONFIG",
	202: "GET_TOPIC_STATS_INFO", 203: "GET_CONSUMER_CONNECTION_LIST", 204: "GET_PRODUCER_CONNECTION_LIST",
	205: "WIPE_WRITE_PERM_OF_BROKER", 206: "GET_ALL_TOPIC_LIST_FROM_NAMESERVER",
	207: "DELETE_SUBSCRIPTIONGROUP", 208: "GET_CONSUME_STATS", 209: "SUSPEND_CONSUMER",
	210: "RESUME_CONSUMER", 211: "RESET_CONSUMER_OFFSET_IN_CONSUMER", 212: "RESET_CONSUMER_OFFSET_IN_BROKER",
	213: "ADJUST_CONSUMER_THREAD_POOL", 214: "WHO_CONSUME_THE_MESSAGE", 215: "DELETE_TOPIC_IN_BROKER",
	216: "DELETE_TOPIC_IN_NAMESRV", 217: "REGISTER_TOPIC_IN_NAMESRV", 219: "GET_KVLIST_BY_NAMESPACE",
	220: "RESET_CONSUMER_CLIENT_OFFSET", 221: "GET_CONSUMER_STATUS_FROM_CLIENT",
	222: "INVOKE_BROKER_TO_RESET_OFFSET", 223: "INVOKE_BROKER_TO_GET_CONSUMER_STATUS",
	224: "GET_TOPICS_BY_CLUSTER", 225: "UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST",
	300: "QUERY_TOPIC_CONSUME_BY_WHO", 301: "REGISTER_FILTER_SERVER", 302: "REGISTER_MESSAGE_FILTER_CLASS",
	303: "QUERY_CONSUME_TIME_SPAN", 304: "GET_SYSTEM_TOPIC_LIST_FROM_NS",
	305: "GET_SYSTEM_TOPIC_LIST_FROM_BROKER", 306: "CLEAN_EXPIRED_CONSUMEQUEUE",
	307: "GET_CONSUMER_RUNNING_INFO", 308: "QUERY_CORRECTION_OFFSET", 309: "CONSUME_MESSAGE_DIRECTLY",
	310: "SEND_MESSAGE_V2", 311: "GET_UNIT_TOPIC_LIST", 312: "GET_HAS_UNIT_SUB_TOPIC_LIST",
	313: "GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST", 314: "CLONE_GROUP_OFFSET", 315: "VIEW_BROKER_STATS_DATA",
	316: "CLEAN_UNUSED_TOPIC", 317: "GET_BROKER_CONSUME_STATS", 318: "UPDATE_NAMESRV_CONFIG",
	319: "GET_NAMESRV_CONFIG", 320: "SEND_BATCH_MESSAGE", 321: "QUERY_CONSUME_QUEUE",
	322: "QUERY_DATA_VERSION", 323: "RESUME_CHECK_HALF_MESSAGE", 324: "SEND_REPLY_MESSAGE",
	325: "SEND_REPLY_MESSAGE_V2", 326: "PUSH_REPLY_MESSAGE_TO_CLIENT", 327: "ADD_WRITE_PERM_OF_BROKER",
	328: "GET_ALL_PRODUCER_INFO", 329: "DELETE_EXPIRED_COMMITLOG", 343: "QUERY_TOPICS_BY_CONSUMER",
	345: "QUERY_SUBSCRIPTION_BY_CONSUMER", 351: "GET_TOPIC_CONFIG", 352: "GET_SUBSCRIPTIONGROUP_CONFIG",
	353: "UPDATE_AND_GET_GROUP_FORBIDDEN", 354: "CHECK_ROCKSDB_CQ_WRITE_PROGRESS",
	361: "LITE_PULL_MESSAGE", 370: "RECALL_MESSAGE", 400: "QUERY_ASSIGNMENT", 401: "SET_MESSAGE_REQUEST_MODE",
	402: "GET_ALL_MESSAGE_REQUEST_MODE", 513: "UPDATE_AND_CREATE_STATIC_TOPIC",
	901: "GET_BROKER_MEMBER_GROUP", 902: "ADD_BROKER", 903: "REMOVE_BROKER", 904: "BROKER_HEARTBEAT",
	905: "NOTIFY_MIN_BROKER_ID_CHANGE", 906: "EXCHANGE_BROKER_HA_INFO", 907: "GET_BROKER_HA_STATUS",
	908: "RESET_MASTER_FLUSH_OFFSET", 3001: "AUTH_CREATE_USER", 3002: "AUTH_UPDATE_USER",
	3003: "AUTH_DELETE_USER", 3004: "AUTH_GET_USER", 3005: "AUTH_LIST_USER", 3006: "AUTH_CREATE_ACL",
	3007: "AUTH_UPDATE_ACL", 3008: "AUTH_DELETE_ACL", 3009: "AUTH_GET_ACL", 3010: "AUTH_LIST_ACL",
	3442: "POP_MESSAGE", 3443: "ACK_MESSAGE", 3444: "PEEK_MESSAGE",
	3445: "CHANGE_MESSAGE_INVISIBLETIME", 3446: "NOTIFICATION", 3447: "POLLING_INFO",
	3543: "BATCH_ACK_MESSAGE",
}

// ResponseCode describes one response code: RocketMQ's name for it, what
// it means to a client, and whether a client may retry the request as it
// is (on another broker, or later) with a chance of success. It is the one
// table of what a code means: the broker's remoting door answers with
// these codes, and our client and admin client read them through it, as
// franz-go's kerr is for Kafka's error codes.
type ResponseCode struct {
	Code    int16
	Name    string
	Meaning string
	// Retriable codes are the ones Java's producer retries a send on
	// (DefaultMQProducer.retryResponseCodes): the broker, not the request,
	// was the problem.
	Retriable bool
}

// responseCodes is the table, by code.
var responseCodes = map[int16]ResponseCode{}

func init() {
	for _, c := range []ResponseCode{
		{RespSuccess, "SUCCESS", "the request succeeded", false},
		{RespSystemError, "SYSTEM_ERROR", "the server failed or refused the request; the remark says why", true},
		{RespSystemBusy, "SYSTEM_BUSY", "the server is overloaded; try again later", false},
		{RespRequestCodeNotSupported, "REQUEST_CODE_NOT_SUPPORTED", "the server does not implement this request", false},
		{RespTransactionFailed, "TRANSACTION_FAILED", "the transaction could not be ended", false},
		{RespFlushDiskTimeout, "FLUSH_DISK_TIMEOUT", "stored, but not flushed to disk in time", false},
		{RespSlaveNotAvailable, "SLAVE_NOT_AVAILABLE", "stored on the master; no slave to replicate to", false},
		{RespFlushSlaveTimeout, "FLUSH_SLAVE_TIMEOUT", "stored on the master; the slave did not confirm in time", false},
		{RespMessageIllegal, "MESSAGE_ILLEGAL", "the message is not valid (too large, bad properties, a kind this request cannot carry)", false},
		{RespServiceNotAvailable, "SERVICE_NOT_AVAILABLE", "the broker takes no writes now (a full disk, shutting down, or a slave)", true},
		{RespVersionNotSupported, "VERSION_NOT_SUPPORTED", "the client's version is not supported", false},
		{RespNoPermission, "NO_PERMISSION", "the topic's, group's or broker's permission, or access control, refuses it", true},
		{RespTopicNotExist, "TOPIC_NOT_EXIST", "the topic does not exist on this broker", true},
		{RespTopicExistAlready, "TOPIC_EXIST_ALREADY", "the topic exists already", false},
		{RespPullNotFound, "PULL_NOT_FOUND", "no new message at the offset yet", false},
		{RespPullRetryImmediately, "PULL_RETRY_IMMEDIATELY", "pull again now, from the offset the answer gives", false},
		{RespPullOffsetMoved, "PULL_OFFSET_MOVED", "the offset is outside the queue; resume from the offset the answer gives", false},
		{RespQueryNotFound, "QUERY_NOT_FOUND", "the query found nothing", false},
		{RespSubscriptionParseFailed, "SUBSCRIPTION_PARSE_FAILED", "the subscription expression does not parse", false},
		{RespSubscriptionNotExist, "SUBSCRIPTION_NOT_EXIST", "the broker holds no such subscription: send a heartbeat first", false},
		{RespSubscriptionNotLatest, "SUBSCRIPTION_NOT_LATEST", "the subscription is older than the one the broker holds", false},
		{RespSubscriptionGroupNotExist, "SUBSCRIPTION_GROUP_NOT_EXIST", "the consumer group does not exist", false},
		{RespFilterDataNotExist, "FILTER_DATA_NOT_EXIST", "the broker holds no compiled filter for the subscription", false},
		{RespFilterDataNotLatest, "FILTER_DATA_NOT_LATEST", "the compiled filter is older than the subscription", false},
		{RespInvalidParameter, "INVALID_PARAMETER", "a value in the request is out of its range", false},
		{RespTransactionShouldCommit, "TRANSACTION_SHOULD_COMMIT", "commit the transaction", false},
		{RespTransactionShouldRollback, "TRANSACTION_SHOULD_ROLLBACK", "roll the transaction back", false},
		{RespTransactionStateUnknown, "TRANSACTION_STATE_UNKNOW", "the transaction's state is unknown", false},
		{RespTransactionStateGroupWrong, "TRANSACTION_STATE_GROUP_WRONG", "the producer group does not own the transaction", false},
		{RespNoBuyerID, "NO_BUYER_ID", "a unit message without a buyer id", true},
		{RespNotInCurrentUnit, "NOT_IN_CURRENT_UNIT", "the message is not for this unit", true},
		{RespConsumerNotOnline, "CONSUMER_NOT_ONLINE", "the consumer group, or the client asked for, is not connected", false},
		{RespConsumeMsgTimeout, "CONSUME_MSG_TIMEOUT", "the consumer did not answer in time", false},
		{RespNoMessage, "NO_MESSAGE", "no message", false},
		{RespPollingFull, "POLLING_FULL", "too many requests are held", false},
		{RespPollingTimeout, "POLLING_TIMEOUT", "the held request timed out", false},
		{RespBrokerNotExist, "BROKER_NOT_EXIST", "no such broker", false},
		{RespBrokerDispatchNotComplete, "BROKER_DISPATCH_NOT_COMPLETE", "the broker has not indexed the messages yet", false},
		{RespBroadcastConsumption, "BROADCAST_CONSUMPTION", "the group consumes by broadcast", false},
		{RespFlowControl, "FLOW_CONTROL", "the broker is limiting this client", false},
		{RespNotLeaderForQueue, "NOT_LEADER_FOR_QUEUE", "this broker does not lead the queue", false},
		{RespIllegalOperation, "ILLEGAL_OPERATION", "the operation is not allowed", false},
		{RespRPCUnknown, "RPC_UNKNOWN", "an unknown RPC failure", false},
		{RespRPCAddrIsNull, "RPC_ADDR_IS_NULL", "no address to send to", false},
		{RespRPCSendToChannelFailed, "RPC_SEND_TO_CHANNEL_FAILED", "the request could not be sent", false},
		{RespRPCTimeout, "RPC_TIME_OUT", "the request timed out", false},
		{RespGoAway, "GO_AWAY", "the server is going away", false},
		{RespUserNotExist, "USER_NOT_EXIST", "no such ACL user", false},
		{RespPolicyNotExist, "POLICY_NOT_EXIST", "no such ACL policy", false},
	} {
		responseCodes[c.Code] = c
	}
}

// ResponseCodeOf returns what code means; an unknown code is named
// "CODE_<n>" and is not retriable.
func ResponseCodeOf(code int16) ResponseCode {
	if c, ok := responseCodes[code]; ok {
		return c
	}
	return ResponseCode{Code: code, Name: "CODE_" + strconv.Itoa(int(code)), Meaning: "a response code this client does not know"}
}

// RequestCodeName returns the Java name of a request code, or "CODE_<n>"
// for an unknown one.
func RequestCodeName(code int16) string {
	if n, ok := requestCodeNames[code]; ok {
		return n
	}
	return "CODE_" + strconv.Itoa(int(code))
}

// ResponseCodeName returns the Java name of a response code, or "CODE_<n>"
// for an unknown one.
func ResponseCodeName(code int16) string { return ResponseCodeOf(code).Name }
