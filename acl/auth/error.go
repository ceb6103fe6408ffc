package auth

import (
	"fmt"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// Error is a refusal with the response code and remark Java gives it:
// NO_PERMISSION for its AuthenticationException and AuthorizationException,
// INVALID_PARAMETER or SYSTEM_ERROR where its admin processor answers so.
type Error struct {
	Code int16
	Msg  string
}

func (e *Error) Error() string { return "auth: " + e.Msg }

// Response is the refusal's answer to req.
func (e *Error) Response(req *protocol.Command) *protocol.Command {
	return protocol.NewResponse(req, e.Code, e.Msg)
}

func refuse(format string, args ...any) *Error {
	return &Error{Code: protocol.RespNoPermission, Msg: fmt.Sprintf(format, args...)}
}
