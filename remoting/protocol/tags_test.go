package protocol

import (
	"reflect"
	"testing"
)

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

func TestParseSubExpression(t *testing.T) {
	tests := []struct {
		expr  string
		tags  []string
		codes []int64
		all   bool
	}{
		{"*", nil, nil, true},
		{"", nil, nil, true},
		{"  * ", nil, nil, true},
		{"TagA", []string{"TagA"}, []int64{2598919}, false},
		{"TagA || TagB", []string{"TagA", "TagB"}, []int64{2598919, 2598920}, false},
		{"TagB||TagA|| TagB ||  || ", []string{"TagB", "TagA"}, []int64{2598920, 2598919}, false},
		{"A|B", []string{"A|B"}, []int64{TagsHashCode("A|B")}, false},
		{"||", nil, nil, false},
	}
	for _, tt := range tests {
		tags, codes := ParseSubExpression(tt.expr)
		if !reflect.DeepEqual(tags, tt.tags) || !reflect.DeepEqual(codes, tt.codes) || IsSubAll(tt.expr) != tt.all {
			t.Errorf("%q: %q %v all=%v, want %q %v %v", tt.expr, tags, codes, IsSubAll(tt.expr), tt.tags, tt.codes, tt.all)
		}
	}
}

func TestSubscriptionMatching(t *testing.T) {
	all := BuildSubscriptionData("T", "*")
	if all.SubString != "*" || all.ExpressionType != ExpressionTypeTag || !all.MatchesTag("") || !all.MatchesTagsCode(123) {
		t.Errorf("all: %+v", all)
	}
	s := BuildSubscriptionData("T", "TagA || 中")
	if !s.MatchesTag("TagA") || !s.MatchesTag("中") || s.MatchesTag("TagB") || s.MatchesTag("") {
		t.Error("MatchesTag")
	}
	if !s.MatchesTagsCode(TagsHashCode("中")) || !s.MatchesTagsCode(2598919) || s.MatchesTagsCode(TagsHashCode("TagB")) {
		t.Error("MatchesTagsCode")
	}
	// A heartbeat from the Go client carries byte-hash codes; matching still
	// works because tagsSet is consulted.
	goSub := SubscriptionData{SubString: "中", TagsSet: []string{"中"}, CodeSet: CodeSet{goClientHash("中")}}
	if !goSub.MatchesTagsCode(TagsHashCode("中")) || !goSub.MatchesTag("中") {
		t.Error("Go client subscription does not match Java tag code")
	}
	// Codes only (no tags sent).
	codesOnly := SubscriptionData{SubString: "X", CodeSet: CodeSet{TagsHashCode("X")}}
	if !codesOnly.MatchesTag("X") || codesOnly.MatchesTag("Y") {
		t.Error("codes-only subscription")
	}
}
