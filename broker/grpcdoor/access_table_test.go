package grpcdoor

import (
	"testing"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
)

// TestEveryRPCHasAnAccessRule: every RPC of MessagingService has a row
// in rpcAccess, and every row names an RPC of the service.
func TestEveryRPCHasAnAccessRule(t *testing.T) {
	rpcs := map[string]bool{}
	for _, m := range v2.MessagingService_ServiceDesc.Methods {
		rpcs[m.MethodName] = true
	}
	for _, s := range v2.MessagingService_ServiceDesc.Streams {
		rpcs[s.StreamName] = true
	}
	for rpc := range rpcs {
		if rpcAccess[rpc] == "" {
			t.Errorf("RPC %s has no access rule", rpc)
		}
	}
	for rpc := range rpcAccess {
		if !rpcs[rpc] {
			t.Errorf("access rule for %s, which the service does not have", rpc)
		}
	}
}
