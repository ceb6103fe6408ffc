package rebalance

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestPurePackagesImportNoNetwork keeps the client's pure pieces pure: none
// of them may reach network code or the server side, even transitively.
// The wire types (remoting/protocol, whose MessageQueue is the client's)
// are pure too, and net/netip, which they use, holds address values only.
func TestPurePackagesImportNoNetwork(t *testing.T) {
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	pkgs := []string{
		"github.com/runnelmq/runnel/client/queue",
		"github.com/runnelmq/runnel/client/rebalance",
		"github.com/runnelmq/runnel/client/internal/processqueue",
		"github.com/runnelmq/runnel/client/offset",
	}
	out, err := exec.Command(goBin, append([]string{"list", "-deps"}, pkgs...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	forbidden := []string{
		"net", "net/http", "net/rpc", "crypto/tls",
		"github.com/cloudwego/netpoll",
		"github.com/runnelmq/runnel/remoting",
		"github.com/runnelmq/runnel/broker",
		"github.com/runnelmq/runnel/namesrv",
		"github.com/runnelmq/runnel/store",
	}
	allowed := []string{"net/netip", "github.com/runnelmq/runnel/remoting/protocol"}
	for _, dep := range strings.Fields(string(out)) {
		if slices.Contains(allowed, dep) {
			continue
		}
		for _, f := range forbidden {
			if dep == f || strings.HasPrefix(dep, f+"/") {
				t.Errorf("a pure client package depends on %s", dep)
			}
		}
	}
}
