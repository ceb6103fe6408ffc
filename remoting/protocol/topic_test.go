package protocol

import (
	"encoding/json"
	"testing"
)

func TestPerm(t *testing.T) {
	tests := []struct {
		perm    int
		r, w, x bool
		str     string
	}{
		{PermRead | PermWrite, true, true, false, "RW-"},
		{PermRead | PermWrite | PermInherit, true, true, true, "RWX"},
		{PermRead, true, false, false, "R--"},
		{PermWrite | PermPriority, false, true, false, "-W-"},
		{0, false, false, false, "---"},
	}
	for _, tt := range tests {
		if IsReadable(tt.perm) != tt.r || IsWriteable(tt.perm) != tt.w || IsInherited(tt.perm) != tt.x || PermString(tt.perm) != tt.str {
			t.Errorf("perm %d: r=%v w=%v x=%v %q", tt.perm, IsReadable(tt.perm), IsWriteable(tt.perm), IsInherited(tt.perm), PermString(tt.perm))
		}
	}
}

func TestTopicListJSON(t *testing.T) {
	b, err := json.Marshal(TopicList{})
	if err != nil || string(b) != `{"topicList":[]}` {
		t.Fatalf("%s %v", b, err)
	}
	b, _ = json.Marshal(TopicList{TopicList: []string{"a"}, BrokerAddr: "x:1"})
	if string(b) != `{"topicList":["a"],"brokerAddr":"x:1"}` {
		t.Fatalf("%s", b)
	}
}

func TestDataVersionNext(t *testing.T) {
	v := DataVersion{Timestamp: 1, Counter: 9, StateVersion: 2}.Next(7)
	if v != (DataVersion{Timestamp: 7, Counter: 10, StateVersion: 2}) {
		t.Fatalf("%+v", v)
	}
}

func TestTopicConfigSerializeWrapperEmptyTable(t *testing.T) {
	b, err := json.Marshal(TopicConfigSerializeWrapper{})
	if err != nil || string(b) != `{"topicConfigTable":{},"dataVersion":{"timestamp":0,"counter":0,"stateVersion":0}}` {
		t.Fatalf("%s %v", b, err)
	}
}
