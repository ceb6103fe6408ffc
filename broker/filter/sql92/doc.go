// Package sql92 compiles and evaluates RocketMQ's SQL92 message filters:
// the expressions a consumer subscribes with (expression type "SQL92")
// over a message's properties, which the broker evaluates for every
// message it would deliver. It owns the language only; where filters are
// registered and applied is the broker's business.
//
// The language is the one RocketMQ's filter module implements (its
// SelectorParser.jj, a subset of ActiveMQ's JMS selectors), with the same
// results message for message, quirks included. There is no LIKE, no
// arithmetic and no hexadecimal or octal literal.
//
// # Grammar
//
//	Selector   = OrExpr .
//	OrExpr     = AndExpr { "OR" AndExpr } .
//	AndExpr    = Equality { "AND" Equality } .
//	Equality   = Comparison { ( "=" | "<>" ) Comparison | "IS" [ "NOT" ] "NULL" } .
//	Comparison = Unary { ( ">" | ">=" | "<" | "<=" ) Unary
//	           | [ "NOT" ] ( "CONTAINS" | "STARTSWITH" | "ENDSWITH" ) String
//	           | [ "NOT" ] "BETWEEN" Unary "AND" Unary
//	           | [ "NOT" ] "IN" "(" String { "," String } ")" } .
//	Unary      = "+" Unary | "-" Unary | "NOT" Unary | Primary .
//	Primary    = String | Integer | Decimal | "TRUE" | "FALSE" | "NULL"
//	           | Identifier | "(" OrExpr ")" .
//
//	Identifier = ( letter | "_" | "$" ) { letter | digit | "_" | "$" } .  (ASCII letters; not a keyword)
//	String     = "'" { "''" | any character but "'" } "'" .            ('' is one quote)
//	Integer    = "0" | nonzero { digit } [ "l" | "L" ] .
//	Decimal    = digit { digit } "." { digit } [ Exponent ]
//	           | "." digit { digit } [ Exponent ] | digit { digit } Exponent .
//	Exponent   = ( "e" | "E" ) [ "+" | "-" ] digit { digit } .
//
// Keywords (NOT AND OR BETWEEN IN TRUE FALSE NULL IS CONTAINS STARTSWITH
// ENDSWITH) are case-insensitive and cannot name properties; property
// names are case-sensitive. TAGS is the message's tag, like any other
// property. White space is space, tab, CR, LF and FF; "/* */" comments
// are skipped, and so is "--" up to a line end. Tokens are read longest
// first, so 007 is three tokens and an error.
//
// Precedence, tightest first: signs and NOT, then the comparisons, then =
// <> and IS, then AND, then OR. NOT binds tighter than a comparison, as in
// RocketMQ and ActiveMQ: NOT a = 'x' means (NOT a) = 'x'; write
// NOT (a = 'x').
//
// Nesting is bounded: operators at most MaxDepth deep, parentheses, NOT
// and signs at most twice that.
//
// # Values
//
// A property's value is a string, or null when the message lacks it.
// Literals are strings, booleans, NULL, Integers (a whole number within 32
// bits), Longs (within 64 bits; beyond is an error) and Doubles (a decimal;
// RocketMQ refuses infinite ones and ones below 4.9E-324, so 0.0 is an
// error and 0 is not).
//
// # Semantics
//
// Conditions are three-valued: true, false and unknown (Java's null). AND,
// OR and NOT follow SQL: FALSE AND unknown is FALSE, TRUE OR unknown is
// TRUE, NOT unknown is unknown. A message matches only when the whole
// expression is true. Operands are evaluated left to right and AND and OR
// stop early, as in Java.
//
//   - x = y and x <> y (which is NOT (x = y)): unknown when x is null; else
//     FALSE when y is null; TRUE when both are null. So neither c = 'v' nor
//     c <> 'v' matches a message without c, while 'v' = c is FALSE there
//     and 'v' <> c TRUE.
//   - x > y, >=, <, <=: unknown when either side is null.
//   - x IS NULL is never unknown; IS NOT NULL is its negation.
//   - x [NOT] BETWEEN a AND b is x >= a AND x <= b (NOT: x < a OR x > b);
//     literal bounds must be in order.
//   - p [NOT] IN (...) needs a property; unknown when it is missing.
//   - x [NOT] CONTAINS / STARTSWITH / ENDSWITH 's' is never unknown: with a
//     missing x, a non-string x or an empty 's' it is FALSE, with or
//     without NOT. So NOT (c CONTAINS 'v') matches a message without c but
//     c NOT CONTAINS 'v' does not.
//   - A property used as a condition (a AND ...) is FALSE when present and
//     unknown when missing: a string is never a boolean.
//
// Comparison converts between classes as Java's ComparisonExpression
// does. A string property against a number literal is parsed as that
// literal's class: Integer.valueOf for an Integer, Long.valueOf for a
// Long, Double.valueOf for a Double. So a > 5 reads "7" as 7 but fails on
// "7.5" (not an Integer), "abc", " 7" and "3000000000" (beyond int32),
// while a > 5.0 reads "7.5", "1e3", " 7 " and "Infinity". Two strings
// under > >= < <= are both read with Double.valueOf; under = they compare
// as strings, so a = b is string equality. Against TRUE or FALSE a string
// is true when it is "true" in any case. A number against a boolean is
// never equal.
//
// Where such a conversion fails, Java's evaluation throws and RocketMQ
// drops the message: the whole expression fails (Result Failed), not only
// the comparison, unless AND or OR stopped before reaching it. So a > 5
// and NOT (a > 5) both fail on a = "abc", and b = 1 OR a > 5 is true for
// b = "1" whatever a is.
//
// Strings compare byte for byte; Java compares UTF-16 units, which is the
// same for valid UTF-8.
package sql92
