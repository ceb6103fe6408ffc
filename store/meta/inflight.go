package meta

import (
	"encoding/binary"
	"fmt"
)

// kindInFlight is the second key byte of a popped message a consumer
// group has in flight (RocketMQ 5's POP):
//
//	'M' 'P' | len(group) u8 | group | len(topic) u8 | topic | queueID u32 | queueOffset u64
//	                                                         -> in-flight record (package
//	                                                            broker/pop's encoding)
//
// A group's records are contiguous, a (group, topic)'s too, and within
// them a queue's records are in offset order, so a queue's in-flight
// batch is one range scan.
const kindInFlight = 'P'

// InFlightKey is the key of one in-flight record.
func InFlightKey(group, topic string, queueID int32, offset int64) []byte {
	k := make([]byte, 0, 2+1+len(group)+1+len(topic)+12)
	k = append(k, prefix, kindInFlight, byte(len(group)))
	k = append(k, group...)
	k = append(k, byte(len(topic)))
	k = append(k, topic...)
	k = binary.BigEndian.AppendUint32(k, uint32(queueID))
	return binary.BigEndian.AppendUint64(k, uint64(offset))
}

// InFlightBounds cover every in-flight record.
func InFlightBounds() (lower, upper []byte) {
	return []byte{prefix, kindInFlight}, []byte{prefix, kindInFlight + 1}
}

// ParseInFlightKey splits an in-flight record's key.
func ParseInFlightKey(k []byte) (group, topic string, queueID int32, offset int64, err error) {
	bad := func() (string, string, int32, int64, error) {
		return "", "", 0, 0, fmt.Errorf("meta: bad in-flight key %x", k)
	}
	if len(k) < 3 || k[0] != prefix || k[1] != kindInFlight {
		return bad()
	}
	r := k[2:]
	n := int(r[0])
	if len(r) < 1+n+1 {
		return bad()
	}
	group, r = string(r[1:1+n]), r[1+n:]
	n = int(r[0])
	if len(r) != 1+n+12 {
		return bad()
	}
	topic, r = string(r[1:1+n]), r[1+n:]
	return group, topic, int32(binary.BigEndian.Uint32(r)), int64(binary.BigEndian.Uint64(r[4:])), nil
}
