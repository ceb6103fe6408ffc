package grpcdoor

import (
	"testing"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/runnelmq/runnel/broker/core"
)

// TestEveryReasonHasACode: each of the core's refusals maps to a code of
// its own in the one table, never to the catch-all by omission.
func TestEveryReasonHasACode(t *testing.T) {
	for _, r := range core.Reasons() {
		code, ok := reasonCodes[r]
		if !ok || code == v2.Code_CODE_UNSPECIFIED {
			t.Errorf("reason %v has no v2 code", r)
		}
		st := statusOf(&core.Error{Reason: r, Remark: "why"})
		if st.GetCode() != code || st.GetMessage() != "why" {
			t.Errorf("reason %v answered %v %q", r, st.GetCode(), st.GetMessage())
		}
	}
	if st := statusOf(refuse(v2.Code_ILLEGAL_TOPIC, "bad")); st.GetCode() != v2.Code_ILLEGAL_TOPIC {
		t.Errorf("a door refusal answered %v", st.GetCode())
	}
	if st := statusOf(nil); st.GetCode() != v2.Code_OK {
		t.Errorf("no error answered %v", st.GetCode())
	}
}
