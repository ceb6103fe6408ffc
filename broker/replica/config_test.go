package replica

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// A zero field takes its default; a negative duration or count is refused
// by name before any file is opened.
func TestConfigDefaultsAndNegatives(t *testing.T) {
	c := Config{ElectionTimeout: time.Second, BindAddr: "127.0.0.1:1"}
	if err := c.ensureDefaults(); err != nil {
		t.Fatal(err)
	}
	d := DefaultConfig()
	if c.HeartbeatTimeout != d.HeartbeatTimeout || c.ElectionTimeout != time.Second || c.SnapshotRetain != d.SnapshotRetain ||
		c.TrailingLogs != d.TrailingLogs || c.AdvertiseAddr != "127.0.0.1:1" {
		t.Fatalf("defaults: %+v", c)
	}
	_, err := New(Config{ID: "a", Dir: t.TempDir(), CommitTimeout: -time.Millisecond})
	if !errors.Is(err, ErrBadConfig) || !strings.Contains(err.Error(), "CommitTimeout") {
		t.Fatalf("negative CommitTimeout: %v", err)
	}
	_, err = New(Config{ID: "a", Dir: t.TempDir(), LogCacheEntries: -1})
	if !errors.Is(err, ErrBadConfig) || !strings.Contains(err.Error(), "LogCacheEntries") {
		t.Fatalf("negative LogCacheEntries: %v", err)
	}
}
