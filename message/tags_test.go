package message

import "testing"

// goClientHash is the official Go client's tag hash (utils.HashString):
// Java's formula over UTF-8 bytes instead of UTF-16 units.
func goClientHash(s string) int64 {
	var h int32
	for i := 0; i < len(s); i++ {
		h = 31*h + int32(s[i])
	}
	return int64(h)
}

func TestTagsHashCode(t *testing.T) {
	// Values of Java's String.hashCode.
	tests := map[string]int64{
		"":      0,
		"TagA":  2598919, // seen on the wire (fact sheet 7)
		"TagB":  2598920,
		"hello": 99162322,
		"Aa":    2112, // collides with "BB"
		"BB":    2112,
		"中":     0x4E2D,
		"😀":     31*0xD83D + 0xDE00, // one code point, two UTF-16 units
		"a😀b":   ((97*31+0xD83D)*31+0xDE00)*31 + 98,
		// Overflow wraps like Java's int.
		"the quick brown fox jumps over the lazy dog": -2082818701,
	}
	for s, want := range tests {
		if got := TagsHashCode(s); got != want {
			t.Errorf("TagsHashCode(%q) = %d, want %d", s, got, want)
		}
	}
	// ASCII tags hash like the official client; others do not.
	for _, s := range []string{"TagA", "order-created", "x_1|y"} {
		if TagsHashCode(s) != goClientHash(s) {
			t.Errorf("%q: Java %d, Go client %d", s, TagsHashCode(s), goClientHash(s))
		}
	}
	if TagsHashCode("中") == goClientHash("中") {
		t.Error("non-ASCII hashes unexpectedly agree")
	}
	// Invalid UTF-8 counts as U+FFFD per byte.
	if TagsHashCode("\xff") != 0xFFFD {
		t.Errorf("invalid byte: %d", TagsHashCode("\xff"))
	}
}
