package integration

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store"
)

// A group's follower cut off while the leader writes far past it, and the
// leader snapshots and drops its log but the last few entries (small
// snapshot thresholds), catches up from the snapshot once healed: its
// store is replaced by one restored from the leader's, and answers every
// read of both topics (one created while it was cut off) as the leader's
// does.
func TestGroupSnapshotCatchUp(t *testing.T) {
	c := rcCluster(t, cluster.Group(3), cluster.Configure(func(_ int, cfg *config.Config) {
		cfg.Replication.SnapshotInterval = 100 * time.Millisecond
		cfg.Replication.SnapshotThreshold = 16
		cfg.Replication.TrailingLogs = 4
	}))
	l := c.Leader()
	waitListed(t, c, l, 10*time.Second)
	p := rcProducer(t, c)
	sendUntilOK(t, p, "Snap", "first")

	f := (l + 1) % 3
	before := c.Broker(f).Store()
	c.Cut(f)
	for i := range 200 {
		sendUntilOK(t, p, []string{"Snap", "SnapNew"}[i%2], fmt.Sprintf("s-%03d", i))
	}
	// Raft snapshots on its own past 16 entries (every 100-200 ms); one
	// more now makes sure the log kept is the last 4 entries, far past
	// the follower's.
	nl := c.Leader(f)
	if err := c.Broker(nl).Node().Snapshot(); err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	c.Heal(f)

	testwait.Until(t, 30*time.Second, "the follower caught up from a snapshot", func() error {
		fs := c.Broker(f).Store()
		if fs == before {
			return errors.New("the follower's store is the one it had before the cut")
		}
		ls := c.Broker(c.Leader()).Store()
		for _, topic := range []string{"Snap", "SnapNew"} {
			want, err := topicReads(ls, topic)
			if err != nil {
				return err
			}
			got, err := topicReads(fs, topic)
			if err != nil {
				return err
			}
			if len(want) == 0 || !slices.Equal(got, want) {
				return fmt.Errorf("%s: follower reads %d messages, leader %d", topic, len(got), len(want))
			}
		}
		return nil
	})
}

// topicReads is every message of topic in st as "queue@offset body", in
// queue and offset order.
func topicReads(st *store.Store, topic string) ([]string, error) {
	var out []string
	for id, r := range st.Queues() {
		if id.Topic != topic {
			continue
		}
		for off := r.Min; off < r.Max; {
			res, err := st.Get(topic, id.ID, off, 32, 1<<20, nil)
			if err != nil {
				return nil, err
			}
			if res.Count == 0 {
				return nil, fmt.Errorf("get %s %d@%d: nothing below max %d", topic, id.ID, off, r.Max)
			}
			ms, err := message.DecodeMessages(res.Messages)
			if err != nil {
				return nil, err
			}
			for _, m := range ms {
				out = append(out, fmt.Sprintf("%d@%d %s", m.QueueID, m.QueueOffset, m.Body))
			}
			off = res.NextBeginOffset
		}
	}
	slices.Sort(out)
	return out, nil
}
