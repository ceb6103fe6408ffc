package acl

import (
	"fmt"
	"net/netip"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// Error is a refusal: the message Java's AclException carries.
type Error struct{ Msg string }

func (e *Error) Error() string { return "acl: " + e.Msg }

// Remark is the remark of the refusal's response, as Java's broker words
// an AclException (less the stack frame it appends).
func (e *Error) Remark() string { return "org.apache.rocketmq.acl.common.AclException: " + e.Msg }

// Response is the refusal's answer to req: SYSTEM_ERROR and Remark, the
// code Java's remoting gives an exception thrown by an RPC hook.
func (e *Error) Response(req *protocol.Command) *protocol.Command {
	return protocol.NewResponse(req, protocol.RespSystemError, e.Remark())
}

func refuse(format string, args ...any) *Error { return &Error{Msg: fmt.Sprintf(format, args...)} }

// Check decides whether req, from the connection whose remote address is
// remote ("ip:port"), may be served; adminCodes are the request codes that
// need an admin account. It returns nil or an *Error, in the order the
// package doc gives.
func (t *Table) Check(remote string, req *protocol.Command, adminCodes map[int16]bool) error {
	// The address is parsed only for a white list to match it against.
	var ip netip.Addr
	if len(t.global) > 0 {
		ip = RemoteIP(remote)
		for _, p := range t.global {
			if p.match(ip) {
				return nil
			}
		}
	}
	f := collect(req)
	defer f.release()
	ak := f.view(FieldAccessKey)
	if ak == "" {
		return refuse("No accessKey is configured")
	}
	acc := t.accounts[ak]
	if acc == nil {
		return refuse("No acl config for %s", ak)
	}
	if acc.white != nil {
		if !ip.IsValid() {
			ip = RemoteIP(remote)
		}
		if acc.white.match(ip) {
			return nil
		}
	}
	if !acc.signer.ok(f, req.Body) {
		return refuse("Check signature failed for accessKey=%s", ak)
	}
	if acc.admin {
		return nil
	}
	if adminCodes[req.Code] {
		return refuse("Need admin permission for request code=%d, but accessKey=%s is not", req.Code, ak)
	}
	var buf [4]Resource
	rs, err := appendResources(buf[:0], req, f)
	if err != nil {
		return refuse("%v", err)
	}
	return acc.permits(rs)
}

// Accounts returns the number of accounts in t.
func (t *Table) Accounts() int { return len(t.accounts) }
