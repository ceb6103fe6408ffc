package core

import (
	"errors"
	"fmt"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// Error is a refusal with the RocketMQ response code and remark a client
// gets for it. Every front door turns it into its own answer in one place
// (the remoting adapter: code and remark of the response).
type Error struct {
	Code   int16
	Remark string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s (%d): %s", protocol.ResponseCodeName(e.Code), e.Code, e.Remark)
}

// errorf returns a refusal with code and a formatted remark.
func errorf(code int16, format string, args ...any) *Error {
	return &Error{Code: code, Remark: fmt.Sprintf(format, args...)}
}

// refuse returns a refusal with code and a remark taken as it is.
func refuse(code int16, remark string) *Error { return &Error{Code: code, Remark: remark} }

// ResponseCode is the code and remark a client gets for the refusal.
func (e *Error) ResponseCode() (int16, string) { return e.Code, e.Remark }

// Refusal is an error that carries the response code and remark a client
// gets for it: an *Error, or a refusal of a package the broker wires
// beside the core (acl/auth's *Error, ACL 2.0's), which answer as Java
// does.
type Refusal interface {
	error
	ResponseCode() (code int16, remark string)
}

// CodeOf returns the response code and remark for err: its own for a
// Refusal (the first in err's chain), SYSTEM_ERROR with the error's text
// for anything else. It is the one mapping of an error to an answer.
func CodeOf(err error) (int16, string) {
	var r Refusal
	if errors.As(err, &r) {
		return r.ResponseCode()
	}
	return protocol.RespSystemError, err.Error()
}

// ErrClientTimeout is what a Channel's call returns (wrapped) when the
// client did not answer in time.
var ErrClientTimeout = errors.New("core: client did not answer in time")
