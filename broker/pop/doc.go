// Package pop owns RocketMQ 5's POP consumption state, below the core and
// wire-free: the receipt handle (its text, Java's, and its parser), the
// in-flight record a popped message keeps in the store until it is
// acknowledged (its value's encoding; the store keys it, store/meta
// 'M' 'P'), and the in-memory table of those records with its locks and
// the feed of new records the due-time service indexes (Follow). The core (broker/core's pop*.go) decides what a pop, an
// ack, a change of invisible time and a redelivery do, and writes every
// change as a store op (store.OpInFlight) before the table.
//
// A handle names a record by (group, topic, queue, offset) and the
// record's pop time, so a stale handle (acknowledged, changed, brought
// back) names nothing: it is checked against the table, never trusted.
//
// Invariants:
//   - the table holds what the store holds, changed only after the store
//     op that changed the store succeeded, by a caller holding the
//     record's lock (LockRecords) or, for a queue's records taken
//     together, the queue's (LockQueue);
//   - ParseHandle and DecodeRecord never panic and refuse what they do not
//     read whole (FuzzParseHandle, FuzzDecodeRecord);
//   - a record's pop time only grows: a change of invisible time gives a
//     new handle, never the old one again.
package pop
