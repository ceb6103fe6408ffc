package metrics

import (
	"testing"

	"github.com/runnelmq/runnel/remoting/protocol"
)

func TestTypeOf(t *testing.T) {
	for _, c := range []struct {
		props map[string]string
		want  msgType
	}{
		{nil, typeNormal},
		{map[string]string{"TAGS": "a", "KEYS": "k"}, typeNormal},
		{map[string]string{"TRAN_MSG": "true", "DELAY": "3"}, typeTransaction},
		{map[string]string{"TRAN_MSG": "false"}, typeNormal},
		{map[string]string{"SHARDING_KEY": "k", "DELAY": "3"}, typeFIFO},
		{map[string]string{"DELAY": "3"}, typeDelay},
		{map[string]string{"TIMER_DELIVER_MS": "1700000000000"}, typeDelay},
		{map[string]string{"__STARTDELIVERTIME": "1700000000000"}, typeDelay},
		{map[string]string{"XDELAY": "3"}, typeNormal},
	} {
		if got := typeOf(protocol.MarshalProperties(c.props)); got != c.want {
			t.Errorf("typeOf(%v) = %s, want %s", c.props, msgTypeNames[got], msgTypeNames[c.want])
		}
	}
}

// TestLabelSetBound: the first limit values are kept, the rest are Other,
// and an admitted value stays admitted.
func TestLabelSetBound(t *testing.T) {
	s := newLabelSet(2)
	for _, c := range []struct{ in, want string }{
		{"a", "a"}, {"b", "b"}, {"c", Other}, {"a", "a"}, {"d", Other}, {"b", "b"},
	} {
		if got := s.Value(c.in); got != c.want {
			t.Errorf("Value(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
