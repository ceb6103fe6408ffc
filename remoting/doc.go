// Package remoting owns the transport under RocketMQ's remoting protocol: a
// server (on cloudwego/netpoll, or the standard library's net as a
// fallback), a client, the opaque -> pending-call table, the handler
// registry and the connection lifecycle. The wire format itself lives in
// remoting/protocol.
//
// Invariants:
//   - Requests on one connection are handled concurrently: every inbound
//     request runs in a goroutine of its own for as long as its handler
//     runs, so a handler that holds a request (a long-polled pull) never
//     delays the others on that connection. A Server takes these goroutines
//     from a pool of parked workers (workers.go), starting a new one when
//     none is parked, so their stacks stay grown between requests.
//   - Requests that arrive together can be served together: a Server with
//     a run handler (HandleRun, run.go) hands the requests of its codes
//     that one read delivered to it as one run, on one worker, and writes
//     their answers with one write; the broker stores such a run of sends
//     with one store write. A lone request, and every other code, is
//     dispatched alone as above. A run's requests are read-time neighbours
//     only: each still passes the interceptors alone and gets its own
//     answer.
//   - Writes to one connection are serialised by Conn and coalesced: while
//     one goroutine is in the write syscall, others append their frames to a
//     buffer that the writing goroutine sends next, in one syscall. A
//     response body of 4 KiB or more (a pull's answer) is not copied into
//     that buffer: it follows its frame's head as a piece of its own in a
//     vectored write, so it must not change after Reply.
//   - Every complete frame already received is dispatched, even when the peer
//     has closed the connection (the official client sends its last offset
//     updates and closes without reading the replies).
//   - A frame over the size limit or with a malformed header closes that
//     connection only, with the reason logged; a stream whose first bytes
//     are not a frame at all (an HTTP peer) fails with ErrNotRocketMQ.
//   - A well-formed request beyond the header limits (ServerConfig's
//     MaxHeaderSize, MaxExtFields) or with a code outside int16 is answered
//     with a RocketMQ code and remark and the connection stays; a header
//     over MaxHeaderSize is dropped as it arrives, not collected.
//   - Every goroutine started here belongs to a Server or a Client and is
//     waited for by its Close. netpoll's global poller goroutines are the only
//     exception: netpoll starts them once per process and never stops them.
//
// Interceptors (ServerConfig.Interceptors, ClientConfig.Interceptors) are
// the seam for ACL, metrics and fault injection: a server's see each
// decoded request before its handler and may refuse it, and see its answer
// and the time it took; a client's see each outgoing request before it is
// written (to sign it) and its outcome. Without any, a request costs what
// it did before the seam.
//
// A handler that answers later takes a Responder (Conn.Defer), the one
// owner of a deferred answer's opaque, oneway flag and single delivery.
// Every write goes through Conn.write, the one place where a panic of the
// transport (netpoll writing to a connection the peer just closed) is
// turned into a failed write.
//
// TLS (ServerConfig.TLSMode, RocketMQ's tls.server.mode; tls.go,
// tls_server.go): disabled serves plain connections only; permissive serves
// TLS and plain connections on one port, told apart by the first byte as
// Java's TlsModeHandler does (0x16 opens a TLS handshake); enforcing closes
// plain ones. netpoll has no TLS of its own, so a TLS connection is
// crypto/tls over the accepted connection (netpoll's net.Conn methods, or
// the std net.Conn) and is read by the std reader loop, while a plain one
// keeps its transport's own path unchanged: only the wait for the first
// byte is added, and only when TLS is on. Serving TLS connections from a
// second, std listener was the alternative; it needs a second port, which
// RocketMQ's clients do not know of. A Client with ClientConfig.TLS
// handshakes at dial time. A round trip over TLS costs the server
// 1.01-1.08x the CPU of a plain one with 1 request in flight, and with 64
// 1.01-1.14x on netpoll and 1.17-1.27x on std (BenchmarkRoundTripTLS's
// srv-cpu-ns/op, two runs on 2 shared cores; its rt/s was too disturbed
// by other load to rank the two).
//
// Opaques are owned by the transport: Invoke sends a shallow copy of the
// request with a fresh opaque, so one Command may be sent concurrently or
// retried; the response is matched by that opaque.
//
// Tests cut the network without sockets through InMemory: a Client whose
// ClientConfig.Dial is InMemory.Dial reaches a Server over net.Pipe, with
// the server's real handlers, interceptors and deferred answers, and Cut
// closes every such connection as a network failure would (inmem.go).
package remoting
