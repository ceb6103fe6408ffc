package confdefault

import (
	"errors"
	"testing"
	"time"
)

var errBad = errors.New("bad config")

// Zero fields take their defaults, set ones stay; a negative one is
// refused, named with its value, and the error wraps the caller's.
func TestFill(t *testing.T) {
	a, b := time.Duration(0), 5*time.Second
	if err := Fill(errBad, Of("A", &a, time.Second), Of("B", &b, time.Minute)); err != nil || a != time.Second || b != 5*time.Second {
		t.Fatalf("a %v b %v err %v", a, b, err)
	}
	n := -2
	err := Fill(errBad, Of("N", &n, 3))
	if !errors.Is(err, errBad) || err.Error() != "bad config: N -2 is negative" || n != -2 {
		t.Fatalf("err %v, n %d", err, n)
	}
	d := -time.Second
	if err := Fill(errBad, Of("D", &d, time.Minute)); err == nil || err.Error() != "bad config: D -1s is negative" {
		t.Fatalf("err %v", err)
	}
}

// Positive keeps a positive value and gives zero and negative ones the
// default.
func TestPositive(t *testing.T) {
	for _, c := range []struct{ in, want int }{{5, 5}, {0, 7}, {-1, 7}} {
		v := c.in
		Positive(&v, 7)
		if v != c.want {
			t.Errorf("Positive(%d, 7) = %d, want %d", c.in, v, c.want)
		}
	}
}
