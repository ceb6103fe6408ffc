package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/internal/clitest"
	"github.com/runnelmq/runnel/internal/leakcheck"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// netpoll's poller goroutines outlive an in-process server (TestTLSFlags).
func TestMain(m *testing.M) { leakcheck.VerifyTestMain(m) }

// buildBinary compiles this command once per test run.
func buildBinary(t *testing.T) string { return clitest.Build(t, ".", "namesrv") }

// TestProcessServesAndStopsOnSignal runs the real binary: it must print
// its serving line, answer a request, and exit 0 on SIGTERM and SIGINT.
func TestProcessServesAndStopsOnSignal(t *testing.T) {
	bin := buildBinary(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(bin, "--listen", "127.0.0.1:0", "--log-level", "debug")
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()

			lines := make(chan string, 1)
			go func() {
				defer close(lines)
				sc := bufio.NewScanner(stdout)
				for sc.Scan() {
					lines <- sc.Text()
				}
			}()
			var line string
			select {
			case line = <-lines:
			case <-time.After(20 * time.Second):
				t.Fatalf("no serving line; stderr:\n%s", stderr.String())
			}
			addr, ok := strings.CutPrefix(line, "namesrv: serving on ")
			if !ok {
				t.Fatalf("first line %q", line)
			}

			cfg := remoting.DefaultClientConfig()
			c := remoting.NewClient(cfg)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			resp, err := c.Invoke(ctx, addr, protocol.NewRequest(protocol.ReqGetRouteInfoByTopic,
				protocol.GetRouteInfoRequestHeader{Topic: "T"}.Encode(), nil))
			cancel()
			c.Close()
			if err != nil || resp.Code != protocol.RespTopicNotExist {
				t.Fatalf("route query: %v %v", resp, err)
			}

			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			for range lines { // drain until stdout closes
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("exit: %v; stderr:\n%s", err, stderr.String())
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("did not exit after %v", sig)
			}
			if !strings.Contains(stderr.String(), "shutting down") {
				t.Errorf("stderr lacks the shutdown log:\n%s", stderr.String())
			}
		})
	}
}

func TestBadFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--log-level", "loud"}, "--log-level"},
		{[]string{"--listen", "127.0.0.1:99999"}, "namesrv"},
		{[]string{"--listen", ""}, "ListenAddr"},
		{[]string{"extra"}, "unknown command"},
		{[]string{"--tls-mode", "sometimes"}, "--tls-mode"},
		{[]string{"--tls-mode", "enforcing", "--tls-cert", "/nonexistent/cert.pem", "--tls-key", "/nonexistent/key.pem"}, "/nonexistent/"},
	}
	for _, tt := range tests {
		var stdout, stderr strings.Builder
		cmd := newCommand(&stdout, &stderr)
		cmd.SetArgs(tt.args)
		err := cmd.Execute()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: err %v, want it to mention %q", tt.args, err, tt.want)
		}
		if stdout.Len() != 0 && strings.Contains(stdout.String(), "serving on") {
			t.Errorf("%v: served despite bad flags", tt.args)
		}
	}
}

func TestProcessExitCodeOnError(t *testing.T) {
	bin := buildBinary(t)
	var stderr strings.Builder
	cmd := exec.Command(bin, "--log-level", "loud")
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("err %v, want exit status 1", err)
	}
	// One line with the binary's prefix, as every Runnel CLI does.
	if got := stderr.String(); !strings.HasPrefix(got, `namesrv: --log-level "loud"`) || strings.Count(got, "\n") != 1 {
		t.Fatalf("stderr %q", got)
	}
}

// TestTLSFlags serves TLS only (--tls-mode enforcing, a certificate
// generated at start): a TLS client gets a route answer, a plain one has
// its connection closed.
func TestTLSFlags(t *testing.T) {
	addr, stop := startInProcess(t, "--tls-mode", "enforcing")
	call := func(cfg remoting.ClientConfig) (*protocol.Command, error) {
		cl := remoting.NewClient(cfg)
		defer cl.Close()
		rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer rcancel()
		return cl.Invoke(rctx, addr, protocol.NewRequest(protocol.ReqGetRouteInfoByTopic,
			protocol.GetRouteInfoRequestHeader{Topic: "TBW102"}.Encode(), nil))
	}
	tc, err := remoting.ClientTLSConfig("")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := call(remoting.ClientConfig{TLS: tc}); err != nil {
		t.Fatalf("TLS client: %v", err)
	}
	if _, err := call(remoting.DefaultClientConfig()); !errors.Is(err, remoting.ErrConnClosed) {
		t.Fatalf("plain client against an enforcing name server: %v", err)
	}
	stop()
}

// TestAuthFlags turns ACL 2.0 on from a file (and from the environment):
// an unsigned or wrongly signed write-permission wipe is refused, the
// administrator's and the brokers' account's are served, and a route
// query needs no signature.
func TestAuthFlags(t *testing.T) {
	dir := t.TempDir()
	rootFile, innerFile := filepath.Join(dir, "root"), filepath.Join(dir, "inner")
	for file, text := range map[string]string{rootFile: "admin:adminSecret1\n", innerFile: "brokers:brokersSecret1"} {
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for name, args := range map[string][]string{
		"files": {"--auth-root-file", rootFile, "--auth-inner-file", innerFile},
		"env":   nil,
	} {
		t.Run(name, func(t *testing.T) {
			if args == nil {
				t.Setenv("RUNNEL_AUTH_ROOT", "admin:adminSecret1")
				t.Setenv("RUNNEL_AUTH_INNER", "brokers:brokersSecret1")
			}
			addr, stop := startInProcess(t, args...)
			defer stop()
			call := func(creds acl.Credentials, req *protocol.Command) *protocol.Command {
				t.Helper()
				return clitest.Call(t, addr, creds, req)
			}
			wipe := func() *protocol.Command {
				return protocol.NewRequest(protocol.ReqWipeWritePermOfBroker, map[string]string{"brokerName": "broker-a"}, nil)
			}
			for who, creds := range map[string]acl.Credentials{"unsigned": {}, "wrong secret": {AccessKey: "admin", SecretKey: "guess"}} {
				if resp := call(creds, wipe()); resp.Code != protocol.RespNoPermission {
					t.Errorf("%s wipe: %d %q, want NO_PERMISSION", who, resp.Code, resp.Remark)
				}
			}
			for _, creds := range []acl.Credentials{{AccessKey: "admin", SecretKey: "adminSecret1"}, {AccessKey: "brokers", SecretKey: "brokersSecret1"}} {
				if resp := call(creds, wipe()); resp.Code != protocol.RespSuccess {
					t.Errorf("%s's wipe: %d %q", creds.AccessKey, resp.Code, resp.Remark)
				}
			}
			route := protocol.NewRequest(protocol.ReqGetRouteInfoByTopic, protocol.GetRouteInfoRequestHeader{Topic: "T"}.Encode(), nil)
			if resp := call(acl.Credentials{}, route); resp.Code != protocol.RespTopicNotExist {
				t.Errorf("unsigned route query: %d %q", resp.Code, resp.Remark)
			}
		})
	}
	for _, args := range [][]string{
		{"--auth-root", "admin:x", "--auth-root-file", rootFile},
		{"--auth-root-file", filepath.Join(dir, "missing")},
		{"--auth-root", "no-colon"},
	} {
		cmd := newCommand(io.Discard, io.Discard)
		cmd.SetArgs(append([]string{"--listen", "127.0.0.1:0"}, args...))
		if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "--auth-root") {
			t.Errorf("%v: %v, want an error naming --auth-root", args, err)
		}
	}
}

// startInProcess runs the command in this process with args until stop,
// and returns the address it serves on.
func startInProcess(t *testing.T, args ...string) (string, func()) {
	t.Helper()
	pr, pw := io.Pipe()
	cmd := newCommand(pw, io.Discard)
	cmd.SetArgs(append([]string{"--listen", "127.0.0.1:0", "--log-level", "error"}, args...))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx); _ = pw.Close() }()
	sc := bufio.NewScanner(pr)
	if !sc.Scan() {
		t.Fatalf("no serving line: %v", <-done)
	}
	addr := strings.TrimPrefix(sc.Text(), "namesrv: serving on ")
	go func() {
		for sc.Scan() {
		}
	}()
	return addr, func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
