package grpcdoor

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/hex"
	"strings"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
)

// Access decides whether a call may proceed: the broker's access control
// (ACL 1.0 accounts, ACL 2.0 users and rules), as the door asks it. The
// door reads the call's signature; Access knows the secret keys.
type Access interface {
	// Check decides a call signed by accessKey ("" when unsigned) from
	// remote ("ip:port"): verify reports whether the signature is that of
	// a secret key, and needs are what the call asks to do. A refusal's
	// text is told to the client (UNAUTHORIZED).
	Check(remote, accessKey string, verify func(secretKey string) bool, needs []Need) error
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

// sign is the signature of dateTime with secretKey.
func sign(secretKey, dateTime string) string {
	h := hmac.New(sha1.New, []byte(secretKey))
	h.Write([]byte(dateTime))
	return hex.EncodeToString(h.Sum(nil))
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
	verify := func(secretKey string) bool {
		return sig != "" && c.DateTime != "" && hmac.Equal([]byte(strings.ToLower(sig)), []byte(sign(secretKey, c.DateTime)))
	}
	if err := d.cfg.Access.Check(c.Remote, ak, verify, needs); err != nil {
		return refuse(v2.Code_UNAUTHORIZED, err.Error())
	}
	return nil
}

// authenticate checks c's signature alone.
func (d *Door) authenticate(c caller) error { return d.authorize(c) }
