// Package protocol owns RocketMQ's remoting wire format: the frame, the
// JSON and binary (ROCKETMQ) command headers, request and response codes,
// typed extFields headers and bodies. The messages a PULL body carries are
// stored records, whose codec is package message's (the store writes the
// same bytes); protocol names its types under their wire names.
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
