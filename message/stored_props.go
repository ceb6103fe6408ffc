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
		if string(item[:i]) == name {
			val, found = item[i+1:], true
		}
	}
	return string(val), found
}
