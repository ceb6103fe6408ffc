package sql92

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// tokKind is a token class of the selector grammar.
type tokKind uint8

const (
	tEOF tokKind = iota
	tIdent
	tString // text is the decoded value ('' already undone)
	tInt    // DECIMAL_LITERAL: text without its l/L suffix
	tFloat  // FLOATING_POINT_LITERAL
	tLParen
	tRParen
	tComma
	tEq // =
	tNe // <>
	tGt // >
	tGe // >=
	tLt // <
	tLe // <=
	tPlus
	tMinus
	// Keywords, matched case-insensitively; they are never identifiers.
	tNot
	tAnd
	tOr
	tBetween
	tIn
	tTrue
	tFalse
	tNull
	tIs
	tContains
	tStartsWith
	tEndsWith
)

var keywords = map[string]tokKind{
	"NOT": tNot, "AND": tAnd, "OR": tOr, "BETWEEN": tBetween, "IN": tIn,
	"TRUE": tTrue, "FALSE": tFalse, "NULL": tNull, "IS": tIs,
	"CONTAINS": tContains, "STARTSWITH": tStartsWith, "ENDSWITH": tEndsWith,
}

var tokNames = [...]string{
	tEOF: "end of expression", tIdent: "identifier", tString: "string literal",
	tInt: "integer literal", tFloat: "decimal literal", tLParen: "'('", tRParen: "')'",
	tComma: "','", tEq: "'='", tNe: "'<>'", tGt: "'>'", tGe: "'>='", tLt: "'<'", tLe: "'<='",
	tPlus: "'+'", tMinus: "'-'",
}

// token is one lexeme; pos is its byte offset in the expression.
type token struct {
	kind tokKind
	pos  int
	text string
}

func (t token) String() string {
	switch {
	case t.kind >= tNot:
		return strings.ToUpper(t.text)
	case t.kind == tIdent:
		return "identifier " + t.text
	case t.kind == tString:
		return "string " + quote(t.text)
	case t.kind == tInt || t.kind == tFloat:
		return "number " + t.text
	}
	return tokNames[t.kind]
}

// lex splits src into tokens, ending with tEOF. It follows the token rules
// of RocketMQ's SelectorParser.jj: the longest match wins, keywords before
// identifiers at equal length; white space is " \t\n\r\f"; "--" comments
// run to a line end (which they need: at the very end they are not a
// comment, as in Java) and "/* */" comments are skipped.
func lex(src string) ([]token, error) {
	var toks []token
	i := 0
	for {
		// White space and comments.
	skip:
		for i < len(src) {
			c := src[i]
			switch {
			case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
				i++
				continue
			case strings.HasPrefix(src[i:], "--"):
				if j := strings.IndexAny(src[i:], "\r\n"); j >= 0 {
					i += j + 1
					continue
				}
			case strings.HasPrefix(src[i:], "/*"):
				j := strings.Index(src[i+2:], "*/")
				if j < 0 {
					return nil, errAt(src, i, "unterminated comment: '/*' without '*/'")
				}
				i += 2 + j + 2
				continue
			}
			break skip
		}
		if i >= len(src) {
			return append(toks, token{kind: tEOF, pos: i}), nil
		}
		start := i
		c := src[i]
		switch {
		case c == '\'':
			s, n, ok := lexString(src[i:])
			if !ok {
				return nil, errAt(src, start, "unterminated string literal: a ' without its closing '")
			}
			toks = append(toks, token{kind: tString, pos: start, text: s})
			i += n
		case isDigit(c) || (c == '.' && i+1 < len(src) && isDigit(src[i+1])):
			kind, n := lexNumber(src[i:])
			text := src[i : i+n]
			if kind == tInt {
				text = strings.TrimRight(text, "lL")
			}
			toks = append(toks, token{kind: kind, pos: start, text: text})
			i += n
		case isIdentStart(c):
			j := i + 1
			for j < len(src) && isIdentPart(src[j]) {
				j++
			}
			word := src[i:j]
			kind := tIdent
			if k, ok := keywords[strings.ToUpper(word)]; ok {
				kind = k
			}
			toks = append(toks, token{kind: kind, pos: start, text: word})
			i = j
		default:
			kind, n, msg := lexPunct(src[i:])
			if msg != "" {
				return nil, errAt(src, start, msg)
			}
			toks = append(toks, token{kind: kind, pos: start})
			i += n
		}
	}
}

// lexString reads a quoted literal at the start of s (” is one quote).
func lexString(s string) (val string, n int, ok bool) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] != '\'' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == '\'' {
			b.WriteByte('\'')
			i++
			continue
		}
		return b.String(), i + 1, true
	}
	return "", 0, false
}

// lexNumber reads the longest DECIMAL_LITERAL or FLOATING_POINT_LITERAL at
// the start of s, which begins with a digit or with '.' and a digit:
//
//	DECIMAL_LITERAL        "0" | [1-9][0-9]* [lL]?
//	FLOATING_POINT_LITERAL [0-9]+ "." [0-9]* EXP? | "." [0-9]+ EXP? | [0-9]+ EXP
//	EXP                    [eE] [+-]? [0-9]+
func lexNumber(s string) (tokKind, int) {
	digits := func(i int) int {
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		return i
	}
	exp := func(i int) int { // end of an exponent at i, or i when there is none
		if i >= len(s) || (s[i] != 'e' && s[i] != 'E') {
			return i
		}
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if k := digits(j); k > j {
			return k
		}
		return i
	}
	intEnd := digits(0)
	// Float forms: the longest of them.
	floatEnd := 0
	if intEnd < len(s) && s[intEnd] == '.' {
		if intEnd > 0 || (intEnd+1 < len(s) && isDigit(s[intEnd+1])) {
			floatEnd = exp(digits(intEnd + 1))
		}
	} else if intEnd > 0 {
		if e := exp(intEnd); e > intEnd {
			floatEnd = e
		}
	}
	// Decimal: "0" alone, or a non-zero digit and more, with an l/L.
	decEnd := 0
	if intEnd > 0 {
		if s[0] == '0' {
			decEnd = 1
		} else {
			decEnd = intEnd
			if decEnd < len(s) && (s[decEnd] == 'l' || s[decEnd] == 'L') {
				decEnd++
			}
		}
	}
	if floatEnd > decEnd {
		return tFloat, floatEnd
	}
	return tInt, decEnd
}

// puncts are the operators and brackets, two-character ones first in
// lexPunct's search so that the longest match wins.
var puncts = map[string]tokKind{
	"<>": tNe, ">=": tGe, "<=": tLe,
	"(": tLParen, ")": tRParen, ",": tComma, "=": tEq, ">": tGt, "<": tLt, "+": tPlus, "-": tMinus,
}

// lexPunct reads an operator or bracket, or explains why s does not start
// with one.
func lexPunct(s string) (tokKind, int, string) {
	if len(s) >= 2 {
		two := s[:2]
		if k, ok := puncts[two]; ok {
			return k, 2, ""
		}
		switch two {
		case "!=":
			return 0, 0, "'!=' is not an operator: use '<>'"
		case "==":
			return 0, 0, "'==' is not an operator: use '='"
		case "&&", "||":
			return 0, 0, fmt.Sprintf("%q is not an operator: use AND or OR", two)
		}
	}
	if k, ok := puncts[s[:1]]; ok {
		return k, 1, ""
	}
	switch s[0] {
	case '*', '/', '%':
		return 0, 0, fmt.Sprintf("arithmetic ('%c') is not supported by RocketMQ's SQL92 filter", s[0])
	case '"':
		return 0, 0, "a string literal is written in single quotes ('text'), not double quotes"
	}
	r, _ := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError {
		return 0, 0, fmt.Sprintf("unexpected byte %#x", s[0])
	}
	return 0, 0, fmt.Sprintf("unexpected character %q", r)
}

func isDigit(c byte) bool      { return '0' <= c && c <= '9' }
func isIdentStart(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' || c == '_' || c == '$' }
func isIdentPart(c byte) bool  { return isIdentStart(c) || isDigit(c) }

// quote writes s as a literal the lexer reads back as s.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
