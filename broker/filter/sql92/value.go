package sql92

import (
	"cmp"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// kind is the Java class of a value during evaluation. Properties are
// always strings; numbers and booleans come from literals.
type kind uint8

const (
	kNull   kind = iota
	kBool        // java.lang.Boolean
	kInt         // java.lang.Integer: a literal within int32
	kLong        // java.lang.Long: a literal outside int32
	kDouble      // java.lang.Double
	kString      // java.lang.String
)

// value is one evaluated operand: s holds a kString, i the rest (a
// kDouble's bits, 1 for a TRUE), which keeps it small to pass around.
type value struct {
	s string
	i int64
	k kind
}

var (
	vNull  = value{}
	vTrue  = value{k: kBool, i: 1}
	vFalse = value{k: kBool}
)

func dbl(f float64) value { return value{k: kDouble, i: int64(math.Float64bits(f))} }

// truth is a kBool's value.
func (v value) truth() bool { return v.i != 0 }

// flt is a kDouble's value.
func (v value) flt() float64 { return math.Float64frombits(uint64(v.i)) }

func boolValue(b bool) value {
	if b {
		return vTrue
	}
	return vFalse
}

// compare is Java's ComparisonExpression.__compare with string
// conversion on: operands of different classes are converted to a common
// one first (Integer -> Long -> Double; a String to the other side's
// number or Boolean class, with Integer.valueOf, Long.valueOf,
// Double.valueOf or Boolean.valueOf), and a number against a Boolean
// compares as -1. ok is false where Java throws: a String that does not
// parse as the number class, and a Boolean on the left of a String (a
// ClassCastException in Java). Neither operand is null.
func compare(l, r value) (c int, ok bool) {
	if l.k != r.k {
		switch l.k {
		case kBool:
			if r.k == kString {
				return 0, false
			}
			return -1, true
		case kInt, kLong:
			switch r.k {
			case kInt, kLong:
				// Integer widens to Long; the int64 field holds both.
				return cmp.Compare(l.i, r.i), true
			case kDouble:
				return javaDoubleCompare(float64(l.i), r.flt()), true
			case kString:
				n, ok := parseJavaInt(r.s, l.k == kInt)
				if !ok {
					return 0, false
				}
				return cmp.Compare(l.i, n), true
			}
			return -1, true
		case kDouble:
			switch r.k {
			case kInt, kLong:
				return javaDoubleCompare(l.flt(), float64(r.i)), true
			case kString:
				f, ok := parseJavaDouble(r.s)
				if !ok {
					return 0, false
				}
				return javaDoubleCompare(l.flt(), f), true
			}
			return -1, true
		case kString:
			switch r.k {
			case kBool:
				return cmpBool(strings.EqualFold(l.s, "true"), r.truth()), true
			case kInt, kLong:
				n, ok := parseJavaInt(l.s, r.k == kInt)
				if !ok {
					return 0, false
				}
				return cmp.Compare(n, r.i), true
			case kDouble:
				f, ok := parseJavaDouble(l.s)
				if !ok {
					return 0, false
				}
				return javaDoubleCompare(f, r.flt()), true
			}
		}
		return -1, true
	}
	switch l.k {
	case kBool:
		return cmpBool(l.truth(), r.truth()), true
	case kInt, kLong:
		return cmp.Compare(l.i, r.i), true
	case kDouble:
		return javaDoubleCompare(l.flt(), r.flt()), true
	case kString:
		// Java orders by UTF-16 units, Go by bytes; only equality is ever
		// asked of two strings (ordering converts them to doubles first).
		return strings.Compare(l.s, r.s), true
	}
	return 0, true
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// javaDoubleCompare is Double.compare: -0.0 sorts below 0.0 and NaN above
// everything, equal to itself.
func javaDoubleCompare(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	ab, bb := javaDoubleBits(a), javaDoubleBits(b)
	switch {
	case ab == bb:
		return 0
	case ab < bb:
		return -1
	}
	return 1
}

// javaDoubleBits is Double.doubleToLongBits: every NaN is the canonical one.
func javaDoubleBits(f float64) int64 {
	if math.IsNaN(f) {
		return 0x7ff8000000000000
	}
	return int64(math.Float64bits(f))
}

// parseJavaInt is Integer.parseInt (int32 true) or Long.parseLong: an
// optional sign and decimal digits, nothing else (no spaces, no '_').
// Like Java it takes any Unicode decimal digit of the BMP, such as
// U+0661 ARABIC-INDIC DIGIT ONE.
func parseJavaInt(s string, int32Only bool) (int64, bool) {
	neg := false
	switch {
	case s == "":
		return 0, false
	case s[0] == '-':
		neg, s = true, s[1:]
	case s[0] == '+':
		s = s[1:]
	}
	if s == "" {
		return 0, false
	}
	limit := uint64(math.MaxInt64)
	if int32Only {
		limit = math.MaxInt32
	}
	if neg {
		limit++
	}
	var n uint64
	for _, r := range s {
		d, ok := javaDigit(r)
		if !ok {
			return 0, false
		}
		if n > (limit-uint64(d))/10 {
			return 0, false
		}
		n = n*10 + uint64(d)
	}
	if neg {
		return int64(-n), true // -limit wraps to MinInt64/MinInt32 exactly
	}
	return int64(n), true
}

// javaDigit is Character.digit(ch, 10) for a char: the value of a Unicode
// decimal digit (category Nd) of the Basic Multilingual Plane. Java sees
// a supplementary character as two surrogates, neither a digit.
func javaDigit(r rune) (int, bool) {
	if '0' <= r && r <= '9' {
		return int(r - '0'), true
	}
	if r < 0x80 || r > 0xFFFF || !unicode.Is(unicode.Nd, r) {
		return 0, false
	}
	// Nd digits come in contiguous runs of ten from a zero; the table's
	// ranges start at a zero.
	for _, rg := range unicode.Nd.R16 {
		if uint16(r) >= rg.Lo && uint16(r) <= rg.Hi {
			return int(uint16(r)-rg.Lo) % 10, true
		}
	}
	return 0, false
}

// parseJavaDouble is Double.valueOf(String): surrounding characters up to
// U+0020 are trimmed; then an optional sign and "NaN", "Infinity", a
// decimal (digits with an optional point and an optional exponent) or a
// hexadecimal floating literal (0x...p...), each optionally followed by
// one of f F d D. Go's ParseFloat then rounds it, as Java does.
func parseJavaDouble(s string) (float64, bool) {
	s = strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	body := s
	if body != "" && (body[0] == '+' || body[0] == '-') {
		body = body[1:]
	}
	switch body {
	case "NaN":
		return math.NaN(), true
	case "Infinity":
		if s[0] == '-' {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	}
	if n := len(s); n > 0 && strings.IndexByte("fFdD", s[n-1]) >= 0 {
		s, body = s[:n-1], body[:len(body)-1]
	}
	if !javaFloatSyntax(body) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return f, true // ±Inf or 0, as Java rounds
		}
		return 0, false
	}
	return f, true
}

// javaFloatSyntax checks an unsigned, unsuffixed Java floating literal.
func javaFloatSyntax(s string) bool {
	hex := len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')
	isD := isDigit
	if hex {
		s = s[2:]
		isD = func(c byte) bool { return isDigit(c) || 'a' <= c|0x20 && c|0x20 <= 'f' }
	}
	i, nd := 0, 0
	for i < len(s) && isD(s[i]) {
		i, nd = i+1, nd+1
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isD(s[i]) {
			i, nd = i+1, nd+1
		}
	}
	if nd == 0 {
		return false
	}
	if i == len(s) {
		return !hex // a hexadecimal literal needs its p exponent
	}
	if hex && s[i]|0x20 != 'p' || !hex && s[i]|0x20 != 'e' {
		return false
	}
	i++
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	if i == len(s) {
		return false
	}
	for ; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}
