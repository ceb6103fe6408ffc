package rebalance

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestPurePackagesImportNoNetwork keeps the client's pure pieces pure: none
// of them may reach network code or the server side, even transitively.
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
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if dep == f || strings.HasPrefix(dep, f+"/") {
				t.Errorf("a pure client package depends on %s", dep)
			}
		}
	}
}
