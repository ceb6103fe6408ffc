package metrics_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/remoting/protocol"
	"github.com/runnelmq/runnel/store"
	"github.com/runnelmq/runnel/store/faultfs"
)

// TestForcedCleanMetricAndRuntimeInfo: what a forced clean deleted shows
// in /metrics (in all, and by the group that had not consumed it) and in
// GET_BROKER_RUNTIME_INFO (runnelctl broker status, mqadmin brokerStatus).
func TestForcedCleanMetricAndRuntimeInfo(t *testing.T) {
	fs := faultfs.New(vfs.Default, 1<<30, 50)
	b := startBroker(t, func(c *config.Config) {
		c.StoreOptions = func(o *store.Options) {
			o.CacheSize, o.MemTableSize = 8<<20, 4<<20
			o.FS = fs
			o.DiskCheckInterval = 5 * time.Millisecond
		}
	})
	rc := newRawClient(t, b.Addr())
	rc.createTopic("FC", 1)
	body := []byte(strings.Repeat("x", 16<<10))
	const n = 100
	for i := 0; i < n; i++ {
		rc.ok(protocol.ReqSendMessage, sendHeader("FC", nil).Encode(), body)
	}
	b.Core().CommitConsumerOffset("slow", "FC", 0, 3)
	st := b.Store()
	fs.SetUsageFunc(func() int { // above the ratio until one slice is gone
		if st.MinPhysOffset() == 0 {
			return 87
		}
		return 50
	})
	testwait.For(t, 10*time.Second, "a forced clean", func() bool { return b.Core().ForcedCleans().Messages > 0 })
	gone := st.MinOffset("FC", 0)
	if gone <= 3 {
		t.Fatalf("the queue starts at %d after the forced clean", gone)
	}

	fams := scrape(t, b.MetricsURL())
	if v := value(t, fams, "rocketmq_storage_forced_clean_messages_total", nil); v != float64(gone) {
		t.Fatalf("rocketmq_storage_forced_clean_messages_total %v, want %d", v, gone)
	}
	lost := map[string]string{"consumer_group": "slow", "is_system": "false"}
	if v := value(t, fams, "rocketmq_storage_forced_clean_unconsumed_messages_total", lost); v != float64(gone-3) {
		t.Fatalf("unconsumed for slow %v, want %d", v, gone-3)
	}

	var info struct{ Table map[string]string }
	if err := json.Unmarshal(rc.ok(protocol.ReqGetBrokerRuntimeInfo, nil, nil).Body, &info); err != nil {
		t.Fatal(err)
	}
	if got, want := info.Table["commitLogForcedCleanMessages"], strconv.FormatInt(gone, 10); got != want {
		t.Fatalf("commitLogForcedCleanMessages %q, want %q", got, want)
	}
	if got, want := info.Table["commitLogForcedCleanUnconsumedMessages"], "slow="+strconv.FormatInt(gone-3, 10); got != want {
		t.Fatalf("commitLogForcedCleanUnconsumedMessages %q, want %q", got, want)
	}
}
