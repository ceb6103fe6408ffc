package broker

import (
	"context"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/acl/auth"
	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
	"github.com/runnelmq/runnel/store"
)

// The ACL 2.0 admin requests (AUTH_CREATE_USER .. AUTH_LIST_ACL), adapted
// onto acl/auth's Manager as Java's AdminBrokerProcessor does: a refusal
// is its code and remark; a GET of nothing is SUCCESS with no body.

func (b *Broker) registerAuthHandlers() {
	h := b.srv.Handle
	h(protocol.ReqAuthCreateUser, withHeader(handleUserWrite(b.auth.CreateUser)))
	h(protocol.ReqAuthUpdateUser, withHeader(handleUserWrite(b.auth.UpdateUser)))
	h(protocol.ReqAuthDeleteUser, withHeader(b.handleDeleteUser))
	h(protocol.ReqAuthGetUser, withHeader(b.handleGetUser))
	h(protocol.ReqAuthListUser, withHeader(b.handleListUsers))
	h(protocol.ReqAuthCreateACL, withHeader(b.handlePutACL))
	h(protocol.ReqAuthUpdateACL, withHeader(b.handlePutACL))
	h(protocol.ReqAuthDeleteACL, withHeader(b.handleDeleteACL))
	h(protocol.ReqAuthGetACL, withHeader(b.handleGetACL))
	h(protocol.ReqAuthListACL, withHeader(b.handleListACLs))
}

// ACL 2.0's refusals answer through failure, the broker's one mapping.
var _ core.Refusal = (*auth.Error)(nil)

// authOutcome answers SUCCESS with body, or err's code and remark
// (failure: an *auth.Error is a core.Refusal; so is a slave's refusal of
// the write).
func authOutcome(req *protocol.Command, body []byte, err error) *protocol.Command {
	if err != nil {
		return failure(req, err)
	}
	return success(req, nil, body)
}

// authInterceptor refuses what ACL 2.0's Check refuses, with its code
// and remark.
func (b *Broker) authInterceptor() remoting.Interceptor {
	return remoting.Interceptor{Request: func(_ context.Context, conn *remoting.Conn, req *protocol.Command) *protocol.Command {
		if err := b.auth.Check(conn.RemoteAddr(), req); err != nil {
			return failure(req, err)
		}
		return nil
	},
		// Check reads ext fields with Ext and RangeExtBytes only, so a send
		// or a pull keeps them undecoded for its typed header.
		UndecodedExt: true,
	}
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
		return authOutcome(req, nil, err)
	}
}

func (b *Broker) handleDeleteUser(_ context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.AuthUserRequestHeader) *protocol.Command {
	return authOutcome(req, nil, b.auth.DeleteUser(h.Username, req.ExtFields[acl.FieldAccessKey]))
}

func (b *Broker) handleGetUser(_ context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.AuthUserRequestHeader) *protocol.Command {
	u, ok, err := b.auth.GetUser(h.Username)
	var body []byte
	if ok {
		body = protocol.EncodeAuthBody(u)
	}
	return authOutcome(req, body, err)
}

func (b *Broker) handleListUsers(_ context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.ListUsersRequestHeader) *protocol.Command {
	var body []byte
	if us := b.auth.ListUsers(h.Filter); len(us) > 0 {
		body = protocol.EncodeAuthBody(us)
	}
	return success(req, nil, body)
}

func (b *Broker) handlePutACL(_ context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.AuthACLRequestHeader) *protocol.Command {
	var info protocol.ACLInfo
	if len(req.Body) > 0 {
		var err error
		if info, err = protocol.DecodeACLInfo(req.Body); err != nil {
			return errResponse(req, protocol.RespSystemError, "%v", err)
		}
	}
	return authOutcome(req, nil, b.auth.PutACL(h.Subject, info))
}

func (b *Broker) handleDeleteACL(_ context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.AuthACLRequestHeader) *protocol.Command {
	return authOutcome(req, nil, b.auth.DeleteACL(h.Subject, h.PolicyType, h.Resource))
}

func (b *Broker) handleGetACL(_ context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.AuthACLRequestHeader) *protocol.Command {
	a, ok, err := b.auth.GetACL(h.Subject)
	var body []byte
	if ok {
		body = protocol.EncodeAuthBody(a)
	}
	return authOutcome(req, body, err)
}

func (b *Broker) handleListACLs(_ context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.ListACLsRequestHeader) *protocol.Command {
	var body []byte
	if as := b.auth.ListACLs(h.SubjectFilter, h.ResourceFilter); len(as) > 0 {
		body = protocol.EncodeAuthBody(as)
	}
	return success(req, nil, body)
}

// authStore is the store as ACL 2.0 keeps its users and rules: read from
// the store the core holds now, written through the core's backend, so a
// replicated group's nodes share them (and a slave refuses the write).
type authStore struct{ c *core.Core }

func (s authStore) PutAuth(name string, value []byte) error {
	return s.c.Apply(&store.Op{Kind: store.OpPutAuth, Name: name, Value: value})
}

func (s authStore) DeleteAuth(name string) error {
	return s.c.Apply(&store.Op{Kind: store.OpDeleteAuth, Name: name})
}

func (s authStore) RangeAuth(prefix string, fn func(name string, value []byte) bool) error {
	return s.c.Store().RangeAuth(prefix, fn)
}

func (s authStore) AuthVersion() uint64 { return s.c.Store().AuthVersion() }
