package broker

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/broker/replica"
	"github.com/runnelmq/runnel/store"
)

// A group's flushDiskType says when its raft log is durable, as it says of
// a single broker's store: SYNC_FLUSH fsyncs every log write before raft
// counts it, ASYNC_FLUSH defers the fsync by the store's flush interval.
func TestGroupFlushModeSaysWhenTheRaftLogSyncs(t *testing.T) {
	for _, c := range []struct {
		mode     store.FlushMode
		interval time.Duration
		want     time.Duration
	}{
		{store.SyncFlush, 0, 0},
		{store.AsyncFlush, 0, 500 * time.Millisecond}, // the store's default
		{store.AsyncFlush, 200 * time.Millisecond, 200 * time.Millisecond},
		{store.AsyncFlush, -1, 0}, // a store without a background fsync
	} {
		cfg := config.Default()
		cfg.Replication.Enable, cfg.Replication.SelfID = true, "n0"
		cfg.Replication.Peers = []replica.Peer{{ID: "n0", Addr: "127.0.0.1:1"}}
		b := &Broker{cfg: cfg, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
		rc, err := b.replicaConfig(store.Options{FlushMode: c.mode, FlushInterval: c.interval})
		if err != nil {
			t.Fatal(err)
		}
		if rc.LogSyncInterval != c.want {
			t.Errorf("%v with FlushInterval %v: raft log fsync every %v, want %v", c.mode, c.interval, rc.LogSyncInterval, c.want)
		}
	}
}
