package grpcdoor

import (
	"context"
	"path"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
)

// rpcAccess is what access control asks of each RPC of MessagingService,
// in words: the one table of the door's access rules. A handler checks
// what its row says (authorize, or authenticate through begin); an RPC
// without a row is refused whenever access control is on (accessGate),
// so a new RPC is denied until someone decides its rule.
// TestEveryRPCHasAnAccessRule keeps the table and the service in step,
// and integration's TestV5DefaultDeny sends each one as an account
// without rights.
var rpcAccess = map[string]string{
	"QueryRoute":                      "Get on the topic",
	"SendMessage":                     "Pub on the topic",
	"RecallMessage":                   "Pub on the topic",
	"EndTransaction":                  "Pub on the topic",
	"QueryAssignment":                 "Sub on the topic and the group",
	"ReceiveMessage":                  "Sub on the topic and the group",
	"AckMessage":                      "Sub on the topic and the group",
	"ChangeInvisibleDuration":         "Sub on the topic and the group",
	"ForwardMessageToDeadLetterQueue": "Sub on the topic and the group",
	"PullMessage":                     "Sub on the topic and the group",
	"UpdateOffset":                    "Sub on the topic and the group",
	"GetOffset":                       "Sub on the topic and the group",
	"QueryOffset":                     "Get on the topic",
	// A client's own session: what it may do is checked on each call the
	// session leads to, as remoting's HEARTBEAT and UNREGISTER_CLIENT are
	// open to any authenticated client.
	"Telemetry":               "authenticated: the client's own settings stream",
	"Heartbeat":               "authenticated: keeps the client's own session",
	"NotifyClientTermination": "authenticated: ends the client's own session",
	// Not served: the embedded UnimplementedMessagingServiceServer
	// answers UNIMPLEMENTED and touches nothing.
	"SyncLiteSubscription": "none: not served (UNIMPLEMENTED)",
}

// accessGate refuses, when access control is on, an RPC rpcAccess has no
// rule for.
func (d *Door) accessGate(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if err := d.ruled(info.FullMethod); err != nil {
		return nil, err
	}
	return h(ctx, req)
}

func (d *Door) streamAccessGate(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if err := d.ruled(info.FullMethod); err != nil {
		return err
	}
	return h(srv, ss)
}

func (d *Door) ruled(fullMethod string) error {
	if d.cfg.Access == nil {
		return nil
	}
	if _, ok := rpcAccess[path.Base(fullMethod)]; !ok {
		return grpcstatus.Errorf(codes.PermissionDenied, "%s has no access rule on this broker", path.Base(fullMethod))
	}
	return nil
}
