// Package rebalance owns the allocation of a topic's message queues among the
// members of a consumer group: the strategies, as pure functions behind the
// Strategy interface. (The periodic rebalance loop that applies their result
// will live here too; it is not written yet.)
//
// Every member of a group runs the same strategy on the same inputs — all
// queues of the topic in canonical order (queue.Sort) and all client ids of
// the group in byte order — and keeps only its own share. Whether the shares
// fit together therefore depends on every member computing the same function,
// including members that are the official Go client or the Java client. The
// strategies here reproduce RocketMQ's Java strategies exactly (uneven splits
// included); where the official Go client differs from Java, the difference is
// documented on the strategy and, where it matters for a mixed group, offered
// as an option (ConsistentHash.Ring).
//
// Invariants:
//   - Allocate never modifies its inputs, and its result shares no backing
//     array with them.
//   - Invalid input (empty current client id, no queues, no clients, bad
//     configuration) is an error and allocates nothing; the caller keeps its
//     current assignment, as the Java client does when a strategy throws.
//   - A current client id missing from the client list is not an error: the
//     result is empty, so the caller releases every queue of the topic, as the
//     Java client does after logging "[BUG] ... not in cidAll".
//   - Averagely, AveragelyByCircle, ConsistentHash (VirtualNodes >= 1) and
//     MachineRoomNearby over a partitioning strategy give every queue to
//     exactly one client. ByMachineRoom does so for the queues of the
//     configured machine rooms and leaves the rest unassigned. ByConfig
//     returns its fixed list to every client.
//
// This package imports no network code and nothing from broker, namesrv or
// store.
package rebalance
