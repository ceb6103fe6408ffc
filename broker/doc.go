// Package broker is Runnel's RocketMQ broker process: it owns the core
// (broker/core) over its store, the front doors that adapt the protocols
// clients speak onto the core, and the registration with the name
// servers, and it starts and stops them in one documented order.
//
// What lives where (docs/architecture.md draws it):
//   - broker (this package): the process. broker.go (New, Start, Close and
//     the shutdown order), door.go (the Door interface every way in
//     implements), process.go (what the doors ask of the process: its
//     configuration and runtime figures; the registration's view of the
//     broker), runtime_config.go (updateBrokerConfig), replicated.go (a
//     replicated group's node: the raft node as the core's backend, the
//     role it plays), exporter.go (metrics).
//   - broker/config: Config, broker.conf keys, the runtime config file.
//   - broker/registration: REGISTER_BROKER and UNREGISTER_BROKER.
//   - broker/remotingdoor: the RocketMQ remoting door, every broker's first.
//   - broker/replica: the raft group and the core's backend over it.
//   - broker/core and its tables: the behaviour, in the core's own types.
//
// Adding a door: implement Door over *core.Core (its calls, its Channel
// for connected clients, its Reasons mapped to the protocol's codes) and
// AddDoor it before Start; no other door changes.
//
// Invariants:
//   - every door serves the same core: a message sent through one is
//     received through any other, and a send through one wakes the
//     requests held at another;
//   - Close runs in a fixed order (Broker.Close): doors stop accepting,
//     the core drains (held requests answered while connections are
//     open), the name servers are told, doors close, the store closes
//     last.
package broker
