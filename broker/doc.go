// Package broker is Runnel's RocketMQ broker process: the core
// (broker/core) over its store, the remoting front door that adapts
// RocketMQ's wire onto the core, and the registration with the name
// servers.
//
// The front door is thin: each handler decodes a request's header and body
// (handlers.go: withHeader answers a header that does not decode), calls
// the core, and encodes its result; a core refusal becomes a response in
// one place (failure). Files: handlers.go (the code table and the
// response helpers), channel.go (a remoting connection as the core's
// Channel: notifications, transaction checks and forwarded calls as
// RocketMQ requests; answers given later — a held pull, a forwarded
// admin call — go through the connection's Responder, Conn.Defer, which
// owns their opaque, oneway and closed connections), send.go, pull.go, offset.go, heartbeat.go
// (with locks), admin.go, consumer_admin.go, query.go, transaction.go
// (with send-back), groups.go (consumer group configs), register.go
// (name server registration) and register_incr.go (registering only the
// changed topics), config.go and conf.go (Config and RocketMQ
// broker.conf keys), runtime_config.go (UPDATE_BROKER_CONFIG and the
// broker-runtime.conf it keeps), replicated.go and appendbatch.go (a
// replicated group's node: the raft node as the core's backend, roles,
// sends sharing raft entries).
//
// Invariants:
//   - every request gets an answer (or none for oneway requests);
//   - a deferred answer (a held pull, a call forwarded to a consumer)
//     carries its request's opaque, is dropped for a oneway request, and
//     is written at most once;
//   - every topic change is registered with the name servers: at once and
//     before the answer for admin changes, soon after for the rest; a
//     registration carries the changed topics alone unless a name server
//     needs the whole table (the periodic round, a deletion, a
//     writability change, a failed or reconnected name server).
//
// Close runs in a fixed order: the core drains (held pulls answered), the
// registration loop stops, the server closes its connections (waiting for
// handlers), the broker unregisters from the name servers, and the core
// persists offsets and closes the store.
package broker
