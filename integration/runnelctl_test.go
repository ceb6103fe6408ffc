package integration

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/runnelmq/runnel/internal/clitest"
)

// runnelctl builds cmd/runnelctl for the test and returns a runner of it
// against namesrv, giving its stdout, stderr and exit error.
func runnelctl(t *testing.T, namesrv string) func(args ...string) (string, string, error) {
	t.Helper()
	bin := clitest.Build(t, "github.com/runnelmq/runnel/cmd/runnelctl", "runnelctl")
	return func(args ...string) (string, string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append([]string{"-n", namesrv}, args...)...)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		return out.String(), errOut.String(), err
	}
}

// mustRunnelctl is runnelctl failing the test unless the command exits 0.
func mustRunnelctl(t *testing.T, namesrv string) func(args ...string) string {
	t.Helper()
	run := runnelctl(t, namesrv)
	return func(args ...string) string {
		t.Helper()
		out, errOut, err := run(args...)
		if err != nil {
			t.Fatalf("runnelctl %s: %v\nstderr: %s", strings.Join(args, " "), err, errOut)
		}
		return out
	}
}
