package acl

import (
	"strings"
)

// Perm is a set of RocketMQ ACL permission bits (Java's Permission).
type Perm byte

// The permission bits. Deny overrides every other bit.
const (
	Deny Perm = 1 << iota
	AnyPerm
	PubPerm
	SubPerm
)

// ParsePerm reads "DENY", "PUB", "SUB", "PUB|SUB" or "SUB|PUB"; anything
// else is Deny, as Java's parsePermFromString has it. ok is false for a
// string that is none of them.
func ParsePerm(s string) (p Perm, ok bool) {
	switch strings.TrimSpace(s) {
	case "PUB":
		return PubPerm, true
	case "SUB":
		return SubPerm, true
	case "PUB|SUB", "SUB|PUB":
		return PubPerm | SubPerm, true
	case "DENY":
		return Deny, true
	}
	return Deny, false
}

// grants reports whether owned allows needed, any one of its bits (Java's
// checkPermission).
func (owned Perm) grants(needed Perm) bool {
	if owned&Deny != 0 {
		return false
	}
	if needed&AnyPerm != 0 {
		return owned&(PubPerm|SubPerm) != 0
	}
	return needed&owned != 0
}

const traceTopic = "RMQ_SYS_TRACE_TOPIC"

// plainRule is how plain ACL decides one need.
type plainRule uint8

const (
	plainPerm  plainRule = iota // the account's permission on the resource decides
	plainOpen                   // any signed account passes
	plainAdmin                  // only an admin account passes
)

// plainNeed is what a need asks of a plain_acl.yml account, as Java's
// PlainAccessResource reads requests: the name its topicPerms and
// groupPerms key it by (a group as its retry topic) and the permissions
// any one of which grants it. Pub needs PUB, Sub needs SUB. Plain ACL has
// no right to read a topic's or group's metadata and offsets: a need of
// Get alone on one (no Pub or Sub) is open to any signed account, as in
// Java (a read of messages needs Sub: see the doors' tables). Every other
// need is an admin request: any need on a cluster or a namespace, a need
// of Create, Update, Delete or List alone, a need of every topic or group
// at once.
func plainNeed(n Need) (name string, perm Perm, rule plainRule) {
	r := n.Resource
	if r.Pattern != Literal {
		return "", 0, plainAdmin
	}
	switch r.Type {
	case Topic:
		name = r.Name
	case Group:
		name = RetryPrefix + r.Name
	default:
		return "", 0, plainAdmin
	}
	if n.Actions&Pub != 0 {
		perm |= PubPerm
	}
	if n.Actions&Sub != 0 {
		perm |= SubPerm
	}
	switch {
	case perm != 0:
		return name, perm, plainPerm
	case n.Actions&(Get|Any) != 0 && n.Actions&^(Get|Any) == 0:
		return name, 0, plainOpen
	}
	return name, 0, plainAdmin
}

// plainName is r as Java's remarks print a resource: "topic:T" or
// "group:G".
func plainName(r Resource) string {
	if r.Type == Group {
		return "group:" + Clip(r.Name)
	}
	return "topic:" + Clip(r.Name)
}
