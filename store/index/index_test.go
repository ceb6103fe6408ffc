package index

import (
	"bytes"
	"testing"
)

func TestBounds(t *testing.T) {
	lo, hi := Bounds(KindKey, "T", "k")
	in := func(k []byte) bool { return bytes.Compare(k, lo) >= 0 && bytes.Compare(k, hi) < 0 }
	cases := []struct {
		key  []byte
		want bool
	}{
		{AppendKey(nil, KindKey, "T", "k", 0), true},
		{AppendKey(nil, KindKey, "T", "k", -1), true}, // max uint64
		{AppendKey(nil, KindKey, "T", "kk", 5), false},
		{AppendKey(nil, KindKey, "T", "", 5), false},
		{AppendKey(nil, KindUniq, "T", "k", 5), false},
		{AppendKey(nil, KindKey, "TT", "k", 5), false},
	}
	for i, c := range cases {
		if in(c.key) != c.want {
			t.Errorf("case %d: in bounds = %v", i, !c.want)
		}
	}
	if p, err := PhysOf(AppendKey(nil, KindKey, "T", "k", 77)); err != nil || p != 77 {
		t.Fatal(p, err)
	}
	if v, err := DecodeValue(EncodeValue(9)); err != nil || v != 9 {
		t.Fatal(v, err)
	}
}
