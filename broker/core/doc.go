// Package core is the broker's behaviour, below every wire: send (single,
// batch, half), pull with its hold and wake, consumer offsets, heartbeats
// and the consumer registry, orderly locks, retry and dead letters, delay
// levels, transactions, topic and group admin, and queries. Front doors —
// the RocketMQ remoting door (broker/remotingdoor), a gRPC
// MessagingService door, a test's own — call it with typed requests in
// the core's own types and get typed results, or an *Error carrying a
// Reason and a remark (errors.go); each door maps a Reason to its own
// protocol's code in one table. The core imports no remoting package, no
// door and nothing of the network (internal/lint checks it); the shared
// message, topicconf and groupconf types are its own to use.
//
// Connected clients are Channels: the core's calls to them (notifications,
// transaction checks, forwarded admin calls) are typed methods the front
// door implements, and the client table (broker/clients) holds them typed. A call that waits for a client takes a done function
// and holds no goroutine while the client thinks.
//
// The core runs on a Backend (backend.go): the store it reads and the one
// path every mutation takes. A single broker's backend is its store; a
// replicated group's is its raft node, whose writes return once a majority
// holds them. A replicated core is master or slave (role.go): a slave
// refuses writes as a Java slave does and runs none of the loops that
// write.
//
// Files: backend.go (the Backend and the slave's refusal), role.go
// (Promote, Demote, the orderly-lock fence), send.go (Send), sendall.go (SendAll:
// sends that arrived together, stored with one write), retry.go (the send path's %RETRY% bookkeeping and
// DELAY diversion), pull.go (Pull and its hold), filter.go (tag filters),
// offsets.go (offsets and resets), consumers.go (heartbeats, the consumer
// registry, locks), sendback.go (CONSUMER_SEND_MSG_BACK: %RETRY% and
// %DLQ%), transaction.go (wires broker/transaction), consumer_calls.go
// (wires broker/consumercall), due.go (wires broker/due: delayed and
// timer delivery), admin.go (topic and group admin, stats, connections),
// query.go (messages by offset and key), reply.go (request/reply: a reply
// pushed to its requester), topics.go (the topic table), subgroups.go (the
// consumer groups' stored configs and what the core honours of them),
// runtime.go (the configuration that changes at run time), pop.go,
// pop_read.go, pop_fifo.go, pop_ack.go and pop_revive.go (RocketMQ 5's POP
// consumption: receive with an invisible time, ack, change of invisible
// time, redelivery through the group's retry topic and the DLQ, FIFO
// groups; its state in broker/pop and store.OpInFlight), msgtype.go
// (topic message types: the check of a send, topics made on first use).
//
// Behaviour with its own room lives in packages the core wires through
// small Configs and interfaces, each wire-free too: broker/transaction
// (half messages, END_TRANSACTION, the check of producers),
// broker/consumercall (admin calls answered by a consumer),
// broker/due (delayed and timer delivery), and the
// pure tables broker/clients, broker/lock, broker/longpoll and
// broker/offsets. The message and its stored record are package
// message's, the topic config package topicconf's.
//
// Invariants:
//   - every call answers: a result, or an *Error with the Reason Java's
//     answer stands for and Java's remark, never a panic or a hang;
//   - a pull that finds nothing and may be held is parked (no goroutine)
//     until a message arrives on its queue or its suspend time passes, and
//     is then answered by running it again, exactly once; it is never
//     answered SUCCESS without messages;
//   - a call forwarded to a client is answered within ConsumerCallTimeout;
//   - the core writes the store only through its Backend (put, apply,
//     commitOffsets), never a store method that mutates, so a group's
//     replicas apply the same ops in the same order;
//   - a popped message is in flight (a store record, then the in-memory
//     table) before its pop is answered, and stays so until an ack, a
//     change or its redelivery replaces or deletes the record: so a
//     restart or a new master knows every receipt handle it gave;
//   - consumer offsets are applied in memory as they arrive and written to
//     the store every OffsetPersistInterval and on a clean Close (by a
//     master; a new master reloads them from its store);
//   - the topic table is written through to the store before it changes in
//     memory, and every change is reported through Config.TopicsChanged;
//     a creation's store sync never holds up a reader of the table.
//
// Lifecycle: Open (store, topics, offsets), Start (host known: loops and
// delayed delivery run), Drain (held pulls answered, loops stopped, while
// front doors are still open), Close (offsets persisted, store closed).
package core
