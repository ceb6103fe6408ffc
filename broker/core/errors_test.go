package core

import (
	"errors"
	"fmt"
	"testing"
)

// TestReasonOf: a refusal is found through wraps (a slave's refusal wraps
// ErrNotMaster beside it); another error has none.
func TestReasonOf(t *testing.T) {
	slave := refuse(Unavailable, "slave")
	for _, tc := range []struct {
		err    error
		reason Reason
		remark string
		ok     bool
	}{
		{slave, Unavailable, "slave", true},
		{fmt.Errorf("%w (%w)", slave, ErrNotMaster), Unavailable, "slave", true},
		{errors.New("disk"), 0, "", false},
	} {
		e, ok := ReasonOf(tc.err)
		if ok != tc.ok || ok && (e.Reason != tc.reason || e.Remark != tc.remark) {
			t.Errorf("ReasonOf(%v) = %+v %v", tc.err, e, ok)
		}
	}
	for _, r := range Reasons() {
		if s := r.String(); s == "" || s == fmt.Sprintf("reason(%d)", r) {
			t.Errorf("reason %d has no name", r)
		}
	}
}
