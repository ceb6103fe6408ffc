package store

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store/commitlog"
)

// GetStatus is the outcome of Get, as RocketMQ's GetMessageStatus.
type GetStatus int

// Statuses. The broker maps FOUND to SUCCESS; NO_MATCHED_MSG and
// MESSAGE_WAS_REMOVING to PULL_RETRY_IMMEDIATELY; NO_NEW_MSG-like statuses
// (OFFSET_OVERFLOW_ONE, NO_MESSAGE_IN_QUEUE with offset 0) to
// PULL_NOT_FOUND; OFFSET_TOO_SMALL, OFFSET_OVERFLOW_BADLY and
// NO_MESSAGE_IN_QUEUE with a non-zero offset to PULL_OFFSET_MOVED, as Java's
// PullMessageProcessor does.
const (
	GetFound GetStatus = iota
	GetNoMatchedMessage
	GetMessageWasRemoving
	GetOffsetFoundNull
	GetOffsetOverflowBadly
	GetOffsetOverflowOne
	GetOffsetTooSmall
	GetNoMatchedLogicQueue
	GetNoMessageInQueue
)

var statusNames = [...]string{"FOUND", "NO_MATCHED_MESSAGE", "MESSAGE_WAS_REMOVING", "OFFSET_FOUND_NULL",
	"OFFSET_OVERFLOW_BADLY", "OFFSET_OVERFLOW_ONE", "OFFSET_TOO_SMALL", "NO_MATCHED_LOGIC_QUEUE", "NO_MESSAGE_IN_QUEUE"}

func (s GetStatus) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return fmt.Sprintf("GetStatus(%d)", int(s))
}

// Filter decides which messages a Get returns (nil: every message). Both
// methods must be cheap and safe for concurrent use. The broker's filters
// (tags, SQL92) live in broker/filter; the store only asks them.
type Filter interface {
	// MatchTagsCode is asked first, with the consume-queue tag hash; false
	// skips the message without reading it.
	MatchTagsCode(tagsCode int64) bool
	// MatchRecord is asked for messages that passed MatchTagsCode, with
	// the stored record (e.g. for SQL92 on properties). It must not retain rec.
	MatchRecord(rec []byte) bool
}

// GetResult is the answer to Get.
type GetResult struct {
	Status          GetStatus
	NextBeginOffset int64
	MinOffset       int64
	MaxOffset       int64
	// Messages holds the stored records back to back, ready to be a PULL
	// body; Count says how many, QueueOffsets where each came from.
	Messages     []byte
	Count        int
	QueueOffsets []int64

	pooled *[]byte // Messages' buffer, when it came from getBufs
	store  *Store  // whose Stats count the Recycle
}

// minScan is how many queue entries one Get inspects at least while
// filtering: RocketMQ's maxFilterMessageSize (16000 bytes) of 20-byte units.
const minScan = 800

// Get reads up to maxMsgs messages (at least one when any is there; also
// capped by MaxTransferCount) and about maxBytes bytes (MaxTransferBytes
// caps it too) from a queue, starting at offset, skipping messages the
// filter rejects (nil: no filter). Statuses and nextBeginOffset follow
// RocketMQ's DefaultMessageStore.getMessage on a master.
func (s *Store) Get(topic string, queueID int32, offset int64, maxMsgs, maxBytes int, filter Filter) (*GetResult, error) {
	if err := s.readLock(); err != nil {
		return nil, err
	}
	defer s.closeMu.RUnlock()
	res := &GetResult{NextBeginOffset: offset}
	q := s.queue(topic, queueID)
	if q != nil {
		// Load max before min and before creating iterators: every entry
		// below max then has its record in the log iterator's view.
		res.MaxOffset = q.readable.Load()
		res.MinOffset = q.min.Load()
	}
	switch min, max := res.MinOffset, res.MaxOffset; {
	case max == 0:
		res.Status, res.NextBeginOffset = GetNoMessageInQueue, 0
		return res, nil
	case offset < min:
		res.Status, res.NextBeginOffset = GetOffsetTooSmall, min
		return res, nil
	case offset == max:
		res.Status = GetOffsetOverflowOne
		return res, nil
	case offset > max:
		res.Status, res.NextBeginOffset = GetOffsetOverflowBadly, max
		return res, nil
	}
	if maxMsgs > s.opts.MaxTransferCount {
		maxMsgs = s.opts.MaxTransferCount
	}
	if maxBytes <= 0 || maxBytes > s.opts.MaxTransferBytes {
		maxBytes = s.opts.MaxTransferBytes
	}
	if err := s.read(res, q, topic, queueID, offset, maxMsgs, maxBytes, filter); err != nil {
		return nil, err
	}
	return res, nil
}

// read fills res from [offset, res.MaxOffset).
//
// A queue's records are often adjacent in the log (a batch, a busy queue).
// Without a tag filter, read therefore steps the log iterator to the next
// record and takes it if its header claims the wanted (topic, queue,
// offset): that record is the one the queue entry points at, because every
// record after the previous one in the log was written later and a queue
// place is claimed by one live record. Only when the claim fails does it
// consult the consume queue, which costs a second iteration per message.
func (s *Store) read(res *GetResult, q *queue, topic string, queueID int32, offset int64, maxMsgs, maxBytes int, filter Filter) error {
	logLo, _ := commitlog.Bounds()
	logIt, err := s.log.NewIter(&pebble.IterOptions{LowerBound: logLo, UpperBound: commitlog.Key(s.readablePhys.Load())})
	if err != nil {
		return err
	}
	defer logIt.Close()
	cur := entryCursor{s: s, q: q, topic: topic, queueID: queueID, start: -1}

	res.Status = GetNoMatchedMessage
	scanEnd := offset + int64(max(minScan, maxMsgs))
	var want []byte
	lastPhys, lastSize := int64(-1), int64(0) // record logIt is positioned at
	// A consumer usually asks next for where its last Get ended; the hint
	// says which record that probably is, saving the queue lookup.
	var hinted []byte
	if h := q.hint.Load(); filter == nil && h != nil && h.offset == offset {
		if logIt.SeekGE(commitlog.Key(h.phys)) && isLogKey(logIt.Key(), h.phys) {
			if v := logIt.Value(); claims(v, topic, queueID, offset) {
				hinted, lastPhys, lastSize = v, h.phys, int64(len(v))
			}
		}
	}
	var next *readHint // where the next Get should start, if known
	defer func() {
		if next == nil && lastPhys >= 0 && lastSize > 0 {
			next = &readHint{offset: res.NextBeginOffset, phys: lastPhys + lastSize}
		}
		if next != nil {
			q.hint.Store(next)
		}
	}()
	for off := offset; off < res.MaxOffset && off < scanEnd; {
		// Fast path: the next record in the log is this queue's next one.
		var rec []byte
		if hinted != nil {
			rec, hinted = hinted, nil
		} else if filter == nil && lastPhys >= 0 {
			cand := lastPhys + lastSize
			if logIt.Next() && isLogKey(logIt.Key(), cand) {
				if v := logIt.Value(); claims(v, topic, queueID, off) {
					if batchFull(res, len(v), maxMsgs, maxBytes) {
						next = &readHint{offset: off, phys: cand}
						break
					}
					rec = v
					lastPhys, lastSize = cand, int64(len(v))
				}
			}
			if rec == nil {
				lastPhys = -1
			}
		}
		if rec == nil {
			// Slow path: the queue entry says where the record is.
			e, inQueue, err := cur.at(off)
			if err != nil {
				return err
			}
			if !inQueue {
				// Retention removed it meanwhile. A truncation raises the
				// queue's minimum before its deletions become visible, so
				// the minimum says where the first entry left is. An
				// answer's records are contiguous: one that has some ends
				// here, and the next Get finds the minimum.
				if min := q.min.Load(); off < min && res.Count == 0 {
					off = min
					continue
				}
				break
			}
			if batchFull(res, int(e.Size), maxMsgs, maxBytes) {
				break
			}
			res.NextBeginOffset = off + 1
			if filter != nil && !filter.MatchTagsCode(e.TagsCode) {
				off++
				continue
			}
			want = commitlog.AppendKey(want[:0], e.PhysOffset)
			var found bool
			if lastPhys >= 0 && lastPhys+lastSize == e.PhysOffset {
				found = logIt.Next() && bytes.Equal(logIt.Key(), want)
			}
			if !found {
				found = logIt.SeekGE(want) && bytes.Equal(logIt.Key(), want)
			}
			if !found {
				if err := logIt.Error(); err != nil {
					return err
				}
				lastPhys = -1
				if res.Count == 0 {
					res.Status = GetMessageWasRemoving
				}
				off++
				continue
			}
			if rec, err = logIt.ValueAndErr(); err != nil {
				return err
			}
			lastPhys, lastSize = e.PhysOffset, int64(len(rec))
			if filter != nil && !filter.MatchRecord(rec) {
				off++
				continue
			}
		} else {
			if batchFull(res, len(rec), maxMsgs, maxBytes) {
				break
			}
			res.NextBeginOffset = off + 1
		}
		if res.Messages == nil {
			// Room for as many records like this one as the queue holds
			// from here, up to what was asked: a consumer keeping up asks
			// for 32 and finds one or two, and a buffer for 32 per pull was
			// most of the broker's allocation on such a path.
			n := int(min(int64(max(maxMsgs, 1)), res.MaxOffset-off))
			res.Messages, res.pooled = takeGetBuf(min(maxBytes, len(rec)*n))
			res.store = s
			res.QueueOffsets = make([]int64, 0, n)
		}
		res.Messages = append(res.Messages, rec...)
		res.QueueOffsets = append(res.QueueOffsets, off)
		res.Count++
		res.Status = GetFound
		off++
	}
	return logIt.Error()
}

// batchFull is RocketMQ's isTheBatchFull: the first message always fits.
func batchFull(res *GetResult, size, maxMsgs, maxBytes int) bool {
	return res.Count > 0 && (res.Count >= maxMsgs || len(res.Messages)+size > maxBytes)
}

func isLogKey(k []byte, phys int64) bool {
	return len(k) == commitlog.KeyLen && k[0] == commitlog.Prefix && int64(binary.BigEndian.Uint64(k[1:])) == phys
}

// claims reports whether a stored record says it is entry off of
// (topic, queueID), reading only header fields and the topic.
func claims(rec []byte, topic string, queueID int32, off int64) bool {
	if len(rec) < message.StoredBornHostPos {
		return false
	}
	be := binary.BigEndian
	if int32(be.Uint32(rec[message.StoredQueueIDPos:])) != queueID || int64(be.Uint64(rec[message.StoredQueueOffsetPos:])) != off {
		return false
	}
	t, ok := message.StoredTopic(rec)
	return ok && string(t) == topic
}
