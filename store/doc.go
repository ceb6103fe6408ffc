// Package store is Runnel's message store: RocketMQ's commit log, consume
// queues, index and metadata on one Pebble database.
//
// # What it owns
//
// Messages are stored once, in RocketMQ's stored-message encoding, keyed by
// a physical offset that only grows (package commitlog). Each (topic, queue)
// has a consume queue mapping dense queue offsets to (physical offset,
// size, tag hash, store time), stored in chunks of 64 entries (package
// consumequeue). Keys and unique client ids are indexed in hash segments
// over stretches of the log (package index). Topic configs, consumer
// offsets, delay-level progress and checkpoints live beside them (package
// meta). A Get returns stored records back to back, ready to be a PULL body;
// it reads them with one log iterator, stepping from record to record
// while the queue's records are adjacent, and keeps the last queue chunk
// it read from Pebble decoded in the queue for the next Get. The records
// are in a pooled buffer: a caller done with them (the broker, once the
// pull's answer is written) hands it back with GetResult.Recycle.
//
// Two Pebble databases: <Dir>/log holds only the commit log ('L' keys),
// <Dir>/meta everything else (first byte of the key):
//
//	'Q' consume-queue chunks    'q' queue floors    'M' metadata
//	'x' index segments          'X' index buckets
//
// The log's keys only ever grow, so Pebble's flushes of it never overlap
// one another and compactions need not rewrite it; in one database with
// the other keys every flush overlapped the last, and Pebble compacted the
// log 3.5x as much as raw Pebble does.
//
// # Derived data
//
// Queue entries and index entries are functions of the log, and a Pebble
// key for each message's entry cost Pebble as much CPU as the message
// itself. So, as RocketMQ builds its consume queues and index files from
// the commit log, they are written in bulk, at checkpoints every
// CheckpointBytes of log: the queue chunks that changed and the index
// segment, sealed. In between they live in memory (see derived.go);
// readers look there first. An append writes its records and, every
// CheckpointBytes, a checkpoint.
//
// # One apply path
//
// Every mutation is an Op given to Apply: appends, offset commits (any
// number in one Op, one sync: CommitOffsets), group offset deletion, topic
// config put and delete, delay-level progress, named checkpoints,
// retention's truncation. Put is an append whose records are encoded
// straight into the batch; AppendOp builds the same Op as bytes can carry
// it. Apply assigns physical and queue offsets
// from the store's state under one lock and writes the log records in one
// batch of the log database, and any checkpoint that is due in one batch of
// the other, both entering their commit pipelines under the lock.
// Checkpoints are decided by the Op sequence alone and timestamps
// come from the Op, never from a clock inside Apply, so replicas applying
// the same Ops in the same order (a raft FSM, later) hold byte-identical
// stores. (Open after a crash and Close write a checkpoint of their own, so
// a replica that restarted lays out its chunks and segments differently;
// what they say is the same.)
//
// # Ops as bytes
//
// An Op encodes to bytes (Marshal, AppendEncode) and back (DecodeOp);
// ApplyEncoded applies the bytes through Apply, so a raft FSM hands every
// log entry to one call. The encoding is compact binary: a version byte
// (OpVersion, 1), the kind, and the kind's fields as varints and
// length-prefixed strings; an append carries its records in RocketMQ's
// stored-message encoding (package protocol's codec, the log's own
// format), and its topic, queue, tags code, keys and unique key are read
// back from them. Everything not decided by the store's state is in the
// Op before it is encoded (store time, store host); offsets are assigned
// by Apply. A truncation's queue-minimum hints are encoded sorted, so one
// Op has one encoding. DecodeOp refuses anything but one whole op of a
// known version (ErrBadOp), and allocates only in proportion to its input;
// a new field or kind is a new version, and a build refuses versions it
// does not know rather than misapply them.
//
// Snapshot streams every live key of both databases, read from Pebble
// snapshots taken together under the apply lock, and Restore writes them
// into a new directory and opens it; what was only in memory (queue
// tails, the open index segment) is rebuilt from the log past the last
// checkpoint, as after a crash, but without the checkpoint a crash
// recovery writes, and the stream carries the last store time: so the
// restored store checkpoints where the snapshotted one does, and the same
// further ops leave the two byte-identical. Stats counts syncs, so a
// caller can prove what a write pattern costs.
//
// # Durability and the Pebble finding
//
// Pebble's WAL writer copies a committed batch into an in-memory block. A
// commit with pebble.NoSync returns with the batch possibly still in that
// buffer (it reaches the file only when a 32 KiB block fills or someone asks
// for a sync), so kill -9 right after an acknowledged NoSync write loses it
// (walfs.TestWhyWalfsExists shows this on Pebble's crash-cloning MemFS). So
// the store never acknowledges a NoSync commit:
//
//   - SyncFlush: commits request a sync; Pebble's commit pipeline groups
//     concurrent committers into one write+fsync (group commit).
//   - AsyncFlush: commits also request a sync, but through package walfs,
//     whose WAL files turn Sync into a no-op: the commit returns once
//     Pebble's flush loop has written the batch to the file (page cache),
//     which survives a process crash. A background flusher fsyncs every
//     FlushInterval, bounding what an OS crash can lose, as with RocketMQ.
//
// A store opened with NoWAL (a replica's, rebuilt from its raft log at
// every start) writes no WAL and acknowledges a write once it is in the
// memtable; it can be opened only new.
//
// Apply hands the batch to Pebble with ApplyNoSyncWait under the lock (so
// batches enter the WAL in offset order) and waits for durability after
// releasing it, so concurrent writers share a sync. Pebble makes a batch
// visible before its sync completes; the store does not: each queue keeps a
// readable bound raised only after the batch is durable, so readers (and
// the arrival hook) never see an unacknowledged write.
//
// # Recovery
//
// Pebble's WAL replay makes each batch all-or-nothing, but the two
// databases' WALs can keep different amounts of the last writes: an
// append's checkpoint and its records are synced side by side, not as one
// write. So after a crash Open first trims what the other database says
// past the log's end (clampDerived), and finishes a log deletion whose
// truncation was durable on the other side (a truncation syncs that side
// first). Open then reads the write position from the last log key and
// each queue's range from its first and last chunks, a few seeks per
// queue, and replays the log written since the last checkpoint (at most
// about CheckpointBytes) to rebuild what was only in memory, and
// checkpoints it. Only an op that wrote the log makes more of it readable:
// a metadata op's sync says nothing about appends still waiting for the
// log's. Verify checks all invariants by a full scan. Pebble's Open
// flushes what it replayed (at most about two memtables) and would then
// wait for the compactions that flush asks for; compactionGate holds every
// compaction until the store is open, so they run in the background
// instead.
//
// # Retention
//
// Retain (run in the background every RetentionInterval) deletes the log
// prefix older than FileReservedTime or beyond DiskBudget with one range
// deletion, each queue's chunks wholly below it with another, and the index
// segments wholly below it with a third, all in one OpTruncate batch
// through Apply. The batch checkpoints first, so its deletions, coming
// later, also remove what the checkpoint wrote below the cut. The cutoffs
// are found by binary search outside the apply lock; one OpTruncate covers
// at most about 1 MiB of log, so writers wait only for small batches.
// RetentionOp plans the next OpTruncate without applying it, for a
// replicated store's leader to propose: the op carries the cutoff, so only
// the planning store reads a clock.
//
// The log a truncation deleted is freed at once, as RocketMQ's deletion of
// an expired commit-log file frees the file: the range deletion alone frees
// nothing until a compaction, and the compaction it needed rewrote the
// live log (its flushed table spanned from the deleted start to the newest
// append). So the deleted range is excised (freeLog: Pebble drops the
// tables wholly in it and narrows the one holding the cut, writing
// nothing), once a truncation is durable: by Retain before it returns (one
// excise for all its steps), by a background freer for truncations applied
// otherwise (a replica's, proposed by its leader, so followers free as the
// leader does), by the disk check before it reads the usage again, and by
// Open for what a crash or a close left. Forced cleaning and ordinary
// retention share that path.
//
// DiskBudget counts the log's logical bytes (the sum of its records), not
// Pebble's size on disk: queue and index entries add about 28 bytes per
// message plus 12 per key, and the table holding the log's start keeps
// its file until the log is cut past it (at most a memtable's flush), so
// the directory can exceed the budget by that. A queue chunk or index
// segment that straddles the log's start stays until it lies wholly below;
// the queue and index deletions in the other database are left to its
// compactions (it is small, and its keys are not the log's).
//
// Disk space is a state (disk.go): the filesystem's usage is read every
// DiskCheckInterval and before a large Put; above DiskSpaceWarningLevelRatio
// Put and AppendOp refuse with ErrDiskFull (other ops go on), above
// DiskSpaceCleanForciblyRatio retention deletes the oldest log whatever its
// age (one slice, the oldest tenth, per check, excised before usage is
// read again), and appends resume by themselves when usage falls. Usage
// counts the log still in the memtables (see readUsage). The refusal comes
// before ENOSPC because Pebble cannot continue after a failed WAL write:
// such a failure latches ErrFailed (with its cause) until the store is
// reopened (for the ops that write the failed database: a failed log still
// takes offset commits), and Close then skips the flushes that would panic. Open refuses
// a disk with less than MinOpenFreeBytes free, at once.
package store
