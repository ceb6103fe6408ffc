package remotingdoor

import (
	"context"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/acl/auth"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// The ACL 2.0 admin requests (AUTH_CREATE_USER .. AUTH_LIST_ACL), adapted
// onto acl/auth's Manager as Java's AdminBrokerProcessor does: a refusal
// is its code and remark; a GET of nothing is SUCCESS with no body.

func (d *Door) registerAuthHandlers() {
	h := d.srv.Handle
	h(protocol.ReqAuthCreateUser, withHeader(handleUserWrite(d.auth.CreateUser)))
	h(protocol.ReqAuthUpdateUser, withHeader(handleUserWrite(d.auth.UpdateUser)))
	h(protocol.ReqAuthDeleteUser, withHeader(d.handleDeleteUser))
	h(protocol.ReqAuthGetUser, withHeader(d.handleGetUser))
	h(protocol.ReqAuthListUser, withHeader(d.handleListUsers))
	h(protocol.ReqAuthCreateACL, withHeader(d.handlePutACL))
	h(protocol.ReqAuthUpdateACL, withHeader(d.handlePutACL))
	h(protocol.ReqAuthDeleteACL, withHeader(d.handleDeleteACL))
	h(protocol.ReqAuthGetACL, withHeader(d.handleGetACL))
	h(protocol.ReqAuthListACL, withHeader(d.handleListACLs))
}

// ACL 2.0's refusals answer with their own code (codes.go).
var _ refusal = (*auth.Error)(nil)

// authBodyIf is v's JSON body when there is one to send, else no body:
// Java answers a GET or LIST of nothing with SUCCESS and a null body.
func authBodyIf(there bool, v any) []byte {
	if !there {
		return nil
	}
	return protocol.EncodeAuthBody(v)
}

// userBody reads a UserInfo body named by the header's username; an
// empty body is a user with no fields but its name (Java decodes null).
func userBody(req *protocol.Command, h *protocol.AuthUserRequestHeader) (protocol.UserInfo, error) {
	var u protocol.UserInfo
	if len(req.Body) > 0 {
		var err error
		if u, err = protocol.DecodeUserInfo(req.Body); err != nil {
			return u, &auth.Error{Code: protocol.RespSystemError, Msg: err.Error()}
		}
	}
	u.Username = h.Username
	return u, nil
}

// handleUserWrite answers AUTH_CREATE_USER or AUTH_UPDATE_USER with
// write, the Manager's create or update, for the caller's access key.
func handleUserWrite(write func(u protocol.UserInfo, callerAK string) error) func(context.Context, *remoting.Conn, *protocol.Command, *protocol.AuthUserRequestHeader) *protocol.Command {
	return func(_ context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.AuthUserRequestHeader) *protocol.Command {
		u, err := userBody(req, h)
		if err == nil {
			err = write(u, req.ExtFields[acl.FieldAccessKey])
		}
		return answerWith(req, nil, nil, err)
	}
}

func (d *Door) handleDeleteUser(_ context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.AuthUserRequestHeader) *protocol.Command {
	return answerWith(req, nil, nil, d.auth.DeleteUser(h.Username, req.ExtFields[acl.FieldAccessKey]))
}

func (d *Door) handleGetUser(_ context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.AuthUserRequestHeader) *protocol.Command {
	u, ok, err := d.auth.GetUser(h.Username)
	return answerWith(req, nil, authBodyIf(ok, u), err)
}

func (d *Door) handleListUsers(_ context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.ListUsersRequestHeader) *protocol.Command {
	us := d.auth.ListUsers(h.Filter)
	return success(req, nil, authBodyIf(len(us) > 0, us))
}

func (d *Door) handlePutACL(_ context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.AuthACLRequestHeader) *protocol.Command {
	var info protocol.ACLInfo
	if len(req.Body) > 0 {
		var err error
		if info, err = protocol.DecodeACLInfo(req.Body); err != nil {
			return errResponse(req, protocol.RespSystemError, "%v", err)
		}
	}
	return answerWith(req, nil, nil, d.auth.PutACL(h.Subject, info))
}

func (d *Door) handleDeleteACL(_ context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.AuthACLRequestHeader) *protocol.Command {
	return answerWith(req, nil, nil, d.auth.DeleteACL(h.Subject, h.PolicyType, h.Resource))
}

func (d *Door) handleGetACL(_ context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.AuthACLRequestHeader) *protocol.Command {
	a, ok, err := d.auth.GetACL(h.Subject)
	return answerWith(req, nil, authBodyIf(ok, a), err)
}

func (d *Door) handleListACLs(_ context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.ListACLsRequestHeader) *protocol.Command {
	as := d.auth.ListACLs(h.SubjectFilter, h.ResourceFilter)
	return success(req, nil, authBodyIf(len(as) > 0, as))
}
