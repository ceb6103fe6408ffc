// Package commitlog owns the commit log's place in the store's Pebble key
// space: every message is stored once, as RocketMQ's stored-message record
// (package message draws its layout and owns its codec; fact sheet
// section 3), keyed by its physical offset.
//
// Key and value:
//
//	key   = 'L' | physOffset (uint64, big-endian)        9 bytes
//	value = the stored record, byte for byte as a PULL body carries it
//
// The physical offset of a record is the sum of the sizes of all records
// before it, as in RocketMQ, so offsets only grow, the record's own
// physicalOffset field equals its key, and the next record's offset is
// key + len(value). The big-endian key makes Pebble's order the log order, so
// a scan of the 'L' range reads the log sequentially and the last key gives
// the write position after a restart.
//
// Invariants (kept by the store's single apply path, in which the log is
// the source of the consume queues and the index, written beside it):
//   - offsets are dense: record k+1 starts at offset(k) + size(k);
//   - retention deletes a prefix [minPhys, cutoff) with one range deletion,
//     never a hole;
//   - storeTimestamp never decreases along the log, so age-based retention
//     can binary-search for its cutoff.
package commitlog
