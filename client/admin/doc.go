// Package admin is Runnel's administration API: cluster and topic
// management, consumer group progress and offset resets, live consumers
// (their connections, running info, consuming one message directly — the
// brokers forward these to the client), and message lookups, spoken over
// RocketMQ's remoting protocol to name servers and brokers — Runnel's or Apache RocketMQ's (standard request codes, and
// bodies in JSON or in fastjson's integer-key and object-key forms).
//
// It plays the part of Java's DefaultMQAdminExt: name server questions go to
// the first name server that answers (in the configured order), broker
// operations go to each master of the brokers concerned, and an operation
// that touches several brokers stops at the first failure, naming the
// broker and address.
//
// Invariants:
//   - Every call is bounded by Config.CallTimeout unless ctx has an earlier
//     deadline; nothing here retries a broker operation.
//   - Errors carry the operation, the node (name server or broker name and
//     address) and, for an answer that is not SUCCESS, the response code and
//     remark (*ResponseError).
//   - Admin owns one remoting.Client; Close closes it and every connection.
//
// This package imports remoting and remoting/protocol only, never the
// broker, name server or store.
package admin
