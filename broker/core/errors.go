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

// CodeOf returns the response code and remark for err: its own for an
// *Error, SYSTEM_ERROR with the error's text for anything else.
func CodeOf(err error) (int16, string) {
	var e *Error
	if errors.As(err, &e) {
		return e.Code, e.Remark
	}
	return protocol.RespSystemError, err.Error()
}

// ErrClientTimeout is what a Channel's call returns (wrapped) when the
// client did not answer in time.
var ErrClientTimeout = errors.New("core: client did not answer in time")
