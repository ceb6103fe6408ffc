package protocol

import (
	"reflect"
	"testing"

	"github.com/runnelmq/runnel/message"
)

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
		{"A|B", []string{"A|B"}, []int64{message.TagsHashCode("A|B")}, false},
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
	if !s.MatchesTagsCode(message.TagsHashCode("中")) || !s.MatchesTagsCode(2598919) || s.MatchesTagsCode(message.TagsHashCode("TagB")) {
		t.Error("MatchesTagsCode")
	}
	// A heartbeat from the Go client carries byte-hash codes; matching still
	// works because tagsSet is consulted.
	goSub := SubscriptionData{SubString: "中", TagsSet: []string{"中"}, CodeSet: CodeSet{224985}} // the Go client's byte hash of "中"
	if !goSub.MatchesTagsCode(message.TagsHashCode("中")) || !goSub.MatchesTag("中") {
		t.Error("Go client subscription does not match Java tag code")
	}
	// Codes only (no tags sent).
	codesOnly := SubscriptionData{SubString: "X", CodeSet: CodeSet{message.TagsHashCode("X")}}
	if !codesOnly.MatchesTag("X") || codesOnly.MatchesTag("Y") {
		t.Error("codes-only subscription")
	}
}
