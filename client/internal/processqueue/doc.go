// Package processqueue owns the client-side buffer of one assigned message
// queue: the messages pulled but not yet consumed, ordered by queue offset,
// with the accounting that flow control and offset commits depend on, and the
// queue's lifecycle flags (dropped, broker lock, last pull and consume times).
// It also owns the flow-control decision (Decide), a pure function of a
// queue's Stats and the thresholds.
//
// Semantics follow RocketMQ's Java ProcessQueue, so a consumer built on it
// commits the same offsets as the Java and official Go clients:
//
//   - Concurrent consumption: Remove returns the offset to commit, the
//     smallest offset still held, or one past the highest offset ever put
//     when nothing is left. A consumer that dies re-delivers from there, so
//     no message is skipped.
//   - Orderly consumption: Take moves the lowest messages to a "consuming"
//     set; Commit drops them and returns one past the highest; ConsumeAgain
//     and Rollback return them to the buffer.
//
// Invariants (held under the queue's mutex):
//   - held messages are sorted by offset, offsets unique across the held and
//     consuming sets; a message put twice counts once;
//   - Count and SizeBytes are the sums over held and consuming messages;
//   - Span is max-min over held messages (not the consuming set), as in Java.
//
// Time comes from Config.Now, so expiry is tested without sleeping. This
// package starts no goroutines and imports no network code.
package processqueue
