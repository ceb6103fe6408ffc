package core

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/store"
	"github.com/runnelmq/runnel/topicconf"
)

// heldSyncFS holds every sync of the metadata database's WAL, where topic
// configs are written, while armed; entered is signalled when one waits.
type heldSyncFS struct {
	vfs.FS
	mu      sync.Mutex
	armed   bool
	release chan struct{}
	once    sync.Once
	entered chan struct{}
}

// let releases a held sync and every later one.
func (fs *heldSyncFS) let() { fs.once.Do(func() { close(fs.release) }) }

func (fs *heldSyncFS) wrap(name string, f vfs.File, err error) (vfs.File, error) {
	if err != nil || !strings.Contains(name, "/meta/") || !strings.HasSuffix(name, ".log") {
		return f, err
	}
	return &heldSyncFile{File: f, fs: fs}, nil
}

func (fs *heldSyncFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, c)
	return fs.wrap(name, f, err)
}

func (fs *heldSyncFS) ReuseForWrite(old, name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(old, name, c)
	return fs.wrap(name, f, err)
}

func (fs *heldSyncFS) hold() {
	fs.mu.Lock()
	armed := fs.armed
	fs.armed = false // one sync is held; the rest pass
	fs.mu.Unlock()
	if armed {
		fs.entered <- struct{}{}
		<-fs.release
	}
}

type heldSyncFile struct {
	vfs.File
	fs *heldSyncFS
}

func (f *heldSyncFile) Sync() error     { f.fs.hold(); return f.File.Sync() }
func (f *heldSyncFile) SyncData() error { f.fs.hold(); return f.File.SyncData() }
func (f *heldSyncFile) SyncTo(n int64) (bool, error) {
	f.fs.hold()
	return f.File.SyncTo(n)
}

// A topic creation waits for its sync without holding up anyone who reads
// the topic table: a send to an existing topic, a route lookup.
func TestTopicCreationSyncHoldsNoReader(t *testing.T) {
	fs := &heldSyncFS{FS: vfs.NewMem(), release: make(chan struct{}), entered: make(chan struct{}, 1)}
	// SYNC_FLUSH: a creation waits for a real fsync of its write.
	c := openCore(t, func(_ *Config, o *store.Options) { o.FS = fs; o.FlushMode = store.SyncFlush })
	t.Cleanup(fs.let) // before the core closes, on every path
	send(t, c, "Existing", "", 0)

	fs.mu.Lock()
	fs.armed = true
	fs.mu.Unlock()
	created := make(chan error, 1)
	go func() {
		created <- c.CreateTopic(topicconf.Config{TopicName: "New", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6}, "test")
	}()
	select {
	case <-fs.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the creation never synced")
	}
	read := make(chan struct{})
	go func() {
		defer close(read)
		if _, ok := c.Topic("Existing"); !ok {
			t.Error("Existing is gone")
		}
		send(t, c, "Existing", "", 0)
	}()
	select {
	case <-read:
	case <-time.After(10 * time.Second):
		t.Fatal("a reader of the topic table waited for a creation's sync")
	}
	if _, ok := c.Topic("New"); ok {
		t.Fatal("New visible before its creation was durable")
	}
	fs.let()
	if err := <-created; err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Topic("New"); !ok {
		t.Fatal("New missing after its creation")
	}
}

// Creations of different topics do not wait for one another's sync: the
// second hands its write to the store while the first's fsync is still
// held, so a burst of creations shares the WAL's syncs. Each change is
// then taken once by the registration (TakeTopicChanges).
func TestConcurrentCreationsShareTheSync(t *testing.T) {
	fs := &heldSyncFS{FS: vfs.NewMem(), release: make(chan struct{}), entered: make(chan struct{}, 1)}
	c := openCore(t, func(_ *Config, o *store.Options) { o.FS = fs; o.FlushMode = store.SyncFlush })
	t.Cleanup(fs.let)
	c.TakeTopicChanges() // the system topics of the start

	fs.mu.Lock()
	fs.armed = true
	fs.mu.Unlock()
	created := make(chan error, 2)
	create := func(name string) {
		created <- c.CreateTopic(topicconf.Config{TopicName: name, ReadQueueNums: 2, WriteQueueNums: 2, Perm: 6}, "test")
	}
	go create("First")
	select {
	case <-fs.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the first creation never synced")
	}
	before := c.Store().Stats().Syncs
	go create("Second")
	testwait.For(t, testwait.Default, "the second creation's write handed to the store during the first's sync", func() bool {
		return c.Store().Stats().Syncs > before
	})
	fs.let()
	for range 2 {
		if err := <-created; err != nil {
			t.Fatal(err)
		}
	}
	changed, removed, v := c.TakeTopicChanges()
	if len(changed) != 2 || changed["First"].WriteQueueNums != 2 || changed["Second"].WriteQueueNums != 2 || removed {
		t.Fatalf("changes %v removed %v", changed, removed)
	}
	if _, tv := c.Topics(); tv != v {
		t.Fatalf("version of the changes %+v, table's %+v", v, tv)
	}
	if err := c.DeleteTopic("First", "test"); err != nil {
		t.Fatal(err)
	}
	if changed, removed, _ = c.TakeTopicChanges(); len(changed) != 0 || !removed {
		t.Fatalf("after a deletion: changes %v removed %v", changed, removed)
	}
}
