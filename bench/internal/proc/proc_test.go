package proc

import "testing"

func TestStatTicks(t *testing.T) {
	// A command name may hold spaces and parentheses.
	line := "4242 (a) b (c)) S 1 4242 4242 0 -1 4194560 1523 0 0 0 170 31 0 0 20 0 9 0 8851 1290915840 11226 18446744073709551615\n"
	n, err := statTicks(line)
	if err != nil || n != 201 {
		t.Fatalf("statTicks = %d, %v; want 201", n, err)
	}
	for _, bad := range []string{"", "4242 (x) S 1 2", "4242 (x) S 1 4242 4242 0 -1 4194560 1523 0 0 0 abc 31 0"} {
		if n, err := statTicks(bad); err == nil {
			t.Errorf("statTicks(%q) = %d, want an error", bad, n)
		}
	}
}
