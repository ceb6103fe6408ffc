package auth

import (
	"fmt"

	"github.com/runnelmq/runnel/acl"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// Error is a refusal with the response code and remark Java gives it:
// NO_PERMISSION for its AuthenticationException and AuthorizationException,
// INVALID_PARAMETER or SYSTEM_ERROR where its admin processor answers so.
// The broker answers it as it answers its core's refusals, in one place
// (ResponseCode). A Manager's other errors are the store's: a slave's
// refusal of the write carries its own code (SERVICE_NOT_AVAILABLE), and
// a failure is SYSTEM_ERROR.
type Error struct {
	Code int16
	Msg  string
	kind error // acl.ErrUnauthenticated or acl.ErrDenied for a check's refusal
}

func (e *Error) Error() string { return "auth: " + e.Msg }

// Is matches a check's refusal's kind (acl.ErrUnauthenticated,
// acl.ErrDenied).
func (e *Error) Is(target error) bool { return target != nil && target == e.kind }

// ResponseCode is the code and remark a client gets for the refusal.
func (e *Error) ResponseCode() (int16, string) { return e.Code, e.Msg }

func refuse(format string, args ...any) *Error {
	return &Error{Code: protocol.RespNoPermission, Msg: fmt.Sprintf(format, args...)}
}

func unauthenticated(format string, args ...any) *Error {
	return &Error{Code: protocol.RespNoPermission, Msg: fmt.Sprintf(format, args...), kind: acl.ErrUnauthenticated}
}
