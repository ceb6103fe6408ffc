// Package auth owns RocketMQ 5.3's access control model (ACL 2.0, Java's
// auth module) beside package acl's plain_acl.yml: users, their ACLs, how
// a request is authenticated and authorized against them, and the records
// they are stored as.
//
// A user has a name (the access key clients sign with), a password (the
// secret key), a type (Super or Normal) and a status (enable or disable).
// An ACL belongs to a subject ("User:name") and holds policies (Custom, the
// ones users write, and Default) of entries: a resource ("Cluster:c",
// "Topic:t", "Group:g", a name ending in "*" for a prefix, "Topic:*" for
// every topic, "*" for anything), actions (Pub, Sub, Create, Update,
// Delete, Get, List, All), source IPs (addresses or CIDR ranges; none is
// everywhere) and a decision (Allow or Deny).
//
// Authentication (authenticationEnabled) needs every request signed as
// ACL 1.0 signs (package acl) by an enabled user, with its password as the
// secret key. Authorization (authorizationEnabled) turns each request into
// the resources and actions it needs, as Java's
// DefaultAuthorizationContextBuilder does (Needs), and checks each: a super
// user passes; otherwise the subject's entries that match the resource,
// one of the actions and the source IP are collected (Custom ones, or
// Default ones if no Custom one matches) and the most specific decides —
// the any-resource entries last, literal names before prefixes, longer
// prefixes before shorter, and among equals Deny before Allow. No entry
// matching is a refusal. A refusal is NO_PERMISSION (16) with Java's
// remark, e.g. "User:u has no permission to access Topic:t from
// 127.0.0.1, the decision is deny."; the handler never runs.
//
// Users and ACLs are stored as named records (store.OpPutAuth) through the
// store's one apply path: "user/<name>" holds a protocol.UserInfo and
// "acl/<subject>" a protocol.ACLInfo, both JSON. A Manager caches them and
// reloads when the store's AuthVersion moves, so ops applied by any path
// (a replica's log too) take effect at the next request.
package auth
