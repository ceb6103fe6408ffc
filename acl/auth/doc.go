// Package auth owns RocketMQ 5.3's access control (ACL 2.0, Java's auth
// module) beside package acl's plain_acl.yml: users, their ACLs, how a
// request (an acl.Request, in package acl's model of actions and
// resources) is authenticated and authorized against them (Manager is an
// acl.Decider), and the records they are stored as.
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
// Authentication (authenticationEnabled) needs every request signed (its
// acl.Proof) by an enabled user, with its password as the secret key.
// Authorization (authorizationEnabled) checks each of the request's needs,
// which its door's table gives as Java's DefaultAuthorizationContextBuilder
// would (broker/remotingdoor/acl.go, namesrv/acl.go): a super
// user passes; otherwise the subject's entries that match the resource,
// one of the actions and the source IP are collected (Custom ones, or
// Default ones if no Custom one matches) and the most specific decides —
// the any-resource entries last, literal names before prefixes, longer
// prefixes before shorter, and among equals Deny before Allow. No entry
// matching is a refusal. A refusal is NO_PERMISSION (16) with Java's
// remark, e.g. "User:u has no permission to access Topic:t from
// 127.0.0.1, the decision is deny."; the handler never runs. The white
// lists (authenticationWhitelist, authorizationWhitelist) name request
// codes, matched against acl.Request.Op. A request with no needs passes
// authorization.
//
// Users and ACLs are stored as named records (store.OpPutAuth) through the
// store's one apply path: "user/<name>" holds a protocol.UserInfo and
// "acl/<subject>" a protocol.ACLInfo, both JSON. A Manager caches them and
// reloads when the store's AuthVersion moves, so ops applied by any path
// (a replica's log too) take effect at the next request.
package auth
