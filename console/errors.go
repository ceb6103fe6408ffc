package console

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// errView is an error as a page or the API shows it: in words, with the
// response code's name and meaning and the remark when the cluster
// refused, and who answered.
type errView struct {
	// Title says what failed, in a few words.
	Title string `json:"title"`
	// Code, CodeName, Meaning and Remark are a refusal's; Node who gave it.
	Code     int16  `json:"code,omitempty"`
	CodeName string `json:"codeName,omitempty"`
	Meaning  string `json:"meaning,omitempty"`
	Remark   string `json:"remark,omitempty"`
	Node     string `json:"node,omitempty"`
	// Detail is the whole error text.
	Detail string `json:"detail"`
	status int
}

// describe turns err into words and the HTTP status it answers with.
func describe(err error) *errView {
	if err == nil {
		return nil
	}
	v := &errView{Detail: strings.TrimPrefix(err.Error(), "admin: "), status: http.StatusBadGateway}
	var re *admin.ResponseError
	var ce *admin.CallError
	var ue *userError
	switch {
	case errors.As(err, &ue):
		v.Title, v.status = ue.msg, ue.status
		v.Detail = ue.msg
	case errors.As(err, &re):
		v.Title = "The cluster refused: " + re.Op
		v.Code, v.CodeName, v.Meaning, v.Remark, v.Node = re.Code, protocol.ResponseCodeName(re.Code), re.Meaning(), re.Remark, re.Node
		v.status = http.StatusBadGateway
		switch {
		case errors.Is(err, admin.ErrNotFound):
			v.status = http.StatusNotFound
		case re.Code == protocol.RespNoPermission:
			v.status = http.StatusForbidden
		}
	case errors.As(err, &ce):
		v.Title = "No answer from " + ce.Node
		v.Node = ce.Node
		if errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "timeout") {
			v.Meaning = "the request timed out"
		} else {
			v.Meaning = "it could not be reached: is it running, and is the address right?"
		}
	case errors.Is(err, admin.ErrBadArgument):
		v.Title, v.status = "Not a valid request", http.StatusBadRequest
	case errors.Is(err, admin.ErrNotFound):
		v.Title, v.status = "Not found", http.StatusNotFound
	case errors.Is(err, admin.ErrNotOnline):
		v.Title, v.status = "No consumer online", http.StatusConflict
	case errors.Is(err, admin.ErrNoBroker):
		v.Title = "No broker to ask"
	default:
		v.Title = "The request failed"
	}
	return v
}

// userError is a request the console itself refuses (a missing field, an
// unconfirmed deletion), with its HTTP status.
type userError struct {
	msg    string
	status int
}

func (e *userError) Error() string { return e.msg }

func badRequest(msg string) error { return &userError{msg: msg, status: http.StatusBadRequest} }
