package core

import (
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/runnelmq/runnel/internal/fakeclock"
	"github.com/runnelmq/runnel/store"
)

// openCoreAt opens a started core over fs on clock, which a test closes
// with closeCore and opens again: a restart.
func openCoreAt(t *testing.T, fs vfs.FS, clock *fakeclock.Clock) *testCore {
	t.Helper()
	var c *testCore
	c = openCoreNoCleanup(t, func(cfg *Config, o *store.Options) {
		o.FS, o.Now, cfg.Now = fs, clock.Now, clock.Now
	})
	c.clock = clock
	return c
}

// closeCore closes a core as a clean shutdown does.
func closeCore(t *testing.T, c *testCore) {
	t.Helper()
	if err := c.Close(true); err != nil {
		t.Fatal(err)
	}
}
