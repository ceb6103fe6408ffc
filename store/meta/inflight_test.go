package meta

import (
	"bytes"
	"testing"
)

func TestInFlightKeyRoundTrips(t *testing.T) {
	for _, c := range []struct {
		g, t string
		q    int32
		off  int64
	}{{"g", "T", 0, 0}, {"group-1", "%RETRY%group-1_T", 15, 1 << 40}, {string(bytes.Repeat([]byte("g"), 255)), "t", 1, 7}} {
		k := InFlightKey(c.g, c.t, c.q, c.off)
		g, tp, q, off, err := ParseInFlightKey(k)
		if err != nil || g != c.g || tp != c.t || q != c.q || off != c.off {
			t.Fatalf("ParseInFlightKey(InFlightKey(%q, %q, %d, %d)) = %q, %q, %d, %d, %v", c.g, c.t, c.q, c.off, g, tp, q, off, err)
		}
		lo, hi := InFlightBounds()
		if bytes.Compare(k, lo) < 0 || bytes.Compare(k, hi) >= 0 {
			t.Fatalf("key %x outside the bounds", k)
		}
	}
	// A queue's records sort by offset.
	if bytes.Compare(InFlightKey("g", "T", 1, 255), InFlightKey("g", "T", 1, 256)) >= 0 {
		t.Fatal("offsets do not sort")
	}
	for _, bad := range [][]byte{nil, {prefix}, {prefix, kindInFlight}, {prefix, kindOffset, 1, 'g', 1, 't', 0, 0, 0, 0}, InFlightKey("g", "T", 1, 2)[:10]} {
		if _, _, _, _, err := ParseInFlightKey(bad); err == nil {
			t.Fatalf("ParseInFlightKey(%x) accepted", bad)
		}
	}
}
