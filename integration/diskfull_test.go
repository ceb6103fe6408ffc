package integration

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/runnelmq/runnel/internal/testwait"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/runnelmq/runnel/broker"
	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/remoting/protocol"
	"github.com/runnelmq/runnel/store"
	"github.com/runnelmq/runnel/store/faultfs"
)

// diskCluster starts one broker whose store sees the disk through fs.
func diskCluster(t *testing.T, fs *faultfs.FS) *cluster.Cluster {
	t.Helper()
	return rcCluster(t, cluster.Configure(func(_ int, cfg *config.Config) {
		cfg.StoreOptions = func(o *store.Options) {
			o.FS = fs
			o.DiskCheckInterval = 20 * time.Millisecond
		}
	}))
}

// topicPerm is the perm the name server holds for topic (-1 if none).
func topicPerm(t *testing.T, c *cluster.Cluster, topic string) int {
	r, code := routeOf(t, c, topic)
	if code != protocol.RespSuccess || len(r.QueueDatas) == 0 {
		return -1
	}
	return r.QueueDatas[0].Perm
}

// TestDiskFull fills the disk (a faultfs reporting usage) under a producer
// and a consumer: sends are refused with code 14 and Java's remark before
// the disk is full, the name server hears the broker is not writable, a
// new consumer group reads what is there meanwhile, sends resume by
// themselves when space is freed, nothing acknowledged is lost, and a
// clean stop keeps the consumed offsets.
func TestDiskFull(t *testing.T) {
	fs := faultfs.New(vfs.Default, 10<<30, 40)
	c := diskCluster(t, fs)
	createTopic(t, c, 0, "DiskT", 2)
	// A producer that keeps its route: it must reach the refusing broker.
	p := rcProducerWith(t, c, func(cfg *client.ProducerConfig) {
		cfg.Client.RouteRefreshInterval = time.Hour
		cfg.Group = "disk-pg"
		cfg.RetryTimes = -1 // one attempt: the refusal itself is the point
	})
	send := func(i int) error {
		_, err := p.Send(context.Background(), &client.Message{Topic: "DiskT", Body: []byte(body(i))})
		return err
	}
	acked := map[string]bool{}
	for i := 0; i < 40; i++ {
		if err := send(i); err != nil {
			t.Fatal(err)
		}
		acked[body(i)] = true
	}
	got := newRCCollector()
	rcConsumer(t, c, "disk-a", "DiskT", "*", got.add)
	testwait.For(t, 20*time.Second, "group a to consume the first 40", func() bool { return got.len() == 40 })
	if perm := topicPerm(t, c, "DiskT"); perm != protocol.PermRead|protocol.PermWrite {
		t.Fatalf("perm before the disk filled: %d", perm)
	}

	fs.SetUsage(93)
	st := c.Broker(0).Store()
	testwait.For(t, 10*time.Second, "the store to refuse writes", func() bool { return st.Writable() != nil })
	err := send(1000)
	var be *client.BrokerError
	if !errors.As(err, &be) || be.Code != protocol.RespServiceNotAvailable || !strings.Contains(be.Remark, "the broker's disk is full [CL:  0.93") {
		t.Fatalf("send on a 93%% full disk: %v, want code 14 with Java's remark", err)
	}
	if fs.Failed.Load() != 0 {
		t.Fatal("a write failed with ENOSPC: the refusal must come first")
	}
	testwait.For(t, 10*time.Second, "the name server to see DiskT not writable", func() bool {
		return topicPerm(t, c, "DiskT") == protocol.PermRead
	})
	// A new group meanwhile: its heartbeat creates its retry topic and it
	// reads everything there; its offsets commit.
	fresh := newRCCollector()
	rcConsumer(t, c, "disk-b", "DiskT", "*", fresh.add)
	testwait.For(t, 20*time.Second, "a new group to read the existing messages", func() bool { return fresh.len() == 40 })
	if _, ok := c.Broker(0).Core().Topic("%RETRY%disk-b"); !ok {
		t.Fatal("no retry topic for the new group")
	}

	fs.SetUsage(60)
	testwait.For(t, 10*time.Second, "the name server to see DiskT writable again", func() bool {
		return topicPerm(t, c, "DiskT") == protocol.PermRead|protocol.PermWrite
	})
	for i := 40; i < 80; i++ {
		if err := send(i); err != nil {
			t.Fatalf("send after space returned: %v", err)
		}
		acked[body(i)] = true
	}
	testwait.For(t, 20*time.Second, "group a to consume everything acknowledged", func() bool { return got.len() == len(acked) })
	for b := range acked {
		if got.get(b) == nil {
			t.Fatalf("acknowledged %s not consumed", b)
		}
	}
	sum := func() int64 {
		var n int64
		for q := int32(0); q < 2; q++ {
			off, _ := c.Broker(0).ConsumerOffset("disk-a", "DiskT", q)
			n += off
		}
		return n
	}
	testwait.For(t, 20*time.Second, "group a's offsets to reach the broker", func() bool { return sum() == 80 })
	c.StopBroker(0)
	c.RestartBroker(0)
	if n := sum(); n != 80 {
		t.Fatalf("offsets after a clean restart sum to %d, want 80", n)
	}
}

// TestDiskFullOpen: a broker whose store directory is on a full disk fails
// to start at once, with one error saying so.
func TestDiskFullOpen(t *testing.T) {
	fs := faultfs.New(vfs.Default, 10<<30, 100)
	cfg := config.Default()
	cfg.StoreDir = t.TempDir()
	cfg.ListenAddr = "127.0.0.1:0"
	cfg.StoreOptions = func(o *store.Options) { o.FS = fs }
	start := time.Now()
	b, err := broker.New(cfg)
	if err == nil {
		_ = b.Close()
		t.Fatal("a broker opened on a full disk")
	}
	if !errors.Is(err, store.ErrDiskFull) || !strings.Contains(err.Error(), "free space and start again") {
		t.Fatalf("error %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("failing took %v", d)
	}
}

// TestDiskWriteENOSPC: a write that does fail with ENOSPC (the disk filled
// faster than the checks) is answered code 14 with its cause, the broker
// registers not writable, a clean stop returns without a panic, and a
// restart with space has every acknowledged message.
func TestDiskWriteENOSPC(t *testing.T) {
	fs := faultfs.New(vfs.Default, 10<<30, 40)
	c := diskCluster(t, fs)
	createTopic(t, c, 0, "EnospcT", 1)
	p := rcProducer(t, c)
	for i := 0; i < 20; i++ {
		if _, err := p.Send(context.Background(), &client.Message{Topic: "EnospcT", Body: []byte(body(i))}); err != nil {
			t.Fatal(err)
		}
	}
	fs.FailWrites(true)
	var err error
	for i := 0; i < 200 && err == nil; i++ {
		_, err = p.Send(context.Background(), &client.Message{Topic: "EnospcT", Body: []byte("late")})
	}
	var be *client.BrokerError
	if !errors.As(err, &be) || be.Code != protocol.RespServiceNotAvailable || !strings.Contains(be.Remark, "no space left on device") {
		t.Fatalf("send on ENOSPC: %v, want code 14 naming the cause", err)
	}
	testwait.For(t, 10*time.Second, "the name server to see EnospcT not writable", func() bool {
		return topicPerm(t, c, "EnospcT") == protocol.PermRead
	})
	// Only the log failed: a new group's retry topic and offsets are
	// written beside it, and it reads what is there.
	fs.FailWrites(false)
	got := newRCCollector()
	rcConsumer(t, c, "enospc-g", "EnospcT", "*", got.add)
	testwait.For(t, 20*time.Second, "a new group to read the acknowledged messages", func() bool { return got.len() == 20 })
	if _, ok := c.Broker(0).Core().Topic("%RETRY%enospc-g"); !ok {
		t.Fatal("no retry topic for the new group")
	}
	offset := func() int64 { o, _ := c.Broker(0).ConsumerOffset("enospc-g", "EnospcT", 0); return o }
	testwait.For(t, 20*time.Second, "the group's offset to reach the broker", func() bool { return offset() == 20 })
	// Space is freed, then a clean stop: Close must not panic in Pebble's
	// flush, and the offsets the core persists on close reach the WAL.
	fs.FailWrites(false)
	c.StopBroker(0)
	c.RestartBroker(0)
	if got := c.Broker(0).Store().MaxOffset("EnospcT", 0); got < 20 {
		t.Fatalf("after restart the queue holds %d, 20 were acknowledged", got)
	}
	if o := offset(); o != 20 {
		t.Fatalf("offset after a clean restart %d, want 20", o)
	}
	testwait.For(t, 10*time.Second, "EnospcT writable again", func() bool {
		return topicPerm(t, c, "EnospcT") == protocol.PermRead|protocol.PermWrite
	})
}
