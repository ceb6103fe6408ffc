package sql92

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode"
)

// props is a message's properties for a test.
type props map[string]string

func (p props) get(name string) (string, bool) {
	v, ok := p[name]
	return v, ok
}

// evalCase is one line of testdata/eval.txt.
type evalCase struct {
	line  int
	want  string // true, false, unknown, failed, or "error TEXT"
	props props
	expr  string
}

func readCases(t *testing.T, path string) []evalCase {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []evalCase
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.SplitN(line, "|", 3)
		if len(parts) != 3 {
			t.Fatalf("%s:%d: want 'want | properties | expression'", path, n)
		}
		c := evalCase{line: n, want: strings.TrimSpace(parts[0]), props: props{}}
		c.expr = strings.TrimSpace(parts[2])
		if strings.HasPrefix(c.expr, `"`) {
			if c.expr, err = strconv.Unquote(c.expr); err != nil {
				t.Fatalf("%s:%d: expression: %v", path, n, err)
			}
		}
		if c.props, err = parseProps(strings.TrimSpace(parts[1])); err != nil {
			t.Fatalf("%s:%d: properties: %v", path, n, err)
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

// parseProps reads `a=1 b="x y"`; "-" is no properties.
func parseProps(s string) (props, error) {
	p := props{}
	for s != "-" && s != "" {
		eq := strings.IndexByte(s, '=')
		if eq <= 0 {
			return nil, fmt.Errorf("%q: want name=value", s)
		}
		name, rest := s[:eq], s[eq+1:]
		var val string
		if strings.HasPrefix(rest, `"`) {
			q, err := strconv.QuotedPrefix(rest)
			if err != nil {
				return nil, err
			}
			val, _ = strconv.Unquote(q)
			rest = rest[len(q):]
		} else {
			end := strings.IndexFunc(rest, unicode.IsSpace)
			if end < 0 {
				end = len(rest)
			}
			val, rest = rest[:end], rest[end:]
		}
		p[name] = val
		s = strings.TrimSpace(rest)
	}
	return p, nil
}

// TestEvalData runs testdata/eval.txt; each case is also run on the
// String() form of its expression, which must give the same result.
func TestEvalData(t *testing.T) { runCases(t, "testdata/eval.txt") }

// TestJavaCases runs the cases of RocketMQ's own filter tests.
func TestJavaCases(t *testing.T) {
	runCases(t, "testdata/java.txt")
	// ParserTest.testParse_floatOverFlow: a decimal of 210,000 digits.
	huge := "a > 1" + strings.Repeat("111111111111111111111111111111111111111111111111111", 2048) + "." +
		strings.Repeat("111111111111111111111111111111111111111111111111111", 2048)
	if _, err := Compile(huge); err == nil || !strings.Contains(err.Error(), "too large for a double") {
		t.Errorf("a huge decimal: %v", err)
	}
}

func runCases(t *testing.T, path string) {
	for _, c := range readCases(t, path) {
		name := fmt.Sprintf("line%d", c.line)
		if msg, ok := strings.CutPrefix(c.want, "error "); ok {
			_, err := Compile(c.expr)
			var se *Error
			switch {
			case err == nil:
				t.Errorf("%s: Compile(%q) succeeded, want an error with %q", name, c.expr, msg)
			case !errors.As(err, &se):
				t.Errorf("%s: Compile(%q) = %T %v, want *Error", name, c.expr, err, err)
			case !strings.Contains(err.Error(), msg):
				t.Errorf("%s: Compile(%q) = %q, want it to contain %q", name, c.expr, err, msg)
			}
			continue
		}
		e, err := Compile(c.expr)
		if err != nil {
			t.Errorf("%s: Compile(%q): %v", name, c.expr, err)
			continue
		}
		if got := e.Evaluate(c.props.get).String(); got != c.want {
			t.Errorf("%s: %q over %v = %s, want %s", name, c.expr, c.props, got, c.want)
		}
		if got, want := e.Match(c.props.get), c.want == "true"; got != want {
			t.Errorf("%s: Match(%q) over %v = %v, want %v", name, c.expr, c.props, got, want)
		}
		re, err := Compile(e.String())
		if err != nil {
			t.Errorf("%s: String() %q of %q does not compile: %v", name, e.String(), c.expr, err)
			continue
		}
		if got := re.Evaluate(c.props.get).String(); got != c.want {
			t.Errorf("%s: String() %q over %v = %s, want %s", name, e.String(), c.props, got, c.want)
		}
		if re.String() != e.String() {
			t.Errorf("%s: String() is not stable: %q then %q", name, e.String(), re.String())
		}
	}
}

// TestThreeValuedLogic checks AND, OR and NOT over every pair of TRUE,
// FALSE and unknown against SQL's truth tables.
func TestThreeValuedLogic(t *testing.T) {
	// Each operand is a comparison whose result the properties decide:
	// x = '1' is TRUE for x=1, FALSE for x=0, unknown without x.
	vals := []struct {
		name string
		set  func(p props, key string)
	}{
		{"true", func(p props, k string) { p[k] = "1" }},
		{"false", func(p props, k string) { p[k] = "0" }},
		{"unknown", func(props, string) {}},
	}
	and := map[[2]string]string{
		{"true", "true"}: "true", {"true", "false"}: "false", {"true", "unknown"}: "unknown",
		{"false", "true"}: "false", {"false", "false"}: "false", {"false", "unknown"}: "false",
		{"unknown", "true"}: "unknown", {"unknown", "false"}: "false", {"unknown", "unknown"}: "unknown",
	}
	or := map[[2]string]string{
		{"true", "true"}: "true", {"true", "false"}: "true", {"true", "unknown"}: "true",
		{"false", "true"}: "true", {"false", "false"}: "false", {"false", "unknown"}: "unknown",
		{"unknown", "true"}: "true", {"unknown", "false"}: "unknown", {"unknown", "unknown"}: "unknown",
	}
	not := map[string]string{"true": "false", "false": "true", "unknown": "unknown"}
	eAnd, eOr, eNot := mustCompile(t, "x = '1' AND y = '1'"), mustCompile(t, "x = '1' OR y = '1'"), mustCompile(t, "NOT (x = '1')")
	for _, a := range vals {
		p := props{}
		a.set(p, "x")
		if got := eNot.Evaluate(p.get).String(); got != not[a.name] {
			t.Errorf("NOT %s = %s, want %s", a.name, got, not[a.name])
		}
		for _, b := range vals {
			p := props{}
			a.set(p, "x")
			b.set(p, "y")
			k := [2]string{a.name, b.name}
			if got := eAnd.Evaluate(p.get).String(); got != and[k] {
				t.Errorf("%s AND %s = %s, want %s", a.name, b.name, got, and[k])
			}
			if got := eOr.Evaluate(p.get).String(); got != or[k] {
				t.Errorf("%s OR %s = %s, want %s", a.name, b.name, got, or[k])
			}
		}
	}
}

func mustCompile(t testing.TB, s string) *Expr {
	t.Helper()
	e, err := Compile(s)
	if err != nil {
		t.Fatalf("Compile(%q): %v", s, err)
	}
	return e
}

func TestErrorPosition(t *testing.T) {
	for _, c := range []struct {
		expr           string
		off, line, col int
		text           string
	}{
		{"a = 'x' AND b LIKE 'y%'", 14, 1, 15, "LIKE is not supported"},
		{"a = 'unterminated", 4, 1, 5, "unterminated string"},
		{"a = 1\nAND b + 2 > 1", 12, 2, 7, "arithmetic ('+')"},
		{"'é' = 1 OR 5", 12, 1, 12, "not a condition"},
	} {
		_, err := Compile(c.expr)
		var se *Error
		if !errors.As(err, &se) {
			t.Errorf("Compile(%q) = %v, want *Error", c.expr, err)
			continue
		}
		if se.Offset != c.off || se.Line != c.line || se.Column != c.col || !strings.Contains(se.Msg, c.text) {
			t.Errorf("Compile(%q) = offset %d line %d column %d %q, want %d %d %d with %q",
				c.expr, se.Offset, se.Line, se.Column, se.Msg, c.off, c.line, c.col, c.text)
		}
	}
}

// TestDepthBound: nesting beyond the bounds is refused with an error, in
// every form that nests, and just within them compiles.
func TestDepthBound(t *testing.T) {
	deep := MaxDepth + 1
	for name, expr := range map[string]string{
		"parens":      strings.Repeat("(", maxNesting+1) + "a = 1" + strings.Repeat(")", maxNesting+1),
		"not":         strings.Repeat("NOT ", deep) + "a",
		"minus":       "a = " + strings.Repeat("- ", deep) + "1",
		"not parens":  strings.Repeat("NOT (", maxNesting/2+1) + "a" + strings.Repeat(")", maxNesting/2+1),
		"is null":     "a" + strings.Repeat(" IS NULL", deep),
		"equal chain": "a" + strings.Repeat(" = TRUE", deep),
		"contains":    "a" + strings.Repeat(" CONTAINS 'x'", deep),
		"huge":        strings.Repeat("(", 1_000_000),
	} {
		_, err := Compile(expr)
		if err == nil || !strings.Contains(err.Error(), "nests deeper than") {
			t.Errorf("%s: Compile = %v, want a nesting error", name, err)
		}
	}
	ok := strings.Repeat("(", maxNesting) + "a = 1" + strings.Repeat(")", maxNesting)
	if _, err := Compile(ok); err != nil {
		t.Errorf("%d parentheses: %v", maxNesting, err)
	}
	// The deepest expression there is prints in a form that compiles.
	e := mustCompile(t, "a = "+strings.Repeat("- ", MaxDepth-2)+"1")
	if _, err := Compile(e.String()); err != nil {
		t.Errorf("String() of the deepest expression: %v", err)
	}
	// Long flat chains are not nesting.
	chain := "a = '0'" + strings.Repeat(" OR a = 'x'", 10_000)
	e = mustCompile(t, chain)
	if !e.Match(props{"a": "0"}.get) || e.Match(props{"a": "1"}.get) {
		t.Error("a long OR chain evaluates wrongly")
	}
}

func TestProperties(t *testing.T) {
	e := mustCompile(t, "b > 1 AND (a IN ('x') OR b IS NULL) AND TAGS CONTAINS 'T' AND NOT c")
	if got, want := e.Properties(), []string{"b", "a", "TAGS", "c"}; !slices.Equal(got, want) {
		t.Errorf("Properties() = %v, want %v", got, want)
	}
	e.Properties()[0] = "changed"
	if e.Properties()[0] != "b" {
		t.Error("Properties() shares its slice")
	}
	if got := mustCompile(t, "TRUE").Properties(); len(got) != 0 {
		t.Errorf("Properties() of TRUE = %v", got)
	}
}

func TestString(t *testing.T) {
	for expr, want := range map[string]string{
		"a > 5 and b in ('x','y')":         "((a > 5) AND (b IN ('x', 'y')))",
		"a between 1 and 2.5":              "((a >= 1) AND (a <= 2.5))",
		"a not between -1 and 1e21":        "((a < (-1)) OR (a > 1e+21))",
		"not a = 'it''s'":                  "((NOT a) = 'it''s')",
		"a is not null or b <> 3000000000": "((NOT (a IS NULL)) OR (NOT (b = 3000000000)))",
		"a not contains 'x' and TRUE":      "((a NOT CONTAINS 'x') AND TRUE)",
		"5.0 < a":                          "(5.0 < a)",
	} {
		if got := mustCompile(t, expr).String(); got != want {
			t.Errorf("String(%q) = %q, want %q", expr, got, want)
		}
	}
}

// TestConcurrentMatch: one Expr matched from many goroutines (run with
// -race).
func TestConcurrentMatch(t *testing.T) {
	e := mustCompile(t, "a > 5 AND b IN ('a','b','c','d','e','f') AND c NOT CONTAINS 'x'")
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				p := props{"a": strconv.Itoa(i + g), "b": "c", "c": "yyy"}
				if got, want := e.Match(p.get), i+g > 5; got != want {
					t.Errorf("a=%d: %v, want %v", i+g, got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestJavaNumbers(t *testing.T) {
	for _, c := range []struct {
		s     string
		int32 bool
		n     int64
		ok    bool
	}{
		{"0", true, 0, true}, {"-0", true, 0, true}, {"+12", true, 12, true},
		{"2147483647", true, 2147483647, true}, {"2147483648", true, 0, false},
		{"-2147483648", true, -2147483648, true}, {"-2147483649", true, 0, false},
		{"9223372036854775807", false, 9223372036854775807, true}, {"9223372036854775808", false, 0, false},
		{"-9223372036854775808", false, -9223372036854775808, true},
		{"", true, 0, false}, {"-", true, 0, false}, {"+", true, 0, false}, {"1 ", true, 0, false},
		{"1_0", true, 0, false}, {"0x1", true, 0, false}, {"١٢", true, 12, true}, {"１２", true, 12, true},
		{"\U0001D7CF", true, 0, false}, // MATHEMATICAL BOLD DIGIT ONE: a surrogate pair in Java
	} {
		n, ok := parseJavaInt(c.s, c.int32)
		if n != c.n || ok != c.ok {
			t.Errorf("parseJavaInt(%q, %v) = %d, %v; want %d, %v", c.s, c.int32, n, ok, c.n, c.ok)
		}
	}
	for _, c := range []struct {
		s  string
		ok bool
	}{
		{"1", true}, {"1.", true}, {".5", true}, {"1e5", true}, {"1E-5", true}, {" \t1.5\n", true},
		{"+1", true}, {"-1", true}, {"1f", true}, {"1.5D", true}, {"NaN", true}, {"-Infinity", true},
		{"0x1p3", true}, {"0X1.8P1d", true}, {"0x.8p1", true},
		{"", false}, {".", false}, {"e5", false}, {"1e", false}, {"1e+", false}, {"nan", false},
		{"inf", false}, {"infinity", false}, {"0x1", false}, {"0x1.8", false}, {"1_0", false},
		{"0x_1p0", false}, {"1ff", false}, {"NaNd", false}, {"1 2", false}, {"--1", false},
	} {
		if _, ok := parseJavaDouble(c.s); ok != c.ok {
			t.Errorf("parseJavaDouble(%q) ok = %v, want %v", c.s, ok, c.ok)
		}
	}
	// The digit tables: every BMP range of Nd runs from a zero in tens.
	for _, rg := range unicode.Nd.R16 {
		if rg.Stride != 1 || (rg.Hi-rg.Lo+1)%10 != 0 {
			t.Errorf("Nd range %#x..%#x stride %d is not whole runs of ten", rg.Lo, rg.Hi, rg.Stride)
		}
	}
	for _, c := range []struct{ a, b float64 }{{math.Copysign(0, -1), 0}, {1, 2}, {1, math.NaN()}} {
		if javaDoubleCompare(c.a, c.b) != -1 || javaDoubleCompare(c.b, c.a) != 1 {
			t.Errorf("javaDoubleCompare(%v, %v) does not order them", c.a, c.b)
		}
	}
}
