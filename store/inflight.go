package store

import (
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/runnelmq/runnel/store/meta"
)

// buildInFlight writes an OpInFlight into b: deletions, then puts, then
// offsets, so a record deleted and put again by one op is kept.
func buildInFlight(b *pebble.Batch, op *Op) error {
	if len(op.InFlightPut) == 0 && len(op.InFlightDelete) == 0 && len(op.Offsets) == 0 {
		return fmt.Errorf("%w: in-flight op that changes nothing", ErrInvalidOp)
	}
	for i := range op.InFlightDelete {
		k := &op.InFlightDelete[i]
		if err := checkInFlightKey(k); err != nil {
			return err
		}
		_ = b.Delete(meta.InFlightKey(k.Group, k.Topic, k.QueueID, k.Offset), nil)
	}
	for i := range op.InFlightPut {
		r := &op.InFlightPut[i]
		if err := checkInFlightKey(&r.InFlightKey); err != nil {
			return err
		}
		_ = b.Set(meta.InFlightKey(r.Group, r.Topic, r.QueueID, r.Offset), r.Value, nil)
	}
	for _, c := range op.Offsets {
		if err := checkName("group", c.Group); err != nil {
			return err
		}
		if err := checkName("topic", c.Topic); err != nil {
			return err
		}
		_ = b.Set(meta.OffsetKey(c.Group, c.Topic, c.QueueID), meta.EncodeInt64(c.Offset), nil)
	}
	return nil
}

func checkInFlightKey(k *InFlightKey) error {
	if err := checkName("group", k.Group); err != nil {
		return err
	}
	if err := checkName("topic", k.Topic); err != nil {
		return err
	}
	if k.QueueID < 0 || k.Offset < 0 {
		return fmt.Errorf("%w: in-flight record of %s/%d at %d", ErrInvalidOp, k.Topic, k.QueueID, k.Offset)
	}
	return nil
}

// RangeInFlight calls fn with every in-flight record, by group, topic,
// queue and offset, until fn returns false. The value is fn's to keep.
func (s *Store) RangeInFlight(fn func(InFlight) bool) error {
	if err := s.readLock(); err != nil {
		return err
	}
	defer s.closeMu.RUnlock()
	return s.eachInFlight(func(_ []byte, k InFlightKey, v []byte) bool {
		return fn(InFlight{InFlightKey: k, Value: append([]byte(nil), v...)})
	})
}

// deleteTopicInFlight adds to b the deletion of every group's in-flight
// records of topic. They are keyed group first, so this scans them all;
// there are as many as messages in flight.
func (s *Store) deleteTopicInFlight(b *pebble.Batch, topic string) error {
	return s.eachInFlight(func(raw []byte, k InFlightKey, _ []byte) bool {
		if k.Topic == topic {
			_ = b.Delete(append([]byte(nil), raw...), nil)
		}
		return true
	})
}

// eachInFlight calls fn with each in-flight record's raw key, key and
// value (both valid only during the call) until fn returns false.
func (s *Store) eachInFlight(fn func(raw []byte, k InFlightKey, v []byte) bool) error {
	return s.scan(meta.InFlightBounds, func(key, value []byte) error {
		g, t, q, off, err := meta.ParseInFlightKey(key)
		if err != nil {
			return err
		}
		if !fn(key, InFlightKey{Group: g, Topic: t, QueueID: q, Offset: off}, value) {
			return errStopScan
		}
		return nil
	})
}
