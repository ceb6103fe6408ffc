package admin

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// ACL 2.0 users and ACLs (RocketMQ 5.3, the AUTH_* requests), as mqadmin's
// createUser, updateUser, deleteUser, getUser, listUser, createAcl,
// updateAcl, deleteAcl, getAcl and listAcl have them. Each goes to the
// broker at Where.Broker, or to every master of Where.Cluster (every
// cluster when both are ""); a read asks the first of those.

// Where picks the brokers an ACL 2.0 request goes to.
type Where struct {
	Broker  string // a broker address; wins over Cluster
	Cluster string // a cluster name; "" every cluster
}

func (a *Admin) authTargets(ctx context.Context, w Where) ([]Node, error) {
	if w.Broker != "" {
		return []Node{{Addr: w.Broker}}, nil
	}
	info, err := a.ClusterInfo(ctx)
	if err != nil {
		return nil, err
	}
	return masterRefs(info, w.Cluster)
}

// authWrite sends req to every target, stopping at the first refusal.
func (a *Admin) authWrite(ctx context.Context, op string, w Where, req *protocol.Command) ([]Node, error) {
	targets, err := a.authTargets(ctx, w)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return a.callAll(ctx, op, targets, req)
}

// authRead sends req to the first target and decodes its body into v;
// found is false for an answer without a body.
func (a *Admin) authRead(ctx context.Context, op string, w Where, req *protocol.Command, v any) (found bool, err error) {
	targets, err := a.authTargets(ctx, w)
	if err != nil {
		return false, fmt.Errorf("%s: %w", op, err)
	}
	resp, err := a.callBrokerOK(ctx, op, targets[0], req)
	if err != nil || len(resp.Body) == 0 {
		return false, err
	}
	if err := json.Unmarshal(resp.Body, v); err != nil {
		return false, fmt.Errorf("admin: %s: %s: %w", op, targets[0], err)
	}
	return true, nil
}

func userRequest(code int16, u protocol.UserInfo) *protocol.Command {
	name := u.Username
	u.Username = ""
	return protocol.NewRequest(code, protocol.AuthUserRequestHeader{Username: name}.Encode(), protocol.EncodeAuthBody(u))
}

// CreateUser creates user u (a Normal, enabled user unless u says).
func (a *Admin) CreateUser(ctx context.Context, w Where, u protocol.UserInfo) ([]Node, error) {
	return a.authWrite(ctx, fmt.Sprintf("create user %q", u.Username), w, userRequest(protocol.ReqAuthCreateUser, u))
}

// UpdateUser changes what u gives of a user's password, type and status.
func (a *Admin) UpdateUser(ctx context.Context, w Where, u protocol.UserInfo) ([]Node, error) {
	return a.authWrite(ctx, fmt.Sprintf("update user %q", u.Username), w, userRequest(protocol.ReqAuthUpdateUser, u))
}

// DeleteUser deletes a user and its ACL.
func (a *Admin) DeleteUser(ctx context.Context, w Where, name string) ([]Node, error) {
	req := protocol.NewRequest(protocol.ReqAuthDeleteUser, protocol.AuthUserRequestHeader{Username: name}.Encode(), nil)
	return a.authWrite(ctx, fmt.Sprintf("delete user %q", name), w, req)
}

// GetUser returns a user; found is false when there is none.
func (a *Admin) GetUser(ctx context.Context, w Where, name string) (u protocol.UserInfo, found bool, err error) {
	req := protocol.NewRequest(protocol.ReqAuthGetUser, protocol.AuthUserRequestHeader{Username: name}.Encode(), nil)
	found, err = a.authRead(ctx, fmt.Sprintf("get user %q", name), w, req, &u)
	return u, found, err
}

// ListUsers returns the users whose name contains filter.
func (a *Admin) ListUsers(ctx context.Context, w Where, filter string) ([]protocol.UserInfo, error) {
	req := protocol.NewRequest(protocol.ReqAuthListUser, protocol.ListUsersRequestHeader{Filter: filter}.Encode(), nil)
	var us []protocol.UserInfo
	_, err := a.authRead(ctx, "list users", w, req, &us)
	return us, err
}

// CreateACL adds acl's entries to its subject's ACL (an entry replaces the
// one of the same resource); UpdateACL is the same request under its own
// code, as in RocketMQ.
func (a *Admin) CreateACL(ctx context.Context, w Where, acl protocol.ACLInfo) ([]Node, error) {
	return a.putACL(ctx, protocol.ReqAuthCreateACL, "create", w, acl)
}

// UpdateACL: see CreateACL.
func (a *Admin) UpdateACL(ctx context.Context, w Where, acl protocol.ACLInfo) ([]Node, error) {
	return a.putACL(ctx, protocol.ReqAuthUpdateACL, "update", w, acl)
}

func (a *Admin) putACL(ctx context.Context, code int16, verb string, w Where, acl protocol.ACLInfo) ([]Node, error) {
	req := protocol.NewRequest(code, protocol.AuthACLRequestHeader{Subject: acl.Subject}.Encode(), protocol.EncodeAuthBody(acl))
	return a.authWrite(ctx, fmt.Sprintf("%s acl of %q", verb, acl.Subject), w, req)
}

// DeleteACL deletes subject's ACL, or only its entry for resource ("" all)
// in policy type policyType ("" Custom).
func (a *Admin) DeleteACL(ctx context.Context, w Where, subject, policyType, resource string) ([]Node, error) {
	req := protocol.NewRequest(protocol.ReqAuthDeleteACL,
		protocol.AuthACLRequestHeader{Subject: subject, PolicyType: policyType, Resource: resource}.Encode(), nil)
	return a.authWrite(ctx, fmt.Sprintf("delete acl of %q", subject), w, req)
}

// GetACL returns subject's ACL; found is false when it has none.
func (a *Admin) GetACL(ctx context.Context, w Where, subject string) (acl protocol.ACLInfo, found bool, err error) {
	req := protocol.NewRequest(protocol.ReqAuthGetACL, protocol.AuthACLRequestHeader{Subject: subject}.Encode(), nil)
	found, err = a.authRead(ctx, fmt.Sprintf("get acl of %q", subject), w, req, &acl)
	return acl, found, err
}

// ListACLs returns the ACLs whose subject contains subjectFilter, with
// their entries whose resource contains resourceFilter.
func (a *Admin) ListACLs(ctx context.Context, w Where, subjectFilter, resourceFilter string) ([]protocol.ACLInfo, error) {
	req := protocol.NewRequest(protocol.ReqAuthListACL,
		protocol.ListACLsRequestHeader{SubjectFilter: subjectFilter, ResourceFilter: resourceFilter}.Encode(), nil)
	var as []protocol.ACLInfo
	_, err := a.authRead(ctx, "list acls", w, req, &as)
	return as, err
}
