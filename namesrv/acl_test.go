package namesrv

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/runnelmq/runnel/acl/auth"
	"github.com/runnelmq/runnel/internal/clitest"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// TestEveryHandlerIsMapped walks every request code the name server
// serves (broker/remotingdoor has its twin: each server walks its own
// handlers against its own table): each must have an entry in its access-control table, so that
// none is served with ACL on without a decision on what it needs. The
// table has no entry for a code it does not serve either.
func TestEveryHandlerIsMapped(t *testing.T) {
	cfg := DefaultConfig()
	cfg.ListenAddr = "127.0.0.1:0"
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	codes := s.aclCodes()
	served := map[int16]bool{}
	for _, code := range s.rs.Codes() {
		served[code] = true
		if codes[code] == nil {
			t.Errorf("request code %d (%s) is served but has no access-control mapping", code, protocol.RequestCodeName(code))
		}
	}
	if len(served) < 10 {
		t.Fatalf("only %d codes served: the walk saw the wrong server", len(served))
	}
	for code := range codes {
		if !served[code] {
			t.Errorf("request code %d (%s) is mapped but not served", code, protocol.RequestCodeName(code))
		}
	}
}

// TestPlaintextWarning: with access control on, a name server that
// accepts plaintext connections on an address reachable from other hosts
// warns at start that signed requests can be replayed there; on loopback
// it does not.
func TestPlaintextWarning(t *testing.T) {
	for _, tc := range []struct {
		listen string
		warn   bool
	}{{"0.0.0.0:0", true}, {"127.0.0.1:0", false}} {
		var logs clitest.Buffer
		cfg := DefaultConfig()
		cfg.ListenAddr = tc.listen
		cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
		cfg.Auth = auth.Config{AuthenticationEnabled: true, AuthorizationEnabled: true,
			InitUsers: []protocol.UserInfo{{Username: "admin", Password: "adminSecret1"}}}
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		_ = s.Close()
		if warned := strings.Contains(logs.String(), "tls.server.mode=enforcing"); warned != tc.warn {
			t.Errorf("%s: warned %v, want %v; logs:\n%s", tc.listen, warned, tc.warn, logs.String())
		}
	}
}
