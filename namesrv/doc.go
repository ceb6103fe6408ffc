// Package namesrv is Runnel's name server: it serves RocketMQ's name server
// requests over package remoting, keeping state in a routeinfo.Table.
//
// Brokers register (REGISTER_BROKER, every 30 s in RocketMQ), may send
// BROKER_HEARTBEAT or QUERY_DATA_VERSION in between, and unregister
// (UNREGISTER_BROKER); clients and tools read routes
// (GET_ROUTEINFO_BY_TOPIC, answered TOPIC_NOT_EXIST for an unknown topic),
// cluster info (GET_BROKER_CLUSTER_INFO) and topic lists
// (GET_ALL_TOPIC_LIST_FROM_NAMESERVER, GET_TOPICS_BY_CLUSTER), and delete
// topics (DELETE_TOPIC_IN_NAMESRV). Bodies are compact standard JSON; route
// bodies always carry brokerAddrs, which the official Go client parses by
// hand. A broker leaves
// the table when it unregisters, when its connection closes, or when it has
// been silent for its expiry (120 s by default), checked every scan interval.
//
// Invariants: the server remembers which connection each registration came
// over, so closing a connection drops exactly the brokers whose latest
// registration used it; every request gets an answer (bad input is answered
// with SYSTEM_ERROR and a remark, unknown codes with
// REQUEST_CODE_NOT_SUPPORTED); the only goroutines it owns are the
// transport's and the expiry scanner, all stopped by Close.
package namesrv
