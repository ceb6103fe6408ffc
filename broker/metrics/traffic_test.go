package metrics

import (
	"testing"
	"time"

	"github.com/runnelmq/runnel/message"
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
		if got := typeOf(message.MarshalProperties(c.props)); got != c.want {
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

// FuzzObserve: whatever a send or pull carries, counting it never panics
// and never counts more messages than its body could hold.
func FuzzObserve(f *testing.F) {
	batch, _ := protocol.AppendBatch(nil, []*protocol.Message{{Body: []byte("a")}, {Body: []byte("bb")}})
	f.Add(int16(protocol.ReqSendBatchMessage), batch)
	f.Add(int16(protocol.ReqPullMessage), []byte{0, 0, 0, 8, 1, 2, 3, 4})
	f.Add(int16(protocol.ReqSendMessage), []byte("x"))
	f.Fuzz(func(t *testing.T, code int16, body []byte) {
		m := New(Config{ExporterType: ExporterProm}, Deps{Cluster: "c", Node: "n"})
		req := protocol.NewRequest(code, map[string]string{"topic": "T", "b": "T", "consumerGroup": "g", "queueId": "0"}, body)
		resp := protocol.NewResponse(req, protocol.RespSuccess, "")
		resp.Body = body
		resp.ExtFields = map[string]string{"nextBeginOffset": "5"}
		m.observe(nil, req, resp, time.Millisecond)
		mfs, err := m.Gatherer().Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() != "rocketmq_messages_in_total" && mf.GetName() != "rocketmq_messages_out_total" {
				continue
			}
			for _, s := range mf.Metric {
				if v := s.Counter.GetValue(); v > float64(len(body)/4+1) {
					t.Fatalf("%s = %v for a body of %d bytes", mf.GetName(), v, len(body))
				}
			}
		}
	})
}
