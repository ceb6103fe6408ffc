package nsaddr

import (
	"slices"
	"testing"
)

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want []string
		bad  string
	}{
		{in: nil},
		{in: []string{"127.0.0.1:9876"}, want: []string{"127.0.0.1:9876"}},
		{in: []string{" a:1 ; http://b:2;;https://c:3 ", "d:4"}, want: []string{"a:1", "b:2", "c:3", "d:4"}},
		{in: []string{"", " ; "}},
		{in: []string{"a:1", "b:2;nohost"}, bad: "b:2;nohost"},
		{in: []string{"a:"}, bad: "a:"},
	} {
		got, bad, ok := Split(tc.in)
		if ok != (tc.bad == "") || bad != tc.bad || !slices.Equal(got, tc.want) {
			t.Errorf("Split(%q) = %q, %q, %v; want %q, %q", tc.in, got, bad, ok, tc.want, tc.bad)
		}
	}
}
