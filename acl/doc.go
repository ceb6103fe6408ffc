// Package acl owns access control: the model every door decides requests
// in, RocketMQ's request signature, and plain ACL (RocketMQ 4.x's ACL 1.0,
// the plain_acl.yml file); ACL 2.0 (RocketMQ 5.3's users and policies) is
// acl/auth, deciding in the same model.
//
// # The model
//
// A decision is on actions and resources, as RocketMQ 5's ACL 2.0 has it,
// never on a protocol's request codes. A Request says who signed it
// (AccessKey, the subject), the proof that they did (Proof), where it came
// from (Source), and what it needs (Needs): each Need is a Resource (a
// Topic, a consumer Group — never its retry topic —, a Cluster, a
// Namespace) and the Actions any one of which grants it (Pub, Sub,
// Create, Update, Delete, Get, List; All in a rule grants every action,
// Any in a need is met by any). Every need must be granted. A request with
// no needs is open to any authenticated account.
//
// A Decider decides a Request: *Checker (plain ACL) and *auth.Manager (ACL
// 2.0). A Guard is the deciders a server runs, in order; the broker's is
// Broker.AccessControl. A refusal errors.Is ErrUnauthenticated (no
// account, an unknown or disabled one, a bad signature) or ErrDenied (a
// need not granted), and carries its protocol's remark: plain ACL's is
// Java's AclException message, ACL 2.0's Java's "User:u has no permission
// to access Topic:t from ip, ...".
//
// # Where requests become needs
//
// Each door owns the table from its requests to their needs: the broker's
// remoting door in broker/remotingdoor/acl.go, the name server's in
// namesrv/acl.go (both Codes tables, walked by a test that fails for any
// served code without an entry), the gRPC door its own, over its RPCs. A
// remoting server runs its table through a Checkpoint: it collects a
// request's ext fields once (a field whose value is empty counts as
// absent: Fields.Lookup), builds the Request (Op is the code in decimal;
// the Proof is RocketMQ's signature over the fields and body) and asks the
// Guard. A code with no entry needs an administrator (AdminNeed): default
// deny.
//
// A door of another protocol builds the Request itself. The gRPC door, for
// one, authorizes an RPC like this (its Authorization header is
// "MQv2-HMAC-SHA1 Credential=AK, SignedHeaders=x-mq-date-time,
// Signature=hex(HmacSHA1(secret, the x-mq-date-time value))"):
//
//	type grpcProof struct{ dateTime, signature []byte } // from the headers
//
//	func (p *grpcProof) SignedWith(k acl.Key) bool {
//		var buf [sha1.Size]byte
//		mac := k.MAC(buf[:0], p.dateTime)
//		want := make([]byte, hex.EncodedLen(len(mac)))
//		hex.Encode(want, mac)
//		return subtle.ConstantTimeCompare(bytes.ToLower(p.signature), want) == 1
//	}
//
//	// SendMessage: Pub on the topic of each message.
//	r := &acl.Request{
//		Op:        "apache.rocketmq.v2.MessagingService/SendMessage",
//		Source:    peerAddr, // "ip:port"
//		AccessKey: ak,       // "" when the RPC carries no Authorization
//		Needs:     []acl.Need{acl.TopicNeed(topic, acl.Pub)},
//	}
//	if ak != "" {
//		r.Proof = &grpcProof{dateTime, signature}
//	}
//	if err := guard.Decide(r); err != nil {
//		code := v2.Code_FORBIDDEN
//		if errors.Is(err, acl.ErrUnauthenticated) {
//			code = v2.Code_UNAUTHORIZED
//		}
//		return status(code, err) // the refusal's text is Java's remark
//	}
//
// ReceiveMessage needs Sub on the topic and the group (TopicNeed,
// GroupNeed); AckMessage and ChangeInvisibleDuration Sub on both;
// QueryRoute Pub, Sub or Get on the topic (open, as the name server's
// route queries are, if the door prefers); Heartbeat Sub on a consumer's
// group; EndTransaction Pub on the topic; ForwardMessageToDeadLetterQueue
// Sub on the group. Plain ACL reads the same needs as Java's
// PlainAccessResource reads an RPC.
//
// # The remoting signature
//
// A signed request carries the ext fields AccessKey, Signature and
// optionally SecurityToken. The signed content is the values of all ext
// fields but Signature, sorted by key and concatenated, followed by the
// body; Signature is Base64(HmacSHA1(secretKey, content)). Java's client
// signs SecurityToken with the rest; the official Go client puts it in the
// request but leaves it out of the content. Both are accepted. The request
// code is not signed and there is no timestamp: a signed request seen on a
// plaintext network can be sent again, or sent with another code, by
// anyone. That is RocketMQ's scheme and clients sign this way; TLS
// (tls.server.mode=enforcing) is the defence (docs/security.md).
//
// # Plain ACL
//
// A plain ACL decision runs as Java's PlainPermissionManager.validate
// does, in this order, and the first rule that decides wins:
//
//  1. a source address in globalWhiteRemoteAddresses passes, signed or not;
//  2. no AccessKey, or an unknown one, is refused;
//  3. a source address in the account's whiteRemoteAddress passes;
//  4. a wrong signature is refused;
//  5. an admin account passes; a need plain ACL knows only as an admin
//     request (anything on a cluster; Create, Update, Delete or List
//     alone) from another is refused;
//  6. each need (Pub is PUB, Sub is SUB, on the topic or on the group's
//     retry topic) must be granted by the account's topicPerms/groupPerms,
//     or else its defaultTopicPerm / defaultGroupPerm; a need of Get alone
//     is not checked (plain ACL has no read right, as in Java).
//
// White lists grant, they never restrict: outside them a request is still
// served if it is signed and permitted.
//
// A refusal is answered as Java's broker answers an AclException thrown by
// its RPC hook: SYSTEM_ERROR (1), remark "org.apache.rocketmq.acl.common.
// AclException: <message>" (Java appends the first stack frame; tools match
// the message). The handler never runs, so nothing is stored. A refusal
// repeats at most a short prefix of an access key or a name (Clip).
//
// A Checker holds the parsed file and reloads it when its modification
// time or size changes; a file that fails to parse keeps the previous
// accounts in force (and is logged), as Java's watcher does.
package acl
