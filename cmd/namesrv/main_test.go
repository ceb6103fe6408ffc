package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// netpoll's poller goroutines outlive an in-process server (TestTLSFlags).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/cloudwego/netpoll.(*defaultPoll).Wait"))
}

// buildBinary compiles this command once per test run.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "namesrv")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

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
	pr, pw := io.Pipe()
	cmd := newCommand(pw, io.Discard)
	cmd.SetArgs([]string{"--listen", "127.0.0.1:0", "--log-level", "error", "--tls-mode", "enforcing"})
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
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
