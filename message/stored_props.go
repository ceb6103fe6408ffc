package message

import (
	"bytes"
	"encoding/binary"
)

// StoredProperties returns the raw property string of an encoded record
// (name\x01value pairs joined by \x02) without decoding the rest; ok is
// false when the record is too short to hold it. It aliases rec.
func StoredProperties(rec []byte) (props []byte, ok bool) {
	topic, ok := StoredTopic(rec)
	if !ok {
		return nil, false
	}
	// The topic aliases rec: the property length follows it.
	pos := cap(rec) - cap(topic) + len(topic)
	if pos+2 > len(rec) {
		return nil, false
	}
	n := int(binary.BigEndian.Uint16(rec[pos:]))
	if pos+2+n > len(rec) {
		return nil, false
	}
	return rec[pos+2 : pos+2+n], true
}

// LookupProperty finds name in a raw property string as
// UnmarshalProperties would read it (the last well-formed entry of that
// name wins), without building a map.
func LookupProperty(props []byte, name string) (string, bool) {
	var val []byte
	found := false
	eachProperty(props, func(n, v []byte) {
		if string(n) == name {
			val, found = v, true
		}
	})
	return string(val), found
}

// eachProperty calls fn with each entry of a raw property string that
// UnmarshalProperties keeps (exactly one name and one value), in order.
func eachProperty(props []byte, fn func(name, value []byte)) {
	for len(props) > 0 {
		item := props
		if i := bytes.IndexByte(props, PropertySeparator); i >= 0 {
			item, props = props[:i], props[i+1:]
		} else {
			props = nil
		}
		i := bytes.IndexByte(item, NameValueSeparator)
		if i < 0 || bytes.IndexByte(item[i+1:], NameValueSeparator) >= 0 {
			continue
		}
		fn(item[:i], item[i+1:])
	}
}

// StoredIndex is what a store derives from a record to place and index it:
// its queue, queue offset and store time, and the properties its tag code
// and its key index are made of, as (*Message).Tags, Keys and UniqKey read
// them from the decoded message (Keys is the KEYS value before it is split
// into words). The byte slices alias the record.
type StoredIndex struct {
	Topic          []byte
	QueueID        int32
	QueueOffset    int64
	StoreTimestamp int64
	Tags           []byte
	Keys           []byte
	UniqKey        []byte
}

// IndexStoredRecord reads the record at the start of b as
// DecodeStoredMessage does, accepting and refusing the same records, and
// returns its size and what a store derives from it, without building the
// message: no properties map, no strings. A replica applies every
// replicated record through it.
func IndexStoredRecord(b []byte) (StoredIndex, int, error) {
	var m MessageExt
	size, _, topic, props, err := readStored(&m, b)
	if err != nil {
		return StoredIndex{}, 0, err
	}
	ix := StoredIndex{Topic: topic, QueueID: m.QueueID, QueueOffset: m.QueueOffset, StoreTimestamp: m.StoreTimestamp}
	eachProperty(props, func(name, value []byte) {
		switch string(name) {
		case PropertyTags:
			ix.Tags = value
		case PropertyKeys:
			ix.Keys = value
		case PropertyUniqClientMessageIDKey:
			ix.UniqKey = value
		}
	})
	return ix, size, nil
}
