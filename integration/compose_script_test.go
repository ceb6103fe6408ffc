//go:build !race

package integration

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// These tests run scripts/compose.sh against a fake docker and go on the
// PATH, so they need no Docker and build nothing: they check what the
// script decides before and after the engine's work.

// fakeTool is a shell script standing in for docker or go: it appends its
// arguments to $FAKE_LOG, fails `compose ... up` when $FAKE_UP_FAILS is
// set, and otherwise succeeds (printing nothing, so `docker ps` lists no
// container). The fake go fails: nothing may be built.
const fakeDocker = `#!/bin/sh
echo "docker $*" >>"$FAKE_LOG"
case " $* " in
*" compose "*" up "*) [ -n "$FAKE_UP_FAILS" ] && exit 1 ;;
esac
exit 0
`

const fakeGo = `#!/bin/sh
echo "go $*" >>"$FAKE_LOG"
exit 1
`

// composeScript runs scripts/compose.sh with args, the fakes first on the
// PATH and env added to a clean environment. It returns the exit code,
// stderr and the fakes' log.
func composeScript(t *testing.T, env []string, args ...string) (code int, stderr, calls string) {
	t.Helper()
	bin := t.TempDir()
	for name, text := range map[string]string{"docker": fakeDocker, "go": fakeGo} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	logFile := filepath.Join(t.TempDir(), "calls")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(repoRoot(t), "scripts", "compose.sh"))
	cmd.Args = append(cmd.Args, args...)
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "COMPOSE_") || strings.HasPrefix(k, "RUNNEL_") || k == "PATH" {
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	cmd.Env = append(cmd.Env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "FAKE_LOG="+logFile)
	cmd.Env = append(cmd.Env, env...)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	err := cmd.Run()
	code = cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		t.Fatalf("compose.sh %v: %v", args, err)
	}
	log, _ := os.ReadFile(logFile)
	return code, errOut.String(), string(log)
}

// portEnv publishes every port the compose file does on a free port, the
// name server's on namesrvPort.
func portEnv(t *testing.T, namesrvPort int) []string {
	t.Helper()
	p := freePorts(t, 6)
	return []string{
		fmt.Sprint("RUNNEL_NAMESRV_PORT=", namesrvPort), fmt.Sprint("RUNNEL_BROKER_A_PORT=", p[0]),
		fmt.Sprint("RUNNEL_BROKER_B_PORT=", p[1]), fmt.Sprint("RUNNEL_NAMESRV_METRICS_PORT=", p[2]),
		fmt.Sprint("RUNNEL_BROKER_A_METRICS_PORT=", p[3]), fmt.Sprint("RUNNEL_BROKER_B_METRICS_PORT=", p[4]),
		fmt.Sprint("RUNNEL_CONSOLE_PORT=", p[5]),
	}
}

// TestComposeUpRefusesBusyPort: `compose.sh up` with a published port
// taken fails at once, naming the port and the variable that moves it,
// before it builds a binary or an image or asks compose to start anything.
func TestComposeUpRefusesBusyPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	busy := l.Addr().(*net.TCPAddr).Port
	code, stderr, calls := composeScript(t, portEnv(t, busy), "up")
	if code != 1 {
		t.Fatalf("exit code %d, want 1; stderr:\n%s", code, stderr)
	}
	for _, want := range []string{fmt.Sprintf("%d (RUNNEL_NAMESRV_PORT)", busy), "already in use", "Nothing was built", "make compose-up"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(calls, "build") || strings.Contains(calls, " up") {
		t.Fatalf("the script built or started something with a port busy:\n%s", calls)
	}
}

// TestComposeStartCleansUpAfterFailure: when `up` fails on a project that
// was not running, the script removes what it created, volumes and
// network included, for the project COMPOSE_PROJECT_NAME names.
func TestComposeStartCleansUpAfterFailure(t *testing.T) {
	env := append(portEnv(t, freePorts(t, 1)[0]), "FAKE_UP_FAILS=1", "COMPOSE_PROJECT_NAME=runnel-scripttest")
	code, stderr, calls := composeScript(t, env, "start")
	if code != 1 {
		t.Fatalf("exit code %d, want 1; stderr:\n%s", code, stderr)
	}
	up := strings.Index(calls, "docker compose -p runnel-scripttest up -d")
	down := strings.Index(calls, "docker compose -p runnel-scripttest down -v --remove-orphans")
	if up < 0 || down < up {
		t.Fatalf("want up then down -v --remove-orphans of project runnel-scripttest; calls:\n%s", calls)
	}
	if !strings.Contains(stderr, "removing what this up created") {
		t.Fatalf("stderr does not say it cleaned up:\n%s", stderr)
	}
}
