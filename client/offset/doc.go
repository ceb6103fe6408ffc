// Package offset owns consumer offsets on the client: the in-memory table,
// the Store interface a consumer reads and persists offsets through, the
// local-file store used in broadcasting mode, and the arithmetic that picks
// where a newly assigned queue starts (PlanStart).
//
// An offset here is always "the next message to consume": the smallest
// offset still in a process queue, or one past the last one consumed.
// NoOffset (-1) means none is recorded.
//
// Local file layout (JSON, one file per client id and consumer group):
//
//	{"version":1,"offsets":[{"topic":"T","brokerName":"b","queueId":0,"offset":42}, ...]}
//
// with entries in canonical queue order. The file is replaced atomically:
// written to a temporary file in the same directory, fsynced, renamed over
// the old one, and the directory fsynced. A crash at any point leaves either
// the old file or the new one, never a mix; leftover temporary files are
// removed when the store is opened.
//
// The broker-side store (clustering mode) needs the network and lives
// elsewhere; it implements the same Store interface. This package imports no
// network code.
package offset
