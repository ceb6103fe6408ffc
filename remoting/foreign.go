package remoting

import (
	"encoding/binary"
	"fmt"
)

// Connections that open with something other than a RocketMQ frame are
// closed (Conn.protocolError). Two of them are common enough to be named
// for what they are: a gRPC client — a RocketMQ 5 SDK pointed at the
// remoting port instead of the gRPC endpoint — opens with HTTP/2's client
// preface, and the same SDKs (and a remoting client with TLS on) open with
// a TLS ClientHello, which reaches the frame reader only where
// tls.server.mode is disabled. The server logs such a connection once, as
// what it is, with ServerConfig.GRPCAddrHint when there is one; an HTTP/2
// client is also told in HTTP/2 (a SETTINGS frame, the server preface, then
// GOAWAY carrying the same words as debug data), so that its error says
// why instead of waiting for a timeout.

// foreignKind is what a connection that is not RocketMQ opened with.
type foreignKind int

const (
	foreignUnknown foreignKind = iota
	foreignHTTP2               // HTTP/2's client preface: a gRPC client
	foreignTLS                 // a TLS handshake record
)

// http2Preface is the first thing an HTTP/2 client sends (RFC 9113 3.4).
const http2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// classifyForeign tells what first, a connection's first bytes (at least
// the four of a frame's length field, whose value was refused), opened
// with.
func classifyForeign(first []byte) foreignKind {
	n := min(len(first), len(http2Preface))
	switch {
	case n >= 4 && string(first[:n]) == http2Preface[:n]:
		return foreignHTTP2
	case len(first) >= 2 && first[0] == tlsHandshakeByte && first[1] == 3:
		// A handshake record of TLS 1.x (record version 3.x).
		return foreignTLS
	}
	return foreignUnknown
}

// foreignText says in a user's words what a server saw: who connected
// (remote), with what, and where a RocketMQ 5 SDK belongs.
func foreignText(kind foreignKind, remote, grpcHint string) string {
	where := "this server has no gRPC endpoint; RocketMQ 5 SDKs need one (a RocketMQ 5 proxy), remoting clients (rocketmq-client 4.x/5.x, rocketmq-client-go) connect here"
	if grpcHint != "" {
		where = "RocketMQ 5 SDKs connect to the gRPC endpoint at " + grpcHint
	}
	switch kind {
	case foreignHTTP2:
		return fmt.Sprintf("remoting: %s opened an HTTP/2 connection (a gRPC client, such as a RocketMQ 5 SDK) to this RocketMQ remoting port: %s", remote, where)
	case foreignTLS:
		return fmt.Sprintf("remoting: %s started a TLS handshake, but this server's tls.server.mode is disabled (a RocketMQ 5 SDK, which uses TLS by default? %s)", remote, where)
	}
	return ""
}

// HTTP/2 frame types and error codes (RFC 9113 6, 7).
const (
	http2FrameSettings      = 0x4
	http2FrameGoAway        = 0x7
	http2ErrProtocolError   = 0x1
	http2FrameHeaderLen     = 9
	http2GoAwayFixedPayload = 8 // last stream id, error code
)

// http2Refusal is a server's answer to an HTTP/2 client it will not serve:
// an empty SETTINGS frame (the server preface every HTTP/2 server sends
// first) and a GOAWAY with no stream processed, PROTOCOL_ERROR, and debug
// as its debug data, which gRPC clients show in their error.
func http2Refusal(debug string) []byte {
	frame := func(b []byte, typ byte, payload []byte) []byte {
		n := len(payload)
		b = append(b, byte(n>>16), byte(n>>8), byte(n), typ, 0)
		b = binary.BigEndian.AppendUint32(b, 0) // stream 0: the connection
		return append(b, payload...)
	}
	goAway := binary.BigEndian.AppendUint32(nil, 0) // last stream id
	goAway = binary.BigEndian.AppendUint32(goAway, http2ErrProtocolError)
	goAway = append(goAway, debug...)
	b := make([]byte, 0, 2*http2FrameHeaderLen+len(goAway))
	b = frame(b, http2FrameSettings, nil)
	return frame(b, http2FrameGoAway, goAway)
}

// refuseHTTP2 writes http2Refusal(debug) to a connection that has carried
// no RocketMQ frame, so nothing else writes to it; a failure only means
// the client will not read why.
func (c *Conn) refuseHTTP2(debug string) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.wmu.err != nil || c.wmu.flushing {
		return
	}
	if err := c.write([][]byte{http2Refusal(debug)}); err != nil {
		c.log.Debug("remoting: HTTP/2 refusal not sent", "err", err)
	}
}
