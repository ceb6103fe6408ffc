package core

import (
	"errors"
	"fmt"
	"testing"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// otherRefusal stands for a refusal of a package beside the core
// (acl/auth's *Error).
type otherRefusal struct{}

func (otherRefusal) Error() string                 { return "other" }
func (otherRefusal) ResponseCode() (int16, string) { return protocol.RespNoPermission, "no" }

// TestCodeOf: any Refusal in an error's chain answers with its own code
// and remark, through single and multiple wraps; anything else is
// SYSTEM_ERROR with its text.
func TestCodeOf(t *testing.T) {
	slave := refuse(protocol.RespServiceNotAvailable, "slave")
	for _, tc := range []struct {
		err    error
		code   int16
		remark string
	}{
		{slave, protocol.RespServiceNotAvailable, "slave"},
		{fmt.Errorf("%w (%w)", slave, ErrNotMaster), protocol.RespServiceNotAvailable, "slave"},
		{fmt.Errorf("auth: write: %w", otherRefusal{}), protocol.RespNoPermission, "no"},
		{errors.New("disk"), protocol.RespSystemError, "disk"},
	} {
		if code, remark := CodeOf(tc.err); code != tc.code || remark != tc.remark {
			t.Errorf("CodeOf(%v) = %d %q, want %d %q", tc.err, code, remark, tc.code, tc.remark)
		}
	}
}
