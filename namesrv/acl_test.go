package namesrv

import (
	"testing"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// TestEveryHandlerIsMapped walks every request code the name server
// serves: each must have an entry in its access-control table, so that
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
