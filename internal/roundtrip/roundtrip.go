// Package roundtrip is the one property of the repository's decoder fuzz
// targets: whatever a decoder is given, it refuses it with its own error
// or returns a value that encodes to input it decodes to the same value.
package roundtrip

import (
	"errors"
	"testing"
)

// Check decodes in. A refusal must be want (errors.Is), and then Check
// returns false. Otherwise the value, encoded and decoded again, must come
// back same as it was; Check returns it and true.
func Check[In, V any](t testing.TB, in In, decode func(In) (V, error), encode func(V) In, want error, same func(a, b V) bool) (V, bool) {
	t.Helper()
	v, err := decode(in)
	if err != nil {
		if !errors.Is(err, want) {
			t.Fatalf("decoding %v: error %v is not %v", in, err, want)
		}
		return v, false
	}
	again, err := decode(encode(v))
	if err != nil {
		t.Fatalf("%+v, decoded from %v, encodes to what does not decode: %v", v, in, err)
	}
	if !same(again, v) {
		t.Fatalf("%+v, decoded from %v, comes back as %+v", v, in, again)
	}
	return v, true
}
