package grpcdoor

import (
	"crypto/hmac"
	"encoding/hex"
	"errors"
	"strings"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/runnelmq/runnel/acl"
)

// Access decides whether a call may proceed: the broker's access control
// (ACL 1.0 accounts, ACL 2.0 users and rules), as the door asks it. The
// door reads the call's signature; Access knows the secret keys.
type Access interface {
	// Decide lets r through (nil) or refuses it with an error that
	// errors.Is acl.ErrUnauthenticated or acl.ErrDenied (acl.Guard, the
	// broker's AccessControl, is one).
	Decide(r *acl.Request) error
}

// Action is what a call does to a resource.
type Action uint8

// The actions of the door's calls (RocketMQ 5's Action).
const (
	// ActionPub sends to a topic.
	ActionPub Action = iota + 1
	// ActionSub receives from a topic as a consumer group.
	ActionSub
	// ActionGet reads a topic's route.
	ActionGet
)

// Need is one resource a call needs, and the action: a topic, a consumer
// group, or both (a group's receive from a topic).
type Need struct {
	Topic, Group string
	Action       Action
}

// access is what one call needs.
type access = Need

const (
	actionPub = ActionPub
	actionSub = ActionSub
	actionGet = ActionGet
)

// The signature the SDKs send (the Go SDK's client.Sign, the Java SDK's
// Signature): "MQv2-HMAC-SHA1 Credential=<accessKey>/<...>,
// SignedHeaders=x-mq-date-time, Signature=<hex HMAC-SHA1 of the date
// with the secret key>".
const authScheme = "MQv2-HMAC-SHA1"

// parseAuthorization reads the access key and the signature of an
// authorization value; ok is false when it is not one.
func parseAuthorization(v string) (accessKey, signature string, ok bool) {
	rest, found := strings.CutPrefix(strings.TrimSpace(v), authScheme)
	if !found {
		return "", "", false
	}
	for _, part := range strings.Split(rest, ",") {
		k, val, found := strings.Cut(strings.TrimSpace(part), "=")
		if !found {
			continue
		}
		switch strings.TrimSpace(k) {
		case "Credential":
			accessKey, _, _ = strings.Cut(strings.TrimSpace(val), "/")
		case "Signature":
			signature = strings.TrimSpace(val)
		}
	}
	return accessKey, signature, accessKey != "" && signature != ""
}

// grpcProof is the SDKs' signature as acl sees it: a hex HMAC-SHA1 of the
// x-mq-date-time header with the account's secret key.
type grpcProof struct{ signature, dateTime string }

func (p grpcProof) SignedWith(k acl.Key) bool {
	if p.signature == "" || p.dateTime == "" {
		return false
	}
	want := hex.AppendEncode(nil, k.MAC(nil, []byte(p.dateTime)))
	return hmac.Equal([]byte(strings.ToLower(p.signature)), want)
}

// aclNeeds are what a call's needs are in acl's terms: a send needs Pub on
// its topic, a receive Sub on its topic and group, a route Get on its
// topic.
func aclNeeds(needs []Need) []acl.Need {
	out := make([]acl.Need, 0, 2*len(needs))
	for _, n := range needs {
		a := acl.Sub
		switch n.Action {
		case ActionPub:
			a = acl.Pub
		case ActionGet:
			a = acl.Get
		}
		if n.Topic != "" {
			out = append(out, acl.TopicNeed(n.Topic, a))
		}
		if n.Group != "" {
			out = append(out, acl.GroupNeed(n.Group, acl.Sub))
		}
	}
	return out
}

// authorize checks c's call against the broker's access control; no
// Access allows every call.
func (d *Door) authorize(c caller, needs ...Need) error {
	if d.cfg.Access == nil {
		return nil
	}
	var ak, sig string
	if c.Authorization != "" {
		var ok bool
		if ak, sig, ok = parseAuthorization(c.Authorization); !ok {
			return refuse(v2.Code_UNAUTHORIZED, "the authorization metadata is not "+authScheme+" Credential=..., SignedHeaders=x-mq-date-time, Signature=...")
		}
	}
	r := &acl.Request{Op: c.Method, Source: c.Remote, AccessKey: ak, Needs: aclNeeds(needs)}
	if ak != "" {
		r.Proof = grpcProof{signature: sig, dateTime: c.DateTime}
	}
	err := d.cfg.Access.Decide(r)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, acl.ErrDenied):
		return refuse(v2.Code_FORBIDDEN, err.Error())
	default:
		return refuse(v2.Code_UNAUTHORIZED, err.Error())
	}
}

// authenticate checks c's signature alone.
func (d *Door) authenticate(c caller) error { return d.authorize(c) }
