package remotingdoor

import (
	"fmt"
	"testing"

	"github.com/runnelmq/runnel/acl/auth"
	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// TestEveryReasonHasACode: a reason added to the core without a code here
// would be answered SYSTEM_ERROR by accident.
func TestEveryReasonHasACode(t *testing.T) {
	for _, r := range core.Reasons() {
		if _, ok := codes[r]; !ok {
			t.Errorf("reason %v has no response code", r)
		}
	}
	if len(codes) != len(core.Reasons()) {
		t.Errorf("%d codes for %d reasons", len(codes), len(core.Reasons()))
	}
}

func TestCodeOf(t *testing.T) {
	for _, tc := range []struct {
		err    error
		code   int16
		remark string
	}{
		{core.Refuse(core.TopicNotFound, "topic[%s] not exist", "T"), protocol.RespTopicNotExist, "topic[T] not exist"},
		{fmt.Errorf("wrapped: %w", core.Refuse(core.Unavailable, "full")), protocol.RespServiceNotAvailable, "full"},
		{&auth.Error{Code: protocol.RespNoPermission, Msg: "denied"}, protocol.RespNoPermission, "denied"},
		{fmt.Errorf("disk on fire"), protocol.RespSystemError, "disk on fire"},
	} {
		code, remark := codeOf(tc.err)
		if code != tc.code || remark != tc.remark {
			t.Errorf("codeOf(%v) = %d %q, want %d %q", tc.err, code, remark, tc.code, tc.remark)
		}
	}
}
