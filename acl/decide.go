package acl

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"unicode/utf8"
)

// Request is one request as access control sees it, whichever door it came
// through: who says they signed it, the proof that they did, where it came
// from, and what it needs. A door fills one per request and asks a Guard.
type Request struct {
	// Op names the operation, for white lists and refusals: a remoting
	// request code in decimal ("310"), a gRPC method's full name
	// ("apache.rocketmq.v2.MessagingService/SendMessage"). ACL 2.0's
	// authenticationWhitelist and authorizationWhitelist list ops.
	Op string
	// Source is the peer's address, "ip:port" or "ip".
	Source string
	// AccessKey is the account the request says signed it; "" for none.
	AccessKey string
	// Proof shows that the account's secret signed the request; nil for an
	// unsigned one.
	Proof Proof
	// Needs are what the request touches and the actions on each (see
	// Need). Every need must be granted. None: any authenticated account
	// may send it (route queries, a producer's own heartbeat).
	Needs []Need
}

// Proof shows that a request was signed with its account's secret key: the
// remoting door's is RocketMQ's signature over the request's ext fields and
// body (Checkpoint makes it); a gRPC door's is its Authorization header's
// signature over the x-mq-date-time header (Key.MAC computes one).
type Proof interface {
	// SignedWith reports whether the request was signed with k.
	SignedWith(k Key) bool
}

// Decider decides requests: *Checker (plain_acl.yml) and ACL 2.0's
// *auth.Manager are the two. Decide returns nil, or a refusal that
// errors.Is ErrUnauthenticated or ErrDenied.
type Decider interface {
	Decide(r *Request) error
}

// Guard is the deciders a server runs, in order: every one must let a
// request through, and the first refusal is the answer. The broker's is
// plain ACL (if aclEnable) then ACL 2.0 (if enabled); an empty Guard lets
// everything through (access control off).
type Guard []Decider

// Decide runs every decider on r.
func (g Guard) Decide(r *Request) error {
	for _, d := range g {
		if err := d.Decide(r); err != nil {
			return err
		}
	}
	return nil
}

// Enabled reports whether g checks anything.
func (g Guard) Enabled() bool { return len(g) > 0 }

// The two kinds of refusal, for a door to map onto its own codes (the gRPC
// door's UNAUTHORIZED and FORBIDDEN). Refusals of both deciders match one
// of them with errors.Is.
var (
	// ErrUnauthenticated: the request names no account, an unknown or
	// disabled one, or its signature is not that account's.
	ErrUnauthenticated = errors.New("acl: not authenticated")
	// ErrDenied: the account is known and the signature good, but it may
	// not do what the request needs.
	ErrDenied = errors.New("acl: denied")
)

// Error is a refusal of plain ACL: the message Java's AclException carries.
type Error struct {
	Msg  string
	kind error // ErrUnauthenticated or ErrDenied
}

func (e *Error) Error() string { return "acl: " + e.Msg }

// Is matches the refusal's kind.
func (e *Error) Is(target error) bool { return target != nil && target == e.kind }

// Remark is the remark of the refusal's response, as Java's broker words
// an AclException (less the stack frame it appends).
func (e *Error) Remark() string { return "org.apache.rocketmq.acl.common.AclException: " + e.Msg }

func unauthenticated(format string, args ...any) *Error {
	return &Error{Msg: fmt.Sprintf(format, args...), kind: ErrUnauthenticated}
}

func denied(format string, args ...any) *Error {
	return &Error{Msg: fmt.Sprintf(format, args...), kind: ErrDenied}
}

// maxEchoed is the most of a name from a request a refusal repeats: an
// access key (or a topic) may be as long as a request's ext fields allow,
// 64 KiB and more, and a remark has no business echoing it whole.
const maxEchoed = 64

// Clip returns s, or its first bytes and its length if it is longer than a
// refusal should echo.
func Clip(s string) string {
	if len(s) <= maxEchoed {
		return s
	}
	head := s[:maxEchoed/2]
	for len(head) > 0 && !utf8.ValidString(head) {
		head = head[:len(head)-1]
	}
	return fmt.Sprintf("%s...(%d bytes)", strings.ToValidUTF8(head, ""), len(s))
}

// Reachable reports whether a listener on addr ("host:port") may be
// reached from beyond this host: its host is unspecified (":port",
// 0.0.0.0, ::), not an IP (a name), or an IP other than a loopback one.
// Signed requests seen by anyone on the way can be replayed there unless
// TLS is enforced: servers with access control on warn at start.
func Reachable(addr string) bool {
	host := addr
	if i := strings.LastIndexByte(addr, ':'); i >= 0 {
		host = strings.Trim(addr[:i], "[]")
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host != "localhost"
	}
	return !ip.Unmap().IsLoopback()
}

// ReplayWarning is the warning a server with access control on logs at
// start when it accepts plaintext connections on a reachable address.
const ReplayWarning = "acl: access control is on, but plaintext connections are accepted on an address reachable from other hosts: " +
	"RocketMQ's request signature covers neither the request code nor a time, so anyone who sees a signed request can replay it, " +
	"or send it as another request; set tls.server.mode=enforcing (see docs/security.md)"
