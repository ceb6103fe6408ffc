package sql92

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Expr is a compiled filter expression. It is immutable: one Expr may be
// matched from any number of goroutines at once.
type Expr struct {
	src   string
	root  node
	props []string
}

// Error is a compile error: what is wrong and where.
type Error struct {
	// Offset is the byte offset of the offending token in the expression.
	Offset int
	// Line and Column locate it for people: both from 1, Column counting
	// characters.
	Line, Column int
	// Msg says what is wrong.
	Msg string
}

func (e *Error) Error() string {
	if e.Line == 1 {
		return fmt.Sprintf("sql92: column %d: %s", e.Column, e.Msg)
	}
	return fmt.Sprintf("sql92: line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

func errAt(src string, off int, msg string) *Error {
	off = min(off, len(src))
	before := src[:off]
	line := 1 + strings.Count(before, "\n")
	if i := strings.LastIndexByte(before, '\n'); i >= 0 {
		before = before[i+1:]
	}
	return &Error{Offset: off, Line: line, Column: 1 + utf8.RuneCountInString(before), Msg: msg}
}

// Compile parses expr. The error is an *Error.
func Compile(expr string) (*Expr, error) {
	toks, err := lex(expr)
	if err != nil {
		return nil, err
	}
	p := &parser{src: expr, toks: toks, seen: map[string]bool{}}
	root, err := p.parse()
	if err != nil {
		return nil, err
	}
	return &Expr{src: expr, root: root, props: p.props}, nil
}

// Result is the three-valued outcome of an evaluation, plus Failed.
type Result int8

const (
	// Unknown is SQL's UNKNOWN (Java's null): a missing property compared.
	Unknown Result = iota
	// False: the expression is false.
	False
	// True: the expression is true; the only result that matches.
	True
	// Failed: the evaluation stopped where RocketMQ's throws, such as a
	// property that is not a number compared with a number. RocketMQ
	// logs it and does not deliver the message.
	Failed
)

func (r Result) String() string {
	return [...]string{"unknown", "false", "true", "failed"}[r]
}

// Evaluate evaluates e over a message's properties; get reports a
// property's value and whether the message has it.
func (e *Expr) Evaluate(get func(name string) (string, bool)) Result {
	v, ok := e.root.eval(funcGetter(get))
	switch {
	case !ok:
		return Failed
	case v.k != kBool:
		return Unknown
	case v.truth():
		return True
	}
	return False
}

// Match reports whether a message with these properties passes e: whether
// Evaluate is True.
func (e *Expr) Match(get func(name string) (string, bool)) bool {
	return e.match(funcGetter(get))
}

// MatchMap is Match over a property map (a message's decoded
// properties, TAGS among them).
func (e *Expr) MatchMap(props map[string]string) bool {
	return e.match(mapGetter(props))
}

func (e *Expr) match(g getter) bool {
	v, ok := e.root.eval(g)
	return ok && v.k == kBool && v.truth()
}

// Properties returns the names of the properties e reads, in order of
// first use.
func (e *Expr) Properties() []string { return slices.Clone(e.props) }

// Source returns the expression as given to Compile.
func (e *Expr) Source() string { return e.src }

// String returns a canonical, fully parenthesised form of e, which
// compiles to an expression with the same results (BETWEEN appears as the
// comparisons it stands for).
func (e *Expr) String() string {
	var b strings.Builder
	e.root.format(&b)
	return b.String()
}
