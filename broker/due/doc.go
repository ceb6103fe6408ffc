// Package due owns "deliver later": messages stored now and handed on when
// they fall due. Its sources today are delay levels (RocketMQ's
// ScheduleMessageService) and timer messages (RocketMQ 5's
// TimerMessageStore); POP's redelivery of un-acknowledged messages is
// meant to be the third. One Service holds one due-time index over every
// source, saves all their progress in one checkpoint record, and runs one
// goroutine.
//
// # What waits where (the layout Java's brokers use)
//
//   - A message with a DELAY level L waits in SCHEDULE_TOPIC_XXXX, queue
//     L-1, with its real topic and queue in REAL_TOPIC and REAL_QID, and
//     falls due at its store time plus the level's delay (Levels.Transform).
//   - A message with TIMER_DELIVER_MS, TIMER_DELAY_SEC or TIMER_DELAY_MS
//     waits in rmq_sys_wheel_timer, queue 0, with REAL_TOPIC, REAL_QID and
//     its due time in TIMER_OUT_MS (TransformTimer).
//
// Both are ordinary records, durable as soon as the send is answered. A
// due message is restored to its real topic and queue, without the
// properties that delayed it, and stored there.
//
// # Sources and the index
//
// A Source yields Entries, each a due time and a reference to a stored
// record (a lane, a queue of its topic, and an offset in it), and decides
// at delivery what a due entry becomes (Fire): the built-in QueueSource
// restores it to its real queue; POP's source would skip one acknowledged
// meanwhile and put the rest into the group's retry topic with the
// attempt raised. The index is a min-heap of (due, source, lane, offset),
// 24 bytes an entry, kept in memory only. One goroutine sleeps until its
// earliest due time, a Notify, or the idle interval, so a million entries
// far in the future cost no CPU, and each wake costs work in proportion
// to what falls due (log n an entry), never to all that waits.
//
// A delay level's queue is in due order (store times never decrease, the
// level's delay is one), so only its due entries and the first one not due
// are read into the index; the level is read no further until that one
// falls due. Levels are delivered strictly in queue order: a level's
// delivered entries always form a prefix of its queue. Timers arrive in
// any order, so every waiting timer is indexed (with 8 bytes more for its
// lane's progress: about 32 MB for a million); restarting
// re-reads them, one record read per timer stored since the oldest one
// still waiting, in log order (BenchmarkMillionWaiting: about 2 s for a
// million). A Pebble index keyed by due time would avoid the re-read, at
// the price of a new kind of store op. A timer outlives the store's
// retention only if its delay exceeds FileReservedTime (72 h by default,
// equal to timerMaxDelaySec's default of 3 days): keep timerMaxDelaySec
// below it.
//
// # The checkpoint
//
// All progress is one store checkpoint named "due" (OpPutCheckpoint: one
// op, so raft carries it as any other), written after each delivering
// write whose progress moved it:
//
//	record  = version:1 (1) | n:uvarint | n × section       sections by name
//	section = len:uvarint name | len:uvarint state          state is the source's
//
// A queue source's state (sections "delay" and "timer"):
//
//	state   = n:uvarint | n × (lane:uvarint next:varint cursor:varint)   lanes increasing
//
// next is the lane's lowest queue offset not yet delivered (every offset
// below it is done); cursor, for timers, the due time of the last timer
// delivered, saved only while the index had read the lane to its end (a
// timer not yet read may be due before it); 0 for delay levels. Sections
// and lanes no configured source claims (a source switched off, a shorter
// level list) are written back as they were, so no configuration change
// loses progress. A store written before this record held per-level delay
// offsets and a "timer" checkpoint; they are read once, when no record
// exists, and mean the same (legacy.go).
//
// # Crash safety
//
// The checkpoint is written after the delivering write, so a crash
// between the two leaves it behind, never ahead. On start each lane is
// re-read from its saved next offset, and
//   - a delay level re-checks its entries from there on: one whose
//     delivered copy is already in its real queue (same UNIQ_KEY, same
//     queue, stored after the waiting record, each copy matched to one
//     entry) is skipped; since delivered entries form a prefix, checking
//     stops at the first entry not found;
//   - a timer due more than resumeSlack before the cursor is taken as
//     delivered (a timer is indexed, at most moments after it was stored,
//     before any later due time is delivered); one due from then up to
//     now is re-checked as above; the rest are indexed.
//
// Only a message without a UNIQ_KEY (none reach these topics through the
// broker's send paths) can be delivered twice.
//
// # Invariants
//
// Every entry is delivered at or after its due time on the injected
// clock; progress saved never counts an entry whose message is not
// durable; the one goroutine Start runs is stopped and waited for by
// Close, which lets a Step in progress finish.
package due
