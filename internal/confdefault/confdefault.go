// Package confdefault owns the rules Runnel's configs apply to their
// durations and counts: Fill's, where a zero field takes its default and a
// negative one is refused with an error naming the field and its value,
// and Positive's, where zero and below both mean unset.
package confdefault

import "fmt"

// Number is what Fill handles: integers and durations.
type Number interface{ ~int | ~int32 | ~int64 }

// Field is one config field: its name in errors, where it is, and its
// default.
type Field[T Number] struct {
	name string
	v    *T
	def  T
}

// Of is the field name at v, whose default is def.
func Of[T Number](name string, v *T, def T) Field[T] { return Field[T]{name, v, def} }

// Fill gives every zero field of fs its default and refuses the first
// negative one: the error wraps bad, e.g. "client: bad config:
// CallTimeout -1s is negative".
func Fill[T Number](bad error, fs ...Field[T]) error {
	for _, f := range fs {
		if *f.v < 0 {
			return fmt.Errorf("%w: %s %v is negative", bad, f.name, *f.v)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	return nil
}

// Positive gives *v the default def unless it is positive: for a field
// whose zero and negative values both mean "unset".
func Positive[T Number](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}
