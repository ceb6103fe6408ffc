package message

import "unicode/utf8"

// TagsHashCode is the tag code RocketMQ stores in consume-queue entries and
// subscriptions: Java's String.hashCode of the tag, computed over UTF-16 code
// units (a code point above U+FFFF counts as its two surrogates), widened to
// int64. Invalid UTF-8 counts as U+FFFD per bad byte. For ASCII tags it
// equals the official Go client's byte hash; for other tags the two differ,
// and Java's is the one brokers use.
func TagsHashCode(tag string) int64 {
	var h int32
	for i := 0; i < len(tag); {
		c := tag[i]
		if c < utf8.RuneSelf {
			h = 31*h + int32(c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(tag[i:])
		i += n
		if r > 0xFFFF {
			r -= 0x10000
			h = 31*h + int32(0xD800+(r>>10))
			h = 31*h + int32(0xDC00+(r&0x3FF))
			continue
		}
		h = 31*h + int32(r)
	}
	return int64(h)
}
