package meta

import (
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/runnelmq/runnel/groupconf"
)

// kindGroup is the second key byte of a consumer group's subscription
// config:
//
//	'M' 'G' | group                                          -> groupconf.Config (JSON)
const kindGroup = 'G'

// ValidateGroup checks the limits the key layout and RocketMQ impose on a
// group config the store keeps.
func ValidateGroup(c *groupconf.Config) error {
	switch {
	case c.GroupName == "" || len(c.GroupName) > 255:
		return fmt.Errorf("%w: group name %q", ErrInvalid, c.GroupName)
	case !fitsInt32(c.RetryQueueNums, c.RetryMaxTimes, c.GroupSysFlag, c.ConsumeTimeoutMinute):
		// RocketMQ's Java ints hold 32 bits.
		return fmt.Errorf("%w: group %q has a number beyond 32 bits", ErrInvalid, c.GroupName)
	}
	return nil
}

// GroupKey is the key of a group's subscription config.
func GroupKey(group string) []byte { return append([]byte{prefix, kindGroup}, group...) }

// GroupBounds cover every group's subscription config.
func GroupBounds() (lower, upper []byte) {
	return []byte{prefix, kindGroup}, []byte{prefix, kindGroup + 1}
}

// EncodeGroup encodes a group config.
func EncodeGroup(c *groupconf.Config) ([]byte, error) { return json.Marshal(c) }

// DecodeGroup decodes a group config.
func DecodeGroup(v []byte) (groupconf.Config, error) {
	var c groupconf.Config
	if err := json.Unmarshal(v, &c); err != nil {
		return c, fmt.Errorf("meta: group config: %w", err)
	}
	return c, nil
}

// Flag bits of a group config's binary form.
const (
	groupConsumeEnable = 1 << iota
	groupConsumeFromMin
	groupConsumeBroadcast
	groupNotifyConsumerIDsChanged
	groupConsumeMessageOrderly
)

// AppendGroupBinary appends c in the compact form a store op carries (the
// store's op encoding, whose version covers this layout): name | flags u8
// (consumeEnable 1, consumeFromMinEnable 2, consumeBroadcastEnable 4,
// notifyConsumerIdsChangedEnable 8, consumeMessageOrderly 16, a bit a
// build before it refuses) | retryQueueNums | retryMaxTimes |
// brokerId | whichBrokerWhenConsumeSlowly | groupSysFlag |
// consumeTimeoutMinute, the string as uvarint length + bytes, integers as
// varints.
func AppendGroupBinary(dst []byte, c *groupconf.Config) []byte {
	dst = appendString(dst, c.GroupName)
	var flags byte
	if c.ConsumeEnable {
		flags |= groupConsumeEnable
	}
	if c.ConsumeFromMinEnable {
		flags |= groupConsumeFromMin
	}
	if c.ConsumeBroadcastEnable {
		flags |= groupConsumeBroadcast
	}
	if c.NotifyConsumerIdsChangedEnable {
		flags |= groupNotifyConsumerIDsChanged
	}
	if c.ConsumeMessageOrderly {
		flags |= groupConsumeMessageOrderly
	}
	dst = append(dst, flags)
	for _, v := range []int64{int64(c.RetryQueueNums), int64(c.RetryMaxTimes), c.BrokerID,
		c.WhichBrokerWhenConsumeSlowly, int64(c.GroupSysFlag), int64(c.ConsumeTimeoutMinute)} {
		dst = binary.AppendVarint(dst, v)
	}
	return dst
}

// DecodeGroupBinary decodes what AppendGroupBinary wrote at the start of b
// and returns the bytes it read. It never panics; a truncated or
// malformed config, or unknown flag bits, are an ErrInvalid.
func DecodeGroupBinary(b []byte) (groupconf.Config, int, error) {
	r := binReader{b: b}
	c := groupconf.Config{GroupName: r.string()}
	flags := r.byte()
	if flags&^(groupConsumeEnable|groupConsumeFromMin|groupConsumeBroadcast|groupNotifyConsumerIDsChanged|groupConsumeMessageOrderly) != 0 {
		r.fail()
	}
	c.ConsumeEnable = flags&groupConsumeEnable != 0
	c.ConsumeFromMinEnable = flags&groupConsumeFromMin != 0
	c.ConsumeBroadcastEnable = flags&groupConsumeBroadcast != 0
	c.NotifyConsumerIdsChangedEnable = flags&groupNotifyConsumerIDsChanged != 0
	c.ConsumeMessageOrderly = flags&groupConsumeMessageOrderly != 0
	c.RetryQueueNums, c.RetryMaxTimes = r.int(), r.int()
	c.BrokerID, c.WhichBrokerWhenConsumeSlowly = r.int64(), r.int64()
	c.GroupSysFlag, c.ConsumeTimeoutMinute = r.int(), r.int()
	if r.bad {
		return groupconf.Config{}, 0, fmt.Errorf("%w: binary group config", ErrInvalid)
	}
	return c, len(b) - len(r.b), nil
}

func (r *binReader) int64() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}
