package broker

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/internal/clitest"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// TestConfigInterceptorsRunBehindACL: Config.Interceptors join the server's
// chain after ACL's check: a request ACL refuses never reaches them; one it
// lets through does, and their refusal is the answer.
func TestConfigInterceptorsRunBehindACL(t *testing.T) {
	file := clitest.WriteFile(t, "plain_acl.yml", "accounts:\n  - accessKey: adminAK\n    secretKey: adminSecret1\n    admin: true\n")
	var seen atomic.Int32
	b := startBrokerAt(t, t.TempDir(), func(cfg *config.Config) {
		cfg.ACLEnable, cfg.ACLFile = true, file
		cfg.Interceptors = []remoting.Interceptor{{Request: func(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
			seen.Add(1)
			return protocol.NewResponse(req, protocol.RespSystemBusy, "tapped")
		}}}
	})
	ask := protocol.QueueRequestHeader{Topic: "T", QueueID: 0}.Encode()
	unsigned := newRawClient(t, b.Addr())
	if resp := unsigned.call(protocol.ReqGetMaxOffset, ask, nil); resp.Code == protocol.RespSystemBusy || !strings.Contains(resp.Remark, "No accessKey") {
		t.Fatalf("unsigned request: %v, want ACL's refusal", resp)
	}
	if n := seen.Load(); n != 0 {
		t.Fatalf("the interceptor saw %d requests ACL refused", n)
	}
	signed := remoting.NewClient(remoting.ClientConfig{Logger: testLogger(),
		Interceptors: acl.Credentials{AccessKey: "adminAK", SecretKey: "adminSecret1"}.Interceptor()})
	defer signed.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := signed.Invoke(ctx, b.Addr(), protocol.NewRequest(protocol.ReqGetMaxOffset, ask, nil))
	if err != nil || resp.Code != protocol.RespSystemBusy || resp.Remark != "tapped" {
		t.Fatalf("signed request: %v %v, want the interceptor's refusal", resp, err)
	}
	if n := seen.Load(); n != 1 {
		t.Fatalf("the interceptor saw %d requests, want 1", n)
	}
}

// TestPlaintextWarning: with access control on, a broker that accepts
// plaintext connections on an address reachable from other hosts warns at
// start that signed requests can be replayed there; on loopback, or with
// TLS enforced, it does not.
func TestPlaintextWarning(t *testing.T) {
	file := filepath.Join(t.TempDir(), "plain_acl.yml")
	if err := os.WriteFile(file, []byte("accounts:\n  - {accessKey: adminAK, secretKey: adminSecret1, admin: true}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, listen, tls string
		acl, warn         bool
	}{
		{"every interface, plaintext", "0.0.0.0:0", "", true, true},
		{"every interface, permissive", "0.0.0.0:0", remoting.TLSPermissive, true, true},
		{"every interface, enforcing", "0.0.0.0:0", remoting.TLSEnforcing, true, false},
		{"loopback", "127.0.0.1:0", "", true, false},
		{"no access control", "0.0.0.0:0", "", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs clitest.Buffer
			startBrokerAt(t, t.TempDir(), func(cfg *config.Config) {
				cfg.ListenAddr = tc.listen
				cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
				cfg.ACLEnable, cfg.ACLFile = tc.acl, file
				if tc.tls != "" {
					if _, err := cfg.TLS.Set("tls.server.mode", tc.tls); err != nil {
						t.Fatal(err)
					}
				}
			})
			if warned := strings.Contains(logs.String(), "tls.server.mode=enforcing"); warned != tc.warn {
				t.Fatalf("warned %v, want %v; logs:\n%s", warned, tc.warn, logs.String())
			}
		})
	}
}
