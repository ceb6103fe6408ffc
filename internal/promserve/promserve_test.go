package promserve

import (
	"strings"
	"testing"
)

func TestSplitAddr(t *testing.T) {
	if host, port, err := SplitAddr("127.0.0.1:5557"); err != nil || host != "127.0.0.1" || port != 5557 {
		t.Fatalf("127.0.0.1:5557: %q %d %v", host, port, err)
	}
	if host, port, err := SplitAddr(":9090"); err != nil || host != "" || port != 9090 {
		t.Fatalf(":9090: %q %d %v", host, port, err)
	}
	for in, want := range map[string]string{"5557": "missing port", "h:70000": "bad port", "h:x": "bad port"} {
		if _, _, err := SplitAddr(in); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), in) {
			t.Errorf("%s: %v, want an error naming it and saying %q", in, err, want)
		}
	}
}
