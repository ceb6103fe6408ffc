// Package grpcdoor is the broker's RocketMQ 5 front door: the gRPC
// apache.rocketmq.v2.MessagingService that every RocketMQ 5 SDK (Java,
// Go, Python, Node.js, C#, C++, Rust) speaks to RocketMQ's proxy,
// adapted onto the broker's core as the Java proxy in local mode adapts
// it onto its broker. The generated server stubs are the official Go
// SDK's (github.com/apache/rocketmq-clients/golang/v5/protocol/v2), so
// the binary holds one copy of the .protos.
//
// The door is thin, as the remoting door is: each RPC decodes its request
// (metadata.go: the caller's client id, language, version, namespace and
// signature), checks access (auth.go), calls the core in its own types
// and encodes the answer; a core refusal (*core.Error) becomes an
// apache.rocketmq.v2.Code and a message in one table, codes.go.
//
// One port serves TLS and plaintext (listen.go): the first byte of a
// connection tells a TLS ClientHello (0x16) from an HTTP/2 preface, since
// the SDKs default to TLS without verifying the server; a certificate is
// generated at start when none is configured.
//
// A client is a session (session.go), made by the Settings it sends on
// its Telemetry stream and kept by its client id: it is the core's
// Channel for that client (transaction checks reach the producer as
// RecoverOrphanedTransactionCommand on the stream), and its Settings say
// what later calls need (a consumer's FIFO flag and max attempts). A
// session whose stream has ended is closed for the core; it is forgotten
// once idle for the channel expiry.
//
// Invariants:
//   - every unary RPC answers with a Status in its response (gRPC errors
//     only for what the proxy answers so: a Telemetry stream without
//     settings), never a panic;
//   - a ReceiveMessage stream ends with a status frame first and a
//     delivery-timestamp frame last; a held receive is answered once, by
//     the core's answer func, or when the core drains;
//   - Close ends every stream and waits for every handler and the
//     door's own loop.
package grpcdoor
