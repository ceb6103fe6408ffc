package memlimit

import (
	"runtime/debug"
	"testing"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]int64{
		"100MiB": 100 << 20, "2GiB": 2 << 30, "512KiB": 512 << 10, "1TiB": 1 << 40, "4096B": 4096, "4096": 4096, "off": Off,
	} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1MiB", "100MB", "1.5GiB", "MiB", "9999999TiB", "lots"} {
		if v, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) = %d, want an error", in, v)
		}
	}
}

// TestApply: the flag or the default sets the runtime's limit, and
// GOMEMLIMIT in the environment wins over both, untouched.
func TestApply(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	noEnv := func(string) string { return "" }
	for _, c := range []struct {
		flag, from string
		want       int64
	}{{"", "default", Default}, {"256MiB", "--memory-limit", 256 << 20}, {"off", "--memory-limit", Off}} {
		got, from, err := Apply(c.flag, noEnv)
		if err != nil || got != c.want || from != c.from || debug.SetMemoryLimit(-1) != c.want {
			t.Errorf("Apply(%q) = %d %s %v, runtime %d; want %d %s", c.flag, got, from, err, debug.SetMemoryLimit(-1), c.want, c.from)
		}
	}
	debug.SetMemoryLimit(77 << 20) // as the runtime would have from GOMEMLIMIT
	env := func(k string) string {
		if k == "GOMEMLIMIT" {
			return "77MiB"
		}
		return ""
	}
	if got, from, err := Apply("256MiB", env); err != nil || got != 77<<20 || from != "GOMEMLIMIT" {
		t.Errorf("with GOMEMLIMIT: %d %s %v", got, from, err)
	}
	if _, _, err := Apply("lots", noEnv); err == nil {
		t.Error("a bad flag was accepted")
	}
}
