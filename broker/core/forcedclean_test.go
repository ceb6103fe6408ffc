package core

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/runnelmq/runnel/internal/syncbuf"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/store"
	"github.com/runnelmq/runnel/store/faultfs"
	"github.com/runnelmq/runnel/topicconf"
)

// TestForcedCleanCountsUnconsumed: a forced clean (disk above
// diskSpaceCleanForciblyRatio) is counted, by the groups that had not
// consumed what it deleted, and said in a WARN naming them.
func TestForcedCleanCountsUnconsumed(t *testing.T) {
	fs := faultfs.New(vfs.NewMem(), 1<<30, 50)
	var logs syncbuf.Buffer
	c := openCore(t, func(cfg *Config, o *store.Options) {
		o.FS = fs
		o.DiskCheckInterval = 5 * time.Millisecond
		cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	if err := c.CreateTopic(topicconf.Config{TopicName: "A", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6}, "test"); err != nil {
		t.Fatal(err)
	}
	const n = 100
	body := strings.Repeat("x", 16<<10)
	for i := 0; i < n; i++ {
		if _, err := c.Send(sendReq("A", 0, body)); err != nil {
			t.Fatal(err)
		}
	}
	c.CommitConsumerOffset("slow", "A", 0, 3)
	c.CommitConsumerOffset("done", "A", 0, n)
	st := c.Store()
	// Above the ratio until the first slice is gone: one forced clean.
	fs.SetUsageFunc(func() int {
		if st.MinPhysOffset() == 0 {
			return 87
		}
		return 50
	})
	testwait.For(t, 10*time.Second, "a forced clean", func() bool { return c.ForcedCleans().Messages > 0 })
	gone := st.MinOffset("A", 0)
	fc := c.ForcedCleans()
	if gone <= 3 || gone >= n || fc.Messages != gone {
		t.Fatalf("forced clean counted %d messages, the queue starts at %d of %d", fc.Messages, gone, n)
	}
	if len(fc.Unconsumed) != 1 || fc.Unconsumed["slow"] != gone-3 {
		t.Fatalf("unconsumed by group %v, want slow=%d only", fc.Unconsumed, gone-3)
	}
	testwait.For(t, 10*time.Second, "the WARN", func() bool { return strings.Contains(logs.String(), "level=WARN") })
	if line := logs.String(); !strings.Contains(line, `unconsumedByGroup="slow=`) || strings.Contains(line, "done=") {
		t.Fatalf("log %q, want a WARN naming slow and not done", line)
	}
}
