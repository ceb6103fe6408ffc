package grpcdoor

import (
	"context"
	"net/netip"
	"strings"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
)

// The request metadata the SDKs send on every call (the Go SDK's
// metadata package; the Java SDK's Signature).
const (
	mdClientID      = "x-mq-client-id"
	mdLanguage      = "x-mq-language"
	mdClientVersion = "x-mq-client-version"
	mdProtocol      = "x-mq-protocol"
	mdNamespace     = "x-mq-namespace"
	mdDateTime      = "x-mq-date-time"
	mdRequestID     = "x-mq-request-id"
	mdAuthorization = "authorization"
)

// caller is who made a call, from its metadata and its connection.
type caller struct {
	ClientID  string
	Language  string // "GO", "JAVA", ... as the SDK says it
	Version   string // the SDK's version, "5.1.4"
	Namespace string
	// DateTime and Authorization are what the signature covers and the
	// signature (auth.go).
	DateTime, Authorization string
	// Remote is the client's address ("ip:port").
	Remote string
	// Method is the call's full name ("/apache.rocketmq.v2.MessagingService/
	// SendMessage"): the op access control's white lists name.
	Method string
}

// callerOf reads the caller of ctx. It reads each key alone: the whole
// metadata (metadata.FromIncomingContext) is a copy of every header, a
// map and its values, on every call (issue 34's CPU profile).
func callerOf(ctx context.Context) caller {
	get := func(k string) string {
		if v := metadata.ValueFromIncomingContext(ctx, k); len(v) > 0 {
			return v[0]
		}
		return ""
	}
	c := caller{
		ClientID:      get(mdClientID),
		Language:      get(mdLanguage),
		Version:       get(mdClientVersion),
		Namespace:     get(mdNamespace),
		DateTime:      get(mdDateTime),
		Authorization: get(mdAuthorization),
	}
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		c.Remote = p.Addr.String()
	}
	c.Method, _ = grpc.Method(ctx)
	return c
}

// requireClient refuses a call without a client id, as the proxy does
// (CLIENT_ID_REQUIRED): every SDK sends one.
func (c caller) requireClient() error {
	if strings.TrimSpace(c.ClientID) == "" {
		return refuse(v2.Code_CLIENT_ID_REQUIRED, "client id cannot be empty")
	}
	return nil
}

// bornHost is the caller's address as a stored message's born host.
func (c caller) bornHost() netip.AddrPort {
	ap, err := netip.ParseAddrPort(c.Remote)
	if err != nil {
		return netip.AddrPort{}
	}
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
}

// namespaceSeparator joins a namespace and a resource name, as RocketMQ's
// NamespaceUtil does ("ns%TopicTest").
const namespaceSeparator = "%"

// name is a resource's name as the broker stores it: prefixed by its
// namespace (the resource's own, else the caller's), as RocketMQ's
// clients wrap names with a namespace.
func (c caller) name(r *v2.Resource) string {
	ns := r.GetResourceNamespace()
	if ns == "" {
		ns = c.Namespace
	}
	return wrapNamespace(ns, r.GetName())
}

// wrapNamespace prefixes name with ns; a retry or dead-letter name keeps
// its prefix first ("%RETRY%ns%group").
func wrapNamespace(ns, name string) string {
	if ns == "" || name == "" || strings.HasPrefix(name, ns+namespaceSeparator) {
		return name
	}
	for _, p := range [...]string{retryPrefix, dlqPrefix} {
		if rest, ok := strings.CutPrefix(name, p); ok {
			return p + ns + namespaceSeparator + rest
		}
	}
	return ns + namespaceSeparator + name
}

// resource is the Resource a stored name is shown as to a caller: its
// namespace split off when it is the caller's.
func (c caller) resource(stored string) *v2.Resource {
	if c.Namespace != "" {
		if rest, ok := strings.CutPrefix(stored, c.Namespace+namespaceSeparator); ok {
			return &v2.Resource{ResourceNamespace: c.Namespace, Name: rest}
		}
	}
	return &v2.Resource{Name: stored}
}

// RocketMQ's system name prefixes.
const (
	retryPrefix = "%RETRY%"
	dlqPrefix   = "%DLQ%"
)
