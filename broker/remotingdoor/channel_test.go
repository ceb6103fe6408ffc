package remotingdoor

import "testing"

func TestRawField(t *testing.T) {
	for _, tc := range []struct {
		body, want string
		ok         bool
	}{
		{`{"messageQueueTable":{{"topic":"T"}:1}}`, `{{"topic":"T"}:1}`, true},
		{`{"a":"messageQueueTable","messageQueueTable" : [1,{"x":"}"}] }`, `[1,{"x":"}"}]`, true},
		{`{"x":{"messageQueueTable":1}}`, ``, false},
		{`{"messageQueueTable":12,"b":2}`, `12`, true},
		{`{"messageQueueTable":{`, ``, false},
		{`{"s":"\"messageQueueTable\":1"}`, ``, false},
	} {
		got, ok := rawField([]byte(tc.body), "messageQueueTable")
		if ok != tc.ok || string(got) != tc.want {
			t.Errorf("rawField(%s) = %s %v, want %s %v", tc.body, got, ok, tc.want, tc.ok)
		}
	}
}
