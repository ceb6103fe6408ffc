package sql92

import (
	"strings"
)

// getter looks a message property up. An interface rather than a func so
// that a map goes in without a closure's allocation.
type getter interface {
	get(name string) (string, bool)
}

type funcGetter func(name string) (string, bool)

func (f funcGetter) get(name string) (string, bool) { return f(name) }

type mapGetter map[string]string

func (m mapGetter) get(name string) (string, bool) {
	v, ok := m[name]
	return v, ok
}

// node is a compiled expression. eval returns the Java value of the node
// and false where Java's evaluation throws (then the message does not
// match, whatever the rest of the expression says). format writes a form
// that compiles back to the same node. Nodes are never changed after
// compilation.
type node interface {
	eval(get getter) (value, bool)
	format(b *strings.Builder)
	height() int
	// boolean reports whether Java types the node as a BooleanExpression.
	boolean() bool
}

// formatAround writes x between before and after: the form of the
// one-operand nodes.
func formatAround(b *strings.Builder, before string, x node, after string) {
	b.WriteString(before)
	x.format(b)
	b.WriteString(after)
}

// formatInfix writes "(l op r)": the form of the two-operand nodes.
func formatInfix(b *strings.Builder, l node, op string, r node) {
	b.WriteByte('(')
	l.format(b)
	b.WriteString(op)
	r.format(b)
	b.WriteByte(')')
}

// formatNegatable writes "(x [NOT]op": the head of the forms with an
// optional NOT between operand and operator.
func formatNegatable(b *strings.Builder, x node, not bool, op string) {
	b.WriteByte('(')
	x.format(b)
	if not {
		b.WriteString(" NOT")
	}
	b.WriteString(op)
}

type nodeHeight int

func (h nodeHeight) height() int { return int(h) }

func childHeight(ns ...node) nodeHeight {
	h := 0
	for _, n := range ns {
		h = max(h, n.height())
	}
	return nodeHeight(h + 1)
}

// constNode is a literal. lit marks TRUE, FALSE and NULL, which Java
// types as boolean expressions.
type constNode struct {
	nodeHeight
	v   value
	lit bool
}

func (n *constNode) eval(getter) (value, bool) { return n.v, true }
func (n *constNode) boolean() bool             { return n.lit }

func (n *constNode) format(b *strings.Builder) {
	b.WriteString(formatValue(n.v))
}

// propNode reads a property; a missing one is null.
type propNode struct {
	nodeHeight
	name string
}

func (n *propNode) eval(get getter) (value, bool) {
	if s, ok := get.get(n.name); ok {
		return value{k: kString, s: s}, true
	}
	return vNull, true
}
func (n *propNode) boolean() bool             { return false }
func (n *propNode) format(b *strings.Builder) { b.WriteString(n.name) }

// castNode is a property where a boolean is wanted (Java's
// createBooleanCast): null when missing, else FALSE, since a property is
// a String and never a Boolean.
type castNode struct {
	nodeHeight
	p *propNode
}

func (n *castNode) eval(get getter) (value, bool) {
	v, _ := n.p.eval(get)
	if v.k == kNull {
		return vNull, true
	}
	return vFalse, true
}
func (n *castNode) boolean() bool             { return true }
func (n *castNode) format(b *strings.Builder) { n.p.format(b) }

// negNode is unary minus: numbers negate (Integer and Long wrap as in
// Java), anything else is null.
type negNode struct {
	nodeHeight
	x node
}

func (n *negNode) eval(get getter) (value, bool) {
	v, ok := n.x.eval(get)
	if !ok {
		return v, false
	}
	switch v.k {
	case kInt:
		return value{k: kInt, i: int64(-int32(v.i))}, true
	case kLong:
		return value{k: kLong, i: -v.i}, true
	case kDouble:
		return dbl(-v.flt()), true
	}
	return vNull, true
}
func (n *negNode) boolean() bool             { return false }
func (n *negNode) format(b *strings.Builder) { formatAround(b, "(-", n.x, ")") }

// notNode: NOT TRUE is FALSE, NOT FALSE is TRUE, NOT null is null.
type notNode struct {
	nodeHeight
	x node
}

func (n *notNode) eval(get getter) (value, bool) {
	v, ok := n.x.eval(get)
	if !ok || v.k != kBool {
		return vNull, ok
	}
	return boolValue(!v.truth()), true
}
func (n *notNode) boolean() bool             { return true }
func (n *notNode) format(b *strings.Builder) { formatAround(b, "(NOT ", n.x, ")") }

// logicNode is a chain of ANDs or ORs, evaluated left to right as Java's
// nested LogicExpressions are: AND stops at the first FALSE, OR at the
// first TRUE; otherwise a null operand makes the result null. Flattening
// the chain keeps the tree shallow; the result is the same.
type logicNode struct {
	nodeHeight
	or bool
	xs []node
}

func (n *logicNode) eval(get getter) (value, bool) {
	sawNull := false
	for _, x := range n.xs {
		v, ok := x.eval(get)
		if !ok {
			return v, false
		}
		if v.k != kBool {
			sawNull = true
			continue
		}
		if v.truth() == n.or {
			return v, true
		}
	}
	if sawNull {
		return vNull, true
	}
	return boolValue(!n.or), true
}
func (n *logicNode) boolean() bool { return true }
func (n *logicNode) format(b *strings.Builder) {
	op := " AND "
	if n.or {
		op = " OR "
	}
	b.WriteByte('(')
	for i, x := range n.xs {
		if i > 0 {
			b.WriteString(op)
		}
		x.format(b)
	}
	b.WriteByte(')')
}

// eqNode is '=' (Java's doCreateEqual): a null left side gives null, a
// null right side alone gives FALSE, two nulls TRUE; otherwise the
// operands compare as compare does.
type eqNode struct {
	nodeHeight
	l, r node
}

func (n *eqNode) eval(get getter) (value, bool) {
	l, ok := n.l.eval(get)
	if !ok {
		return l, false
	}
	r, ok := n.r.eval(get)
	if !ok {
		return r, false
	}
	switch {
	case l.k == kNull && r.k == kNull:
		return vTrue, true
	case l.k == kNull:
		return vNull, true
	case r.k == kNull:
		return vFalse, true
	}
	c, ok := compare(l, r)
	return boolValue(c == 0), ok
}
func (n *eqNode) boolean() bool             { return true }
func (n *eqNode) format(b *strings.Builder) { formatInfix(b, n.l, " = ", n.r) }

// isNullNode is IS NULL: TRUE for null, else FALSE, never null.
type isNullNode struct {
	nodeHeight
	x node
}

func (n *isNullNode) eval(get getter) (value, bool) {
	v, ok := n.x.eval(get)
	return boolValue(v.k == kNull), ok
}
func (n *isNullNode) boolean() bool             { return true }
func (n *isNullNode) format(b *strings.Builder) { formatAround(b, "(", n.x, " IS NULL)") }

// cmpOp is an ordering operator.
type cmpOp uint8

const (
	opGt cmpOp = iota
	opGe
	opLt
	opLe
)

var cmpOpText = [...]string{opGt: ">", opGe: ">=", opLt: "<", opLe: "<="}

// cmpNode is > >= < <=: null if either side is null (the right side is
// not evaluated when the left is null); two strings compare as doubles
// (Double.valueOf), failing when either is not a number; otherwise as
// compare does.
type cmpNode struct {
	nodeHeight
	op   cmpOp
	l, r node
}

func (n *cmpNode) eval(get getter) (value, bool) {
	l, ok := n.l.eval(get)
	if !ok || l.k == kNull {
		return vNull, ok
	}
	r, ok := n.r.eval(get)
	if !ok || r.k == kNull {
		return vNull, ok
	}
	var c int
	if l.k == kString && r.k == kString {
		lf, ok := parseJavaDouble(l.s)
		if !ok {
			return vNull, false
		}
		rf, ok := parseJavaDouble(r.s)
		if !ok {
			return vNull, false
		}
		c = javaDoubleCompare(lf, rf)
	} else if c, ok = compare(l, r); !ok {
		return vNull, false
	}
	switch n.op {
	case opGt:
		return boolValue(c > 0), true
	case opGe:
		return boolValue(c >= 0), true
	case opLt:
		return boolValue(c < 0), true
	}
	return boolValue(c <= 0), true
}
func (n *cmpNode) boolean() bool { return true }
func (n *cmpNode) format(b *strings.Builder) {
	formatInfix(b, n.l, " "+cmpOpText[n.op]+" ", n.r)
}

// inNode is [NOT] IN over string literals: null when the property is
// missing, else whether the value is (not) in the list.
type inNode struct {
	nodeHeight
	p    *propNode
	list []string // in source order, for format
	set  map[string]struct{}
	not  bool
}

func (n *inNode) eval(get getter) (value, bool) {
	v, _ := n.p.eval(get)
	if v.k == kNull {
		return vNull, true
	}
	var in bool
	if n.set != nil {
		_, in = n.set[v.s]
	} else {
		for _, s := range n.list {
			if s == v.s {
				in = true
				break
			}
		}
	}
	return boolValue(in != n.not), true
}
func (n *inNode) boolean() bool { return true }
func (n *inNode) format(b *strings.Builder) {
	formatNegatable(b, n.p, n.not, " IN (")
	for i, s := range n.list {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quote(s))
	}
	b.WriteString("))")
}

// strOp is a string-match operator of RocketMQ's own.
type strOp uint8

const (
	opContains strOp = iota
	opStartsWith
	opEndsWith
)

var strOpText = [...]string{opContains: "CONTAINS", opStartsWith: "STARTSWITH", opEndsWith: "ENDSWITH"}

// strNode is [NOT] CONTAINS / STARTSWITH / ENDSWITH. Unlike the
// comparisons it is never null: an empty search string, a missing
// property or a non-string operand give FALSE, with or without NOT (so
// NOT (c CONTAINS 'x') matches a message without c, c NOT CONTAINS 'x'
// does not) - RocketMQ's behaviour.
type strNode struct {
	nodeHeight
	op     strOp
	not    bool
	x      node
	search string
}

func (n *strNode) eval(get getter) (value, bool) {
	if n.search == "" {
		return vFalse, true
	}
	v, ok := n.x.eval(get)
	if !ok || v.k != kString {
		return vFalse, ok
	}
	var hit bool
	switch n.op {
	case opContains:
		hit = strings.Contains(v.s, n.search)
	case opStartsWith:
		hit = strings.HasPrefix(v.s, n.search)
	default:
		hit = strings.HasSuffix(v.s, n.search)
	}
	return boolValue(hit != n.not), true
}
func (n *strNode) boolean() bool { return true }
func (n *strNode) format(b *strings.Builder) {
	formatNegatable(b, n.x, n.not, " "+strOpText[n.op]+" ")
	b.WriteString(quote(n.search))
	b.WriteByte(')')
}
