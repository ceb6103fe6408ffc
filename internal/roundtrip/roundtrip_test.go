package roundtrip

import (
	"errors"
	"strconv"
	"testing"
)

var errBad = errors.New("bad")

func decodeInt(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, errBad
	}
	return n, nil
}

func same(a, b int) bool { return a == b }

// recorder is a testing.TB that notes a failure instead of ending the test.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Fatalf(string, ...any) { r.failed = true }

func TestCheck(t *testing.T) {
	if v, ok := Check(t, "42", decodeInt, strconv.Itoa, errBad, same); !ok || v != 42 {
		t.Fatalf("42: %v %v", v, ok)
	}
	if _, ok := Check(t, "x", decodeInt, strconv.Itoa, errBad, same); ok {
		t.Fatal("x decoded")
	}
	for name, c := range map[string]struct {
		encode func(int) string
		want   error
		in     string
	}{
		"another error":        {strconv.Itoa, errors.New("other"), "x"},
		"undecodable encoding": {func(int) string { return "x" }, errBad, "1"},
		"another value":        {func(n int) string { return strconv.Itoa(n + 1) }, errBad, "1"},
	} {
		r := &recorder{TB: t}
		Check[string, int](r, c.in, decodeInt, c.encode, c.want, same)
		if !r.failed {
			t.Errorf("%s: not reported", name)
		}
	}
}
