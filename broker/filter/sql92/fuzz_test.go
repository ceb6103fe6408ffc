package sql92

import (
	"testing"
)

// FuzzCompile: Compile never panics; whatever compiles evaluates without
// panicking over any properties, and its String() form compiles to an
// expression that gives the same result and prints the same way.
// Seeds are in testdata/fuzz/FuzzCompile.
func FuzzCompile(f *testing.F) {
	f.Fuzz(func(t *testing.T, expr, v1, v2 string) {
		e, err := Compile(expr)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("Compile(%q) error %T %v, want *Error", expr, err, err)
			}
			return
		}
		s := e.String()
		re, err := Compile(s)
		if err != nil {
			t.Fatalf("String() %q of %q does not compile: %v", s, expr, err)
		}
		if re.String() != s {
			t.Fatalf("String() of %q is not stable: %q then %q", expr, s, re.String())
		}
		// Property sets: none, and the expression's own properties set to
		// the fuzzed values in turn.
		sets := []props{{}, {}, {}}
		for i, name := range e.Properties() {
			sets[1][name] = v1
			if i%2 == 0 {
				sets[2][name] = v2
			}
		}
		for _, p := range sets {
			got, want := re.Evaluate(p.get), e.Evaluate(p.get)
			if got != want {
				t.Fatalf("%q over %v = %v, but its String() %q = %v", expr, p, want, s, got)
			}
			if e.Match(p.get) != (want == True) {
				t.Fatalf("Match(%q) over %v disagrees with Evaluate %v", expr, p, want)
			}
		}
	})
}
