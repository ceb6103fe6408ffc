// Package protocol owns RocketMQ's remoting wire format: the frame, the
// JSON and binary (ROCKETMQ) command headers, request and response codes,
// typed extFields headers, and the stored-message codec shared by the broker
// and the client.
//
// Frame layout (all integers big-endian):
//
//	+--------+----------------------------+-----------+------+
//	| length | serializeType<<24|headerLen|  header   | body |
//	| int32  | int32                      | headerLen | rest |
//	+--------+----------------------------+-----------+------+
//
// length counts everything after itself: 4 + headerLen + len(body).
//
// Invariants: a decoded Command never refers to more bytes than the frame it
// came from; no length field is trusted before it is checked against the
// bytes actually present, so a hostile frame cannot make the decoder
// allocate more than the frame's own size.
//
// This package imports no network code.
package protocol
