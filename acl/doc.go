// Package acl owns RocketMQ's access control as its 4.x plain ACL has it
// (ACL 1.0, the plain_acl.yml file): the request signature, the accounts
// and their permissions, and the check a server runs on every request
// before its handler.
//
// A signed request carries the ext fields AccessKey, Signature and
// optionally SecurityToken. The signed content is the values of all ext
// fields but Signature, sorted by key and concatenated, followed by the
// body; Signature is Base64(HmacSHA1(secretKey, content)). Java's client
// signs SecurityToken with the rest; the official Go client puts it in the
// request but leaves it out of the content. Both are accepted.
//
// A check runs as Java's PlainPermissionManager.validate does, in this
// order, and the first rule that decides wins:
//
//  1. a source address in globalWhiteRemoteAddresses passes, signed or not;
//  2. no AccessKey, or an unknown one, is refused;
//  3. a source address in the account's whiteRemoteAddress passes;
//  4. a wrong signature is refused;
//  5. an admin account passes; an admin request code from another is
//     refused;
//  6. each resource the request needs (Resources) must be granted by the
//     account's topicPerms/groupPerms, or else its defaultTopicPerm /
//     defaultGroupPerm.
//
// White lists grant, they never restrict: outside them a request is still
// served if it is signed and permitted.
//
// A refusal is answered as Java's broker answers an AclException thrown by
// its RPC hook: SYSTEM_ERROR (1), remark "org.apache.rocketmq.acl.common.
// AclException: <message>" (Java appends the first stack frame; tools match
// the message). The handler never runs, so nothing is stored.
//
// A Checker holds the parsed file and reloads it when its modification
// time or size changes; a file that fails to parse keeps the previous
// accounts in force (and is logged), as Java's watcher does.
package acl
