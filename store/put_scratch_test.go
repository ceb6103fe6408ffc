package store

import (
	"fmt"
	"testing"

	"github.com/runnelmq/runnel/message"
)

// A Put's pooled scratch lets go of the messages' strings when the Put
// returns, whether the properties fit the scratch or outgrew it, and a
// batch's grown slices are kept for the next batch.
func TestPutScratchReleasesMessageStrings(t *testing.T) {
	s, _, _ := openMem(t)
	defer s.Close()
	for _, tc := range []struct{ n, props int }{{1, 2}, {1, 12}, {3, 2}, {3, 9}} {
		msgs := make([]*message.MessageExt, tc.n)
		for i := range msgs {
			msgs[i] = msg("T", 0, "b", message.PropertyKeys, "secret-key")
			for j := 1; j < tc.props; j++ {
				msgs[i].SetProperty(fmt.Sprintf("P%02d", j), "secret")
			}
		}
		sc := newPutScratch(tc.n)
		oneProps := sc.one.props[:]
		sc.op = Op{Kind: OpAppend, Messages: sc.msgs}
		b, err := s.buildPut(&sc.op, msgs, sc)
		if err != nil {
			t.Fatal(err)
		}
		_ = b.Close()
		grown := cap(sc.props)
		sc.release()
		pooled := oneProps
		if tc.n > 1 {
			pooled = sc.many.props[:cap(sc.many.props)]
			if cap(sc.many.props) != grown {
				t.Errorf("%+v: the pool kept props of capacity %d, the batch grew them to %d", tc, cap(sc.many.props), grown)
			}
		}
		for _, p := range pooled {
			if p.Value != "" {
				t.Errorf("%+v: the pooled scratch still holds property %s=%s", tc, p.Name, p.Value)
				break
			}
		}
		// The messages' topics, keys and records, and the slots into the batch.
		pooledMsgs, pooledSlots := sc.one.msg[:], sc.one.slot[:]
		if tc.n > 1 {
			pooledMsgs, pooledSlots = sc.many.msgs[:cap(sc.many.msgs)], sc.many.slots[:cap(sc.many.slots)]
		}
		for i := range pooledMsgs {
			if m := pooledMsgs[i]; m.Topic != "" || m.Keys != nil || m.UniqKey != "" || m.Record != nil {
				t.Errorf("%+v: the pooled scratch still holds message %d: %+v", tc, i, m)
				break
			}
		}
		for i := range pooledSlots {
			if sl := pooledSlots[i]; sl.rec != nil || sl.logKey != nil || sl.hashes != nil {
				t.Errorf("%+v: the pooled scratch still points into a batch (slot %d)", tc, i)
				break
			}
		}
	}
}
