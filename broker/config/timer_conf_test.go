package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestTimerMaxDelaySec: timerMaxDelaySec sets TimerMaxDelay in seconds;
// the default is Java's 3 days; a value that is not a positive number of
// seconds is refused.
func TestTimerMaxDelaySec(t *testing.T) {
	cfg := Default()
	if cfg.TimerMaxDelay != 72*time.Hour {
		t.Fatalf("default TimerMaxDelay %v", cfg.TimerMaxDelay)
	}
	if ignored, err := cfg.ApplyProperties(strings.NewReader("timerMaxDelaySec=600\n")); err != nil || len(ignored) != 0 {
		t.Fatalf("ApplyProperties: %v %v", ignored, err)
	}
	if cfg.TimerMaxDelay != 10*time.Minute {
		t.Fatalf("TimerMaxDelay %v after timerMaxDelaySec=600", cfg.TimerMaxDelay)
	}
	for _, bad := range []string{"timerMaxDelaySec=0", "timerMaxDelaySec=-5", "timerMaxDelaySec=3d", "timerMaxDelaySec=99999999999"} {
		c := Default()
		if _, err := c.ApplyProperties(strings.NewReader(bad)); !errors.Is(err, ErrBadConfig) {
			t.Errorf("%q: %v, want ErrBadConfig", bad, err)
		}
	}
	var zero Config
	zero.EnsureDefaults()
	if zero.TimerMaxDelay != 72*time.Hour {
		t.Fatalf("ensureDefaults TimerMaxDelay %v", zero.TimerMaxDelay)
	}
}
