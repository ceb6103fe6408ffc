package version

import (
	"strings"
	"testing"
)

func TestStringUsesTheLinkTimeVersion(t *testing.T) {
	old := Version
	t.Cleanup(func() { Version = old })
	Version = "v9.8.7"
	if got := String(); !strings.HasPrefix(got, "runnel v9.8.7 (") || !strings.Contains(got, "go1.") {
		t.Fatalf("String() = %q", got)
	}
	Version = ""
	if got := String(); !strings.HasPrefix(got, "runnel ") || strings.Contains(got, "runnel  ") {
		t.Fatalf("String() without a link-time version = %q", got)
	}
}
