// Package replica replicates a broker's store across a group of 1, 3 or 5
// nodes with hashicorp/raft (DLedger's role in RocketMQ).
//
// # What it owns
//
// A Node owns one raft member: its raft log and stable store, its raft
// snapshots, its transport, and the node's *store.Store. Every mutation of
// the store is an encoded store op ((*store.Op).Marshal) proposed to the
// leader (Propose) and, once committed, applied by every member's state
// machine through the store's one deterministic path, ApplyEncoded, in log
// order. So every member holds the same store.
//
// # Invariants
//
//   - Single writer: only the state machine writes the store. Callers read
//     it through Store() and write only by Propose; a direct Put, Apply or
//     CommitOffset on it would make this replica differ from the others.
//     Background mutations are off (RetentionInterval is forced negative):
//     retention is the leader's OpTruncate, proposed like any op. Every
//     node's store frees the log it deleted as it applies it (an excise,
//     which changes no key: the stores still answer alike).
//   - A Propose success means: the entry is in a majority's raft log
//     (fsynced there; with LogSyncInterval, in their page cache and
//     fsynced within it; neither with LogNoSync), it is applied on this
//     node, and the ApplyResult is what this node's store returned (the
//     offsets every member assigned). Any failure means it was not
//     acknowledged: a follower refuses with ErrNotLeader at once; a leader
//     that loses its majority fails its pending proposals (ErrNotLeader
//     with Lost: the new term may or may not hold the entry) and never
//     reports success for an entry the new term did not commit. A client that retries may store a
//     message twice (at-least-once, as RocketMQ).
//   - Ops a store refuses deterministically (store.ErrBadOp,
//     store.ErrInvalidOp) are refused alike by every member and change
//     nothing; Propose returns that error. Any other store error on apply
//     means this member can no longer follow the log: the node stops itself
//     (Propose answers ErrClosed), and a restart rebuilds it.
//   - Leadership() announces a leader only after a barrier: its store
//     holds every entry committed before it, so a new master never serves
//     older data than it acknowledged.
//
// # Durability and restart
//
// The raft log is the write-ahead log: an entry is acknowledged once it is
// stored in a majority's raft logs, so the store itself writes no WAL
// (store.Options.NoWAL): it is rebuilt from the log on every start.
// Stored means fsynced, or with LogSyncInterval (the broker's ASYNC_FLUSH)
// written to the page cache and fsynced within the interval: no process
// crash loses an acknowledged entry, an OS crash of a majority may lose the
// last interval, as a single broker's ASYNC_FLUSH.
// Term and vote are fsynced before raft is told they are stored either way:
// a node that forgot its vote could vote twice in a term.
//
// On start the node deletes the stores of its earlier run and rebuilds one
// from raft's latest snapshot plus the committed log after it (the leader
// tells it the commit index). This costs a restore and a replay per
// restart, and a full store copy per
// snapshot (SnapshotThreshold entries). What removes both is a store that
// records the raft index it applied atomically with each op's batch: a
// restart would then keep the store and skip the entries it holds, and
// snapshots would only be needed for followers far behind.
//
// # Snapshots
//
// A snapshot is store.Snapshot's stream, taken on the state machine's
// goroutine between two entries (the store captures its Pebble snapshots
// before it writes a byte, and the state machine waits for that, then goes
// on applying while the stream is written to raft's snapshot store). A
// follower too far behind for the leader's log (TrailingLogs) is sent one;
// its Restore builds a fresh store beside the current one, swaps it in and
// closes and deletes the old one. A reader that kept the old handle gets
// store.ErrClosed: fetch Store() per request.
//
// # Raft log storage: raft-wal
//
// The raft log and stable store are hashicorp/raft-wal in the node's
// "raftwal" directory (wallog.go): entries go to preallocated 64 MiB
// segment files, written once; a head deletion after a snapshot deletes
// whole segments; the segment list, term and vote live in its bbolt meta
// file. Under LogSyncInterval the segments' fsyncs are deferred to a
// flusher, but the meta file never commits a segment list before the
// segment writes it describes are fsynced. A failed write latches and
// stops the node (raft-wal's writer may hold entries it did not write);
// a restart recovers the log from its files. Until session 24 the log was
// a Pebble database of its own (logstore.go, kept to read such a log once:
// a node moves it to raft-wal at its first start), which wrote each entry
// to its WAL, flushed it to a table and compacted it: a third of a
// group's CPU per message. Raft reads back the entries it just wrote (the
// leader to send them, a follower to apply them): a cache of the latest
// LogCacheEntries serves those from memory.
//
// # Batching
//
// hashicorp/raft already batches: its leader loop takes every Apply
// waiting (up to MaxAppendEntries) into one log write and one
// AppendEntries round, and the state machine applies committed entries a
// batch at a time (ApplyBatch). So concurrent proposals share a disk write
// and a round trip without entries of our own that hold several ops; see
// BenchmarkPropose for what that gives. Each entry still costs every node
// an apply, a log record and an AppendEntries, so the broker fills entries
// with many sends (broker/appendbatch.go).
//
// # In the broker
//
// package broker wires a Node under the broker core as its Backend
// (broker/replicated.go): sends and every other mutation are proposed, the
// Leadership channel drives the core's Promote and Demote and the
// registration as master or slave, and concurrent sends are combined into
// one OpAppend per entry there.
//
// # Lifecycle
//
// New opens (or bootstraps, from Config.Peers) the member and starts raft;
// Shutdown stops new proposals, waits for raft to answer those under way,
// then stops raft, the transport, the leadership watcher, the store and
// the raft log. A node's Dir can be opened again by New.
package replica
