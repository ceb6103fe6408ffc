package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runnelmq/runnel/internal/clitest"
)

// startDevUntil runs dev in-process until the test ends and returns its
// output once until is in it.
func startDevUntil(t *testing.T, dc devConfig, until string) *clitest.Buffer {
	t.Helper()
	out, stop := background(t, until, dev(dc))
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("dev: %v", err)
		}
	})
	return out
}

func devConfigFor(t *testing.T) devConfig {
	return devConfig{dir: t.TempDir(), nsListen: "127.0.0.1:0", brokerListen: "127.0.0.1:0",
		log: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

func lineAfter(out, prefix string) string {
	_, rest, _ := strings.Cut(out, prefix)
	line, _, _ := strings.Cut(rest, "\n")
	return strings.TrimSpace(line)
}

func getBody(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestDevServesTheConsole: dev prints the console's address and the
// console there shows dev's broker.
func TestDevServesTheConsole(t *testing.T) {
	dc := devConfigFor(t)
	dc.consoleListen = "127.0.0.1:0"
	out := startDevUntil(t, dc, "console: open ")
	url := lineAfter(out.String(), "console: open ")
	if code, body := getBody(t, url+"cluster"); code != http.StatusOK || !strings.Contains(body, "broker-a") && !strings.Contains(body, "MASTER") {
		t.Fatalf("GET %scluster: %d\n%s", url, code, body)
	}
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("console address %q is not loopback", url)
	}
}

// TestDevGoesOnWhenTheDefaultConsolePortIsTaken: with the port taken, dev
// says so and serves the rest; an address asked for must be free.
func TestDevGoesOnWhenTheDefaultConsolePortIsTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dc := devConfigFor(t)
	dc.consoleListen = ln.Addr().String()
	out := startDevUntil(t, dc, "console: not started: ")
	if !strings.Contains(out.String(), "broker: serving on") || !strings.Contains(out.String(), "--console-listen moves it") {
		t.Fatalf("dev output: %q", out.String())
	}

	dc = devConfigFor(t)
	dc.consoleListen, dc.consoleRequired = ln.Addr().String(), true
	err = runDev(context.Background(), dc, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "console: listen on") {
		t.Fatalf("dev with its console address taken: %v", err)
	}
}

// TestConsoleCommandAgainstANameServer runs "runnel console" against a
// dev cluster: it serves, probe says so, and it stops on its context.
func TestConsoleCommandAgainstANameServer(t *testing.T) {
	out := startDevUntil(t, devConfigFor(t), "broker: serving on")
	ns := lineAfter(out.String(), "namesrv: serving on ")
	cout, stop := background(t, "console: serving on ", command("console", "--namesrv", ns, "--listen", "127.0.0.1:0"))
	url := strings.Fields(lineAfter(cout.String(), "console: serving on "))[0]
	if code, body := getBody(t, url+"topics?system=1"); code != http.StatusOK || !strings.Contains(body, "TBW102") {
		t.Fatalf("GET %stopics: %d", url, code)
	}
	var pout clitest.Buffer
	probe := newCommand(&pout, io.Discard)
	probe.SetArgs([]string{"console", "probe", strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/")})
	if err := probe.Execute(); err != nil || !strings.Contains(pout.String(), ": up") {
		t.Fatalf("probe: %v %q", err, pout.String())
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

func TestConsoleCommandRefusesCredentialsWithoutALogin(t *testing.T) {
	cmd := newCommand(io.Discard, io.Discard)
	cmd.SetArgs([]string{"console", "--listen", "127.0.0.1:0", "--ak", "admin", "--sk", "secret"})
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "--login-file") {
		t.Fatalf("credentials without a login: %v", err)
	}
	path := filepath.Join(t.TempDir(), "login")
	for content, ok := range map[string]bool{"# ops\nops:pw\n": true, "ops\n": false, "": false} {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		l, err := readLoginFile(path)
		if (err == nil) != ok || ok && (l.User != "ops" || l.Password != "pw") {
			t.Errorf("login file %q: %+v %v", content, l, err)
		}
	}
}
