package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/internal/clitest"
	"github.com/runnelmq/runnel/internal/leakcheck"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
	"github.com/runnelmq/runnel/store"
)

func TestMain(m *testing.M) { leakcheck.VerifyTestMain(m) }

// background runs run in-process, its output in out, until stop (or the
// test's end), and waits for until in out. stop cancels run's context and
// returns what run returned; run not returning within 20 s fails the test.
func background(t *testing.T, until string, run func(ctx context.Context, out io.Writer) error) (out *clitest.Buffer, stop func() error) {
	t.Helper()
	out = &clitest.Buffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, out) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-done:
			case <-time.After(20 * time.Second):
				t.Error("did not stop 20 s after its context ended")
			}
		})
		return err
	}
	t.Cleanup(func() { _ = stop() })
	waitFor(t, out, until)
	return out, stop
}

// waitFor waits up to 20 s for s in out.
func waitFor(t *testing.T, out *clitest.Buffer, s string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(out.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the output: %q", s, out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// dev is runDev with dc, for background.
func dev(dc devConfig) func(context.Context, io.Writer) error {
	return func(ctx context.Context, out io.Writer) error { return runDev(ctx, dc, out) }
}

// command is runnel with args, for background.
func command(args ...string) func(context.Context, io.Writer) error {
	return func(ctx context.Context, out io.Writer) error {
		cmd := newCommand(out, io.Discard)
		cmd.SetArgs(args)
		return cmd.ExecuteContext(ctx)
	}
}

// TestDevServesRoutableBroker runs "dev" in-process: once both serving
// lines are out, the name server routes TBW102 to the embedded broker; it
// stops when its context ends.
func TestDevServesRoutableBroker(t *testing.T) {
	out, stop := background(t, "broker: metrics at ", dev(devConfig{dir: t.TempDir(), nsListen: "127.0.0.1:0", brokerListen: "127.0.0.1:0",
		metricsListen: "127.0.0.1:0", log: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	first, _, _ := strings.Cut(out.String(), "\n")
	nsAddr := strings.TrimPrefix(first, "namesrv: serving on ")
	cl := remoting.NewClient(remoting.DefaultClientConfig())
	rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
	resp, err := cl.Invoke(rctx, nsAddr, protocol.NewRequest(protocol.ReqGetRouteInfoByTopic,
		protocol.GetRouteInfoRequestHeader{Topic: "TBW102"}.Encode(), nil))
	rcancel()
	_ = cl.Close()
	if err != nil || resp.Code != protocol.RespSuccess {
		t.Fatalf("TBW102 route from %s: %v %v", nsAddr, resp, err)
	}
	_, metricsLine, _ := strings.Cut(out.String(), "broker: metrics at ")
	metricsURL, _, _ := strings.Cut(metricsLine, "\n")
	mresp, err := http.Get(metricsURL)
	if err != nil {
		t.Fatalf("GET %s: %v", metricsURL, err)
	}
	mbody, _ := io.ReadAll(mresp.Body)
	mresp.Body.Close()
	if !strings.Contains(string(mbody), "rocketmq_topic_number{") {
		t.Fatalf("GET %s: %s without rocketmq_topic_number", metricsURL, mresp.Status)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// A store directory an older Runnel wrote is refused, and "dev" says how
// to start over: the README's first command meets this after an upgrade.
func TestDevNamesFreshForAnOlderStore(t *testing.T) {
	dir := t.TempDir()
	db, err := pebble.Open(dir, &pebble.Options{}) // the layout before the log had its own database
	if err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	// Bounded: without the refusal dev would serve until cancelled.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = runDev(ctx, devConfig{dir: dir, nsListen: "127.0.0.1:0", brokerListen: "127.0.0.1:0",
		log: slog.New(slog.NewTextHandler(io.Discard, nil))}, io.Discard)
	if !errors.Is(err, store.ErrOlderFormat) || !strings.Contains(err.Error(), "runnel dev --fresh") {
		t.Fatalf("dev on an older store: %v", err)
	}
}

// "dev --tls --tls-mode enforcing" serves TLS only, on both ports, with a
// generated certificate whose PEM it writes and names: a client verifying
// with it gets the TBW102 route (so the broker registered over TLS too)
// and reaches the broker; a plain client is refused.
func TestDevTLS(t *testing.T) {
	out, stop := background(t, "tls: ", dev(devConfig{dir: filepath.Join(t.TempDir(), "store"), nsListen: "127.0.0.1:0", brokerListen: "127.0.0.1:0",
		tlsMode: remoting.TLSEnforcing, log: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	lines := strings.Split(out.String(), "\n")
	nsAddr := strings.TrimPrefix(lines[0], "namesrv: serving on ")
	brokerAddr, _, _ := strings.Cut(strings.TrimPrefix(lines[1], "broker: serving on "), " ")
	_, certPath, ok := strings.Cut(strings.TrimSuffix(lines[2], ")"), "--tls-ca ")
	if !ok || !strings.HasPrefix(lines[2], "tls: enforcing on both ports") {
		t.Fatalf("tls line: %q", lines[2])
	}
	tc, err := remoting.ClientTLSConfig(certPath)
	if err != nil {
		t.Fatal(err)
	}
	route := func(cl *remoting.Client) (*protocol.Command, error) {
		rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer rcancel()
		return cl.Invoke(rctx, nsAddr, protocol.NewRequest(protocol.ReqGetRouteInfoByTopic,
			protocol.GetRouteInfoRequestHeader{Topic: "TBW102"}.Encode(), nil))
	}
	cl := remoting.NewClient(remoting.ClientConfig{TLS: tc})
	resp, err := route(cl)
	if err != nil || resp.Code != protocol.RespSuccess {
		t.Fatalf("TBW102 route over verified TLS: %v %v", resp, err)
	}
	if _, err := cl.Conn(context.Background(), brokerAddr); err != nil {
		t.Fatalf("broker over verified TLS: %v", err)
	}
	_ = cl.Close()
	plain := remoting.NewClient(remoting.DefaultClientConfig())
	if _, err := route(plain); !errors.Is(err, remoting.ErrConnClosed) {
		t.Fatalf("plain client to an enforcing name server: %v", err)
	}
	_ = plain.Close()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// TestDevAuthRoot starts dev with ACL 2.0 and checks over the wire that an
// unsigned request is refused with Java's remark and the super user's
// signed one is served.
func TestDevAuthRoot(t *testing.T) {
	brokerAddr, nsAddr, stop := startDevAddrs(t, devConfig{authRoot: &protocol.UserInfo{Username: "root", Password: "rootSecret1"}})
	defer stop()
	devNamesrvClosed(t, nsAddr, brokerAddr, acl.Credentials{AccessKey: "root", SecretKey: "rootSecret1"}, protocol.RespNoPermission, true)
	list := func(creds acl.Credentials) *protocol.Command {
		return clitest.Call(t, brokerAddr, creds, protocol.NewRequest(protocol.ReqAuthListUser, protocol.ListUsersRequestHeader{}.Encode(), nil))
	}
	if resp := list(acl.Credentials{}); resp.Code != protocol.RespNoPermission || resp.Remark != "username cannot be null." {
		t.Fatalf("unsigned: %d %q", resp.Code, resp.Remark)
	}
	if resp := list(acl.Credentials{AccessKey: "root", SecretKey: "rootSecret1"}); resp.Code != protocol.RespSuccess || !strings.Contains(string(resp.Body), `"username":"root"`) {
		t.Fatalf("as root: %d %q %s", resp.Code, resp.Remark, resp.Body)
	}
}

// TestDevACLFile starts dev with a plain_acl.yml: an unsigned request is
// refused as Java's plain ACL refuses it, the file's admin is served.
func TestDevACLFile(t *testing.T) {
	file := clitest.WriteFile(t, "plain_acl.yml", "accounts:\n  - accessKey: devAdmin\n    secretKey: devSecret1\n    admin: true\n")
	brokerAddr, nsAddr, stop := startDevAddrs(t, devConfig{aclFile: file})
	defer stop()
	devNamesrvClosed(t, nsAddr, brokerAddr, acl.Credentials{AccessKey: "devAdmin", SecretKey: "devSecret1"}, protocol.RespSystemError, false)
	info := func(creds acl.Credentials) *protocol.Command {
		return clitest.Call(t, brokerAddr, creds, protocol.NewRequest(protocol.ReqGetBrokerRuntimeInfo, nil, nil))
	}
	if resp := info(acl.Credentials{}); resp.Code != protocol.RespSystemError || !strings.HasSuffix(resp.Remark, "No accessKey is configured") {
		t.Fatalf("unsigned: %d %q", resp.Code, resp.Remark)
	}
	if resp := info(acl.Credentials{AccessKey: "devAdmin", SecretKey: "devSecret1"}); resp.Code != protocol.RespSuccess {
		t.Fatalf("as the admin: %d %q", resp.Code, resp.Remark)
	}
}

// devNamesrvClosed checks dev's name server: the broker's registration
// went through (signed by the broker: TBW102 routes to it), an unsigned
// write-permission wipe is refused with refusal (the model's code), the
// administrator's is served, and an unsigned route query is answered
// when openRoutes (ACL 2.0) and refused otherwise (plain ACL).
func devNamesrvClosed(t *testing.T, nsAddr, brokerAddr string, admin acl.Credentials, refusal int16, openRoutes bool) {
	t.Helper()
	route := func(creds acl.Credentials) *protocol.Command {
		return clitest.Call(t, nsAddr, creds, protocol.NewRequest(protocol.ReqGetRouteInfoByTopic, protocol.GetRouteInfoRequestHeader{Topic: "TBW102"}.Encode(), nil))
	}
	if resp := route(admin); resp.Code != protocol.RespSuccess || !strings.Contains(string(resp.Body), brokerAddr) {
		t.Fatalf("TBW102's route: %d %q %s", resp.Code, resp.Remark, resp.Body)
	}
	if resp := route(acl.Credentials{}); (resp.Code == protocol.RespSuccess) != openRoutes {
		t.Errorf("unsigned route query: %d %q", resp.Code, resp.Remark)
	}
	wipe := func(creds acl.Credentials) *protocol.Command {
		return clitest.Call(t, nsAddr, creds, protocol.NewRequest(protocol.ReqWipeWritePermOfBroker, map[string]string{"brokerName": "no-such-broker"}, nil))
	}
	if resp := wipe(acl.Credentials{}); resp.Code != refusal {
		t.Errorf("unsigned wipe: %d %q, want %d", resp.Code, resp.Remark, refusal)
	}
	if resp := wipe(admin); resp.Code != protocol.RespSuccess {
		t.Errorf("the administrator's wipe: %d %q", resp.Code, resp.Remark)
	}
}

// startDev runs dev with dc (ports and store filled in) until stop, and
// returns the broker's address.
func startDev(t *testing.T, dc devConfig) (string, func()) {
	t.Helper()
	broker, _, stop := startDevAddrs(t, dc)
	return broker, stop
}

// startDevAddrs is startDev, and the name server's address.
func startDevAddrs(t *testing.T, dc devConfig) (brokerAddr, nsAddr string, stop func()) {
	t.Helper()
	dc.dir, dc.nsListen, dc.brokerListen = t.TempDir(), "127.0.0.1:0", "127.0.0.1:0"
	dc.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	out, stopDev := background(t, servingLine, dev(dc))
	brokerAddr, nsAddr = devAddrs(out)
	return brokerAddr, nsAddr, func() {
		if err := stopDev(); err != nil {
			t.Error(err)
		}
	}
}

// servingLine is in dev's output once both servers serve.
const servingLine = "broker: serving on "

// devAddrs reads the broker's and the name server's addresses from dev's
// serving lines.
func devAddrs(out *clitest.Buffer) (brokerAddr, nsAddr string) {
	lines := strings.Split(out.String(), "\n")
	brokerAddr, _, _ = strings.Cut(strings.TrimPrefix(lines[1], "broker: serving on "), " ")
	return brokerAddr, strings.TrimPrefix(lines[0], "namesrv: serving on ")
}

// TestDevAuthRootSources turns ACL 2.0 on from the command line without
// the password on it: from --auth-root-file and from RUNNEL_AUTH_ROOT.
// Giving both a flag and a file is an error.
func TestDevAuthRootSources(t *testing.T) {
	file := filepath.Join(t.TempDir(), "root")
	if err := os.WriteFile(file, []byte("root:fileSecret1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		args   []string
		env    string
		secret string
	}{
		"file": {[]string{"--auth-root-file", file}, "", "fileSecret1"},
		"env":  {nil, "root:envSecret1", "envSecret1"},
	} {
		t.Run(name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv("RUNNEL_AUTH_ROOT", tc.env)
			}
			out, stop := background(t, servingLine, command(append([]string{"dev", "--dir", t.TempDir(), "--namesrv-listen", "127.0.0.1:0",
				"--broker-listen", "127.0.0.1:0", "--metrics-listen", "", "--log-level", "error"}, tc.args...)...))
			brokerAddr, _ := devAddrs(out)
			list := protocol.NewRequest(protocol.ReqAuthListUser, protocol.ListUsersRequestHeader{}.Encode(), nil)
			if resp := clitest.Call(t, brokerAddr, acl.Credentials{AccessKey: "root", SecretKey: tc.secret}, list); resp.Code != protocol.RespSuccess {
				t.Errorf("as root: %d %q", resp.Code, resp.Remark)
			}
			if err := stop(); err != nil {
				t.Fatal(err)
			}
		})
	}
	cmd := newCommand(io.Discard, io.Discard)
	cmd.SetArgs([]string{"dev", "--dir", t.TempDir(), "--auth-root", "root:x", "--auth-root-file", file})
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "--auth-root") {
		t.Fatalf("flag and file: %v", err)
	}
}
