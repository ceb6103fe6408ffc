// Package client is Runnel's RocketMQ client: a producer, a push consumer
// (concurrent or orderly listeners, clustering or broadcasting) and a pull
// consumer for tools, speaking RocketMQ's remoting protocol to any RocketMQ
// broker and name server.
//
// Structure, as in RocketMQ's own clients:
//
//   - instance: one per client id (ip@instanceName), shared by the
//     producers and consumers of a process that use the same id. It owns the
//     remoting connection pool, the route table, and the periodic tasks:
//     route refresh (30 s), heartbeats to every broker (30 s and at start),
//     offset persistence (5 s), rebalance (20 s and on
//     NOTIFY_CONSUMER_IDS_CHANGED) and orderly lock renewal (20 s). It also
//     answers the broker's requests to the client. Between the periodic
//     refreshes, a send or pull that fails the way a moved master explains
//     reads its topic's route again at once, coalesced and backed off per
//     topic (route_refresh.go).
//   - Producer: route lookup with auto-creation through TBW102, queue
//     selection, retry on another broker, compression and batching.
//   - Producer.Request and Reply: request/reply (request.go); the broker
//     pushes a reply to the requesting client, which hands it to the
//     Request waiting for its correlation id.
//   - Producer.Recall: withdraws a timer message before it falls due, by
//     the recall handle its send was answered with (RocketMQ 5.3's
//     RECALL_MESSAGE), sent to the broker the handle names (recall.go).
//   - TransactionProducer: a Producer that sends halves, runs the local
//     transaction, ends it, and answers the broker's CHECK_TRANSACTION_STATE
//     on a bounded worker pool (transaction.go).
//   - PushConsumer: rebalance (client/rebalance strategies), one pull
//     goroutine per assigned queue with long polling and flow control
//     (client/internal/processqueue), a consume service (a goroutine pool for
//     concurrent listeners, one goroutine per queue at a time for orderly
//     ones) and an offset store (broker-side in clustering mode, a local file
//     in broadcasting mode; client/offset).
//
// Invariants:
//   - The committed offset of a queue is never past a message that has not
//     been consumed: concurrent consumption commits the smallest offset still
//     in the process queue (processqueue.Remove), orderly consumption commits
//     one past the batch it finished. A consumer that dies re-delivers at most
//     what it consumed since the last persist; a clean Shutdown persists
//     synchronously and re-delivers nothing.
//   - A concurrent listener call that runs longer than ConsumeTimeout has its
//     messages sent back and removed from the process queue, so one stuck
//     call cannot pin the committed offset; its late result is ignored.
//   - At most one pull is in flight per queue: the queue's own goroutine
//     issues it and waits for its answer.
//   - Every goroutine belongs to a Producer, a PushConsumer or the shared
//     instance and is waited for by Shutdown; the instance stops when its last
//     user shuts down.
//   - Tag subscriptions are filtered again by tag string (a broker filters
//     by hash); SQL92 subscriptions (SQL92Selector) are delivered as the
//     broker sent them, since only the broker evaluates the condition.
//
// This package imports remoting and remoting/protocol, never the broker,
// name server or store.
package client
