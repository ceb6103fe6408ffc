package sql92

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// MaxDepth bounds how deeply an expression's operators may nest, so that
// a hostile expression cannot exhaust the stack of the parser or of an
// evaluation. Parentheses, NOT and signs together may nest twice as deep
// (maxNesting), which leaves room for the fully parenthesised String form
// of any expression that compiles.
const MaxDepth = 100

const maxNesting = 2 * MaxDepth

// inSetMin is the list length from which IN uses a hash set, as Java does.
const inSetMin = 5

// parser is a recursive-descent parser over the token list, one method per
// rule of the grammar in doc.go. The checks Java makes while building its
// expression tree (which operands can be compared, what can be a
// condition) are made here, so that Compile refuses what RocketMQ refuses.
type parser struct {
	src   string
	toks  []token
	i     int
	depth int
	props []string
	seen  map[string]bool
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

// peek2 is the token after the next one.
func (p *parser) peek2() token {
	if p.i+1 < len(p.toks) {
		return p.toks[p.i+1]
	}
	return p.toks[len(p.toks)-1]
}

func (p *parser) errf(pos int, format string, args ...any) error {
	return errAt(p.src, pos, fmt.Sprintf(format, args...))
}

func (p *parser) expect(k tokKind, what string) (token, error) {
	t := p.next()
	if t.kind != k {
		return t, p.unexpected(t, what)
	}
	return t, nil
}

// unexpected explains a token the grammar has no place for, with a hint
// for what RocketMQ's filter does not support.
func (p *parser) unexpected(t token, want string) error {
	switch {
	case t.kind == tIdent && strings.EqualFold(t.text, "LIKE"):
		return p.errf(t.pos, "LIKE is not supported by RocketMQ's SQL92 filter: use CONTAINS, STARTSWITH or ENDSWITH")
	case t.kind == tIdent && strings.EqualFold(t.text, "ESCAPE"):
		return p.errf(t.pos, "ESCAPE is not supported by RocketMQ's SQL92 filter (there is no LIKE)")
	case t.kind == tMinus && p.peek().kind == tMinus && p.peek().pos == t.pos+1:
		return p.errf(t.pos, "arithmetic ('-') is not supported by RocketMQ's SQL92 filter; a '--' comment runs to a line end and needs one")
	case (t.kind == tPlus || t.kind == tMinus) && want != "a value":
		return p.errf(t.pos, "arithmetic (%s) is not supported by RocketMQ's SQL92 filter", t)
	}
	return p.errf(t.pos, "unexpected %s, want %s", t, want)
}

// enter counts one level of nesting.
func (p *parser) enter(pos int) error {
	p.depth++
	if p.depth > maxNesting {
		return p.errf(pos, "expression nests deeper than %d parentheses, NOTs and signs", maxNesting)
	}
	return nil
}

func (p *parser) leave() { p.depth-- }

// checkHeight refuses a node built too deep by chained operators.
func (p *parser) checkHeight(n node, pos int) (node, error) {
	if n.height() > MaxDepth {
		return nil, p.errf(pos, "expression nests deeper than %d operators", MaxDepth)
	}
	return n, nil
}

// asBoolean is Java's asBooleanExpression: a condition is a boolean
// expression or a property (cast); a literal or a negation is refused.
func (p *parser) asBoolean(n node, pos int) (node, error) {
	if n.boolean() {
		return n, nil
	}
	if pn, ok := n.(*propNode); ok {
		return &castNode{nodeHeight: childHeight(pn), p: pn}, nil
	}
	return nil, p.errf(pos, "%s is not a condition", describe(n))
}

func (p *parser) parse() (node, error) {
	if p.peek().kind == tEOF {
		return nil, p.errf(0, "empty expression")
	}
	pos := p.peek().pos
	n, err := p.orExpr()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		return nil, p.unexpected(t, "AND, OR or the end of the expression")
	}
	return p.asBoolean(n, pos)
}

// orExpr = andExpr { OR andExpr }
func (p *parser) orExpr() (node, error) {
	return p.logic(true, p.andExpr)
}

// andExpr = equality { AND equality }
func (p *parser) andExpr() (node, error) {
	return p.logic(false, p.equality)
}

func (p *parser) logic(or bool, operand func() (node, error)) (node, error) {
	op := tAnd
	if or {
		op = tOr
	}
	pos := p.peek().pos
	first, err := operand()
	if err != nil {
		return nil, err
	}
	if p.peek().kind != op {
		return first, nil
	}
	if first, err = p.asBoolean(first, pos); err != nil {
		return nil, err
	}
	xs := flatten(nil, first, or)
	for p.peek().kind == op {
		p.next()
		pos := p.peek().pos
		x, err := operand()
		if err != nil {
			return nil, err
		}
		if x, err = p.asBoolean(x, pos); err != nil {
			return nil, err
		}
		xs = flatten(xs, x, or)
	}
	return p.checkHeight(&logicNode{nodeHeight: childHeight(xs...), or: or, xs: xs}, pos)
}

// flatten appends x, or x's operands when x is the same kind of chain.
func flatten(xs []node, x node, or bool) []node {
	if l, ok := x.(*logicNode); ok && l.or == or {
		return append(xs, l.xs...)
	}
	return append(xs, x)
}

// equality = comparison { ("=" | "<>") comparison | IS [NOT] NULL }
func (p *parser) equality() (node, error) {
	l, err := p.comparison()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		switch t.kind {
		case tEq, tNe:
			p.next()
			r, err := p.comparison()
			if err != nil {
				return nil, err
			}
			if err := p.checkEqual(l, r, t.pos); err != nil {
				return nil, err
			}
			l = &eqNode{nodeHeight: childHeight(l, r), l: l, r: r}
			if t.kind == tNe {
				l = &notNode{nodeHeight: childHeight(l), x: l}
			}
		case tIs:
			p.next()
			not := false
			if p.peek().kind == tNot {
				p.next()
				not = true
			}
			if _, err := p.expect(tNull, "NULL"); err != nil {
				return nil, err
			}
			l = &isNullNode{nodeHeight: childHeight(l), x: l}
			if not {
				l = &notNode{nodeHeight: childHeight(l), x: l}
			}
		default:
			return l, nil
		}
		if l, err = p.checkHeight(l, t.pos); err != nil {
			return nil, err
		}
	}
}

// checkEqual is Java's checkEqualOperand and
// checkEqualOperandCompatability.
func (p *parser) checkEqual(l, r node, pos int) error {
	for _, n := range []node{l, r} {
		if c, ok := n.(*constNode); ok && c.v.k == kNull {
			return p.errf(pos, "NULL cannot be compared with = or <>: use IS NULL or IS NOT NULL")
		}
	}
	lc, lok := l.(*constNode)
	rc, rok := r.(*constNode)
	if lok && rok && lc.lit && !rc.lit {
		return p.errf(pos, "%s cannot be compared with %s", describe(l), describe(r))
	}
	return nil
}

// checkOrdered is Java's checkLessThanOperand: only numbers, properties
// and negations can be ordered.
func (p *parser) checkOrdered(n node, pos int) error {
	if c, ok := n.(*constNode); ok {
		if c.v.k == kInt || c.v.k == kLong || c.v.k == kDouble {
			return nil
		}
		return p.errf(pos, "%s cannot be compared with > >= < <= or BETWEEN: only numbers can", describe(n))
	}
	if n.boolean() {
		return p.errf(pos, "%s cannot be compared with > >= < <= or BETWEEN", describe(n))
	}
	return nil
}

func (p *parser) ordered(op cmpOp, l, r node, pos int) (node, error) {
	if err := p.checkOrdered(l, pos); err != nil {
		return nil, err
	}
	if err := p.checkOrdered(r, pos); err != nil {
		return nil, err
	}
	return &cmpNode{nodeHeight: childHeight(l, r), op: op, l: l, r: r}, nil
}

// comparison = unary { (">" | ">=" | "<" | "<=") unary
//
//	| [NOT] (CONTAINS | STARTSWITH | ENDSWITH) string
//	| [NOT] BETWEEN unary AND unary
//	| [NOT] IN "(" string { "," string } ")" }
func (p *parser) comparison() (node, error) {
	l, err := p.unary()
	if err != nil {
		return nil, err
	}
	for {
		op := p.peek()
		not := false
		if op.kind == tNot {
			switch p.peek2().kind {
			case tContains, tStartsWith, tEndsWith, tBetween, tIn:
				p.next()
				op, not = p.peek(), true
			case tIdent:
				if k := p.peek2(); strings.EqualFold(k.text, "LIKE") {
					return nil, p.unexpected(k, "")
				}
				return l, nil
			default:
				return l, nil
			}
		}
		switch op.kind {
		case tGt, tGe, tLt, tLe:
			p.next()
			r, err := p.unary()
			if err != nil {
				return nil, err
			}
			if l, err = p.ordered(cmpOps[op.kind], l, r, op.pos); err != nil {
				return nil, err
			}
		case tContains, tStartsWith, tEndsWith:
			p.next()
			s, err := p.expect(tString, "a string literal after "+op.String())
			if err != nil {
				return nil, err
			}
			l = &strNode{nodeHeight: childHeight(l), op: strOps[op.kind], not: not, x: l, search: s.text}
		case tBetween:
			p.next()
			if l, err = p.between(l, not, op.pos); err != nil {
				return nil, err
			}
		case tIn:
			p.next()
			if l, err = p.in(l, not, op.pos); err != nil {
				return nil, err
			}
		case tPlus, tMinus:
			p.next()
			return nil, p.unexpected(op, "")
		case tIdent:
			if strings.EqualFold(op.text, "LIKE") || strings.EqualFold(op.text, "ESCAPE") {
				return nil, p.unexpected(op, "")
			}
			return l, nil
		default:
			return l, nil
		}
		if l, err = p.checkHeight(l, op.pos); err != nil {
			return nil, err
		}
	}
}

var (
	cmpOps = map[tokKind]cmpOp{tGt: opGt, tGe: opGe, tLt: opLt, tLe: opLe}
	strOps = map[tokKind]strOp{tContains: opContains, tStartsWith: opStartsWith, tEndsWith: opEndsWith}
)

// between builds x BETWEEN lo AND hi as (x >= lo AND x <= hi) and NOT
// BETWEEN as (x < lo OR x > hi), as Java does, after Java's check that
// literal bounds are not NULL and not reversed.
func (p *parser) between(x node, not bool, pos int) (node, error) {
	lo, err := p.unary()
	if err != nil {
		return nil, err
	}
	if _, err := p.expect(tAnd, "AND between the bounds of BETWEEN"); err != nil {
		return nil, err
	}
	hi, err := p.unary()
	if err != nil {
		return nil, err
	}
	if !not {
		lc, lok := lo.(*constNode)
		hc, hok := hi.(*constNode)
		if lok && hok {
			if lc.v.k == kNull || hc.v.k == kNull {
				return nil, p.errf(pos, "BETWEEN bounds cannot be NULL")
			}
			if c, ok := compare(hc.v, lc.v); !ok || c < 0 {
				return nil, p.errf(pos, "BETWEEN %s AND %s: the lower bound must not exceed the upper", describe(lo), describe(hi))
			}
		}
	}
	var a, b node
	if not {
		if a, err = p.ordered(opLt, x, lo, pos); err == nil {
			b, err = p.ordered(opGt, x, hi, pos)
		}
	} else {
		if a, err = p.ordered(opGe, x, lo, pos); err == nil {
			b, err = p.ordered(opLe, x, hi, pos)
		}
	}
	if err != nil {
		return nil, err
	}
	return &logicNode{nodeHeight: childHeight(a, b), or: not, xs: []node{a, b}}, nil
}

func (p *parser) in(x node, not bool, pos int) (node, error) {
	pn, ok := x.(*propNode)
	if !ok {
		return nil, p.errf(pos, "IN needs a property on its left, not %s", describe(x))
	}
	if _, err := p.expect(tLParen, "'(' after IN"); err != nil {
		return nil, err
	}
	var list []string
	for {
		s, err := p.expect(tString, "a string literal in the IN list")
		if err != nil {
			return nil, err
		}
		list = append(list, s.text)
		t := p.next()
		if t.kind == tRParen {
			break
		}
		if t.kind != tComma {
			return nil, p.unexpected(t, "',' or ')' in the IN list")
		}
	}
	n := &inNode{nodeHeight: childHeight(pn), p: pn, list: list, not: not}
	if len(list) >= inSetMin {
		n.set = make(map[string]struct{}, len(list))
		for _, s := range list {
			n.set[s] = struct{}{}
		}
	}
	return n, nil
}

// unary = "+" unary | "-" unary | NOT unary | primary
//
// NOT binds tighter than any comparison, as in RocketMQ (and ActiveMQ):
// NOT a = 'x' is (NOT a) = 'x'. Write NOT (a = 'x').
func (p *parser) unary() (node, error) {
	t := p.peek()
	switch t.kind {
	case tPlus, tMinus, tNot:
		p.next()
		if err := p.enter(t.pos); err != nil {
			return nil, err
		}
		defer p.leave()
		pos := p.peek().pos
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		switch t.kind {
		case tPlus:
			return x, nil
		case tMinus:
			return p.checkHeight(&negNode{nodeHeight: childHeight(x), x: x}, t.pos)
		}
		if x, err = p.asBoolean(x, pos); err != nil {
			return nil, err
		}
		return p.checkHeight(&notNode{nodeHeight: childHeight(x), x: x}, t.pos)
	}
	return p.primary()
}

// primary = literal | identifier | "(" orExpr ")"
func (p *parser) primary() (node, error) {
	t := p.next()
	switch t.kind {
	case tString:
		return &constNode{nodeHeight: 1, v: value{k: kString, s: t.text}}, nil
	case tInt:
		return p.intLiteral(t)
	case tFloat:
		return p.floatLiteral(t)
	case tTrue:
		return &constNode{nodeHeight: 1, v: vTrue, lit: true}, nil
	case tFalse:
		return &constNode{nodeHeight: 1, v: vFalse, lit: true}, nil
	case tNull:
		return &constNode{nodeHeight: 1, v: vNull, lit: true}, nil
	case tIdent:
		if !p.seen[t.text] {
			p.seen[t.text] = true
			p.props = append(p.props, t.text)
		}
		return &propNode{nodeHeight: 1, name: t.text}, nil
	case tLParen:
		if err := p.enter(t.pos); err != nil {
			return nil, err
		}
		defer p.leave()
		x, err := p.orExpr()
		if err != nil {
			return nil, err
		}
		if _, err := p.expect(tRParen, "')'"); err != nil {
			return nil, err
		}
		return x, nil
	}
	return nil, p.unexpected(t, "a value")
}

// intLiteral is Java's createFromDecimal: a Long, an Integer when it fits.
func (p *parser) intLiteral(t token) (node, error) {
	n, err := strconv.ParseInt(t.text, 10, 64)
	if err != nil {
		return nil, p.errf(t.pos, "integer %s does not fit in 64 bits", t.text)
	}
	k := kLong
	if n >= math.MinInt32 && n <= math.MaxInt32 {
		k = kInt
	}
	return &constNode{nodeHeight: 1, v: value{k: k, i: n}}, nil
}

// floatLiteral is Java's createFloat: a Double, refused when infinite or
// below Double.MIN_VALUE - which includes 0.0 (write 0 instead).
func (p *parser) floatLiteral(t token) (node, error) {
	f, err := strconv.ParseFloat(t.text, 64)
	if err != nil && !math.IsInf(f, 0) && f != 0 {
		return nil, p.errf(t.pos, "bad number %s", t.text)
	}
	switch {
	case math.IsInf(f, 0):
		return nil, p.errf(t.pos, "number %s is too large for a double", t.text)
	case f < math.SmallestNonzeroFloat64:
		return nil, p.errf(t.pos, "decimal %s is zero or too small: RocketMQ refuses decimals below 4.9E-324 (write 0 for zero)", t.text)
	}
	return &constNode{nodeHeight: 1, v: dbl(f)}, nil
}

// describe names a node for an error message.
func describe(n node) string {
	var b strings.Builder
	n.format(&b)
	s := b.String()
	if r := []rune(s); len(r) > 40 {
		s = string(r[:37]) + "..."
	}
	switch n.(type) {
	case *constNode:
		return "literal " + s
	case *propNode:
		return "property " + s
	}
	return "expression " + s
}

// formatValue writes a literal so that the lexer reads back the same value
// and class.
func formatValue(v value) string {
	switch v.k {
	case kBool:
		if v.truth() {
			return "TRUE"
		}
		return "FALSE"
	case kInt, kLong:
		return strconv.FormatInt(v.i, 10)
	case kDouble:
		s := strconv.FormatFloat(v.flt(), 'g', -1, 64)
		if !strings.ContainsAny(s, ".e") {
			s += ".0"
		}
		return s
	case kString:
		return quote(v.s)
	}
	return "NULL"
}
