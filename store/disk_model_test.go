package store

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/runnelmq/runnel/internal/fakeclock"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store/faultfs"
)

// The disk model (issue 36's fault trial, kept in the suite): writers fill
// a small disk while the store's forced cleaning deletes the oldest log,
// and a model of what was acknowledged, refused and logged as deleted is
// checked against the store reopened after the disk grew, cleanly and
// after a crash.

// diskModelTotal is the small disk: the store's files (WAL, tables, both
// databases) on a MemFS, as a share of it, are the usage the store reads.
const diskModelTotal = 16 << 20

// diskModelQueues are the queues the writers append to, a random one per
// batch.
var diskModelQueues = []QueueID{{Topic: "T", ID: 0}, {Topic: "T", ID: 1}, {Topic: "U", ID: 0}, {Topic: "U", ID: 1}}

// smallDisk is a filesystem of total bytes whose usage is what the store
// holds on it: the file sizes under the store's directory.
type smallDisk struct {
	mem   *vfs.MemFS
	total atomic.Int64
	peak  atomic.Int32 // the highest usage read, percent
}

// usage is faultfs's usage function. It walks the MemFS, never the store
// or Pebble: Pebble reads the usage with its own locks held.
func (d *smallDisk) usage() int {
	pct := int32(min(duFS(d.mem, "db")*100/d.total.Load(), 100))
	for p := d.peak.Load(); pct > p && !d.peak.CompareAndSwap(p, pct); p = d.peak.Load() {
	}
	return int(pct)
}

// duFS is the size of the files under dir.
func duFS(fs vfs.FS, dir string) int64 {
	names, err := fs.List(dir)
	if err != nil {
		return 0
	}
	var n int64
	for _, name := range names {
		p := fs.PathJoin(dir, name)
		st, err := fs.Stat(p)
		switch {
		case err != nil: // deleted meanwhile
		case st.IsDir():
			n += duFS(fs, p)
		default:
			n += st.Size()
		}
	}
	return n
}

// diskChecker runs the store's disk check (watchDisk) for the test instead
// of its ticker: when kicked, and never while paused. Pausing it is what
// makes every round reach the refusal: the check falls behind the writers,
// as at thousands of messages a second in the trial.
type diskChecker struct {
	s    *Store
	mu   sync.Mutex // held across a check; paused changes under it
	kick chan struct{}
	// paused and prog are mu's.
	paused bool
	prog   chan struct{} // closed (and replaced) after each check
}

func newDiskChecker(s *Store) *diskChecker {
	return &diskChecker{s: s, kick: make(chan struct{}, 1), paused: true, prog: make(chan struct{})}
}

func (c *diskChecker) run(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-c.kick:
		}
		c.mu.Lock()
		if !c.paused {
			c.s.watchDisk()
			c.broadcastLocked()
		}
		c.mu.Unlock()
	}
}

// progress is closed by the next check (or broadcast).
func (c *diskChecker) progress() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.prog
}

func (c *diskChecker) broadcastLocked() {
	close(c.prog)
	c.prog = make(chan struct{})
}

// broadcast wakes the writers waiting for a check without one.
func (c *diskChecker) broadcast() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.broadcastLocked()
}

func (c *diskChecker) kickNow() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// setPaused pauses or resumes the checks; paused, it returns once the
// check under way (if any) is done.
func (c *diskChecker) setPaused(p bool) {
	c.mu.Lock()
	c.paused = p
	c.mu.Unlock()
	c.kickNow()
}

// diskAck is an acknowledged message.
type diskAck struct {
	q         QueueID
	off, phys int64
	sum       uint64 // the body's hash
}

// diskReport is a forced clean as the store reported it, with the log's
// end when it did (at or past its end when the slice was chosen).
type diskReport struct {
	ForcedClean
	logEnd int64
}

// diskModel is what the writers and the forced cleans did, by message id.
type diskModel struct {
	mu      sync.Mutex
	acked   map[string]diskAck
	refused map[string]bool
	reports []diskReport
	// crashAt is the report in whose hook the filesystem is crash-cloned
	// (1-based; 0: none yet), and crash what it then was.
	crashAt int
	crash   *diskCrash
}

// diskCrash is a kill -9 of the store: the files as they were, what was
// acknowledged and logged by then.
type diskCrash struct {
	fs      *vfs.MemFS
	acked   map[string]diskAck
	reports []diskReport
}

// diskModelRounds is how many times the writers fill the disk:
// RUNNEL_DISK_MODEL_ROUNDS, else 4 (2 under -race).
func diskModelRounds() int {
	if v, err := strconv.Atoi(os.Getenv("RUNNEL_DISK_MODEL_ROUNDS")); err == nil && v > 0 {
		return v
	}
	if raceEnabled {
		return 2
	}
	return 4
}

// TestDiskModel: four writers fill a small disk (usage: the store's own
// files on it) round after round. In each round the disk check stalls
// until every writer is refused (ErrDiskFull, before the disk is full),
// then runs: forced cleans delete the oldest log until the writers are
// accepted again without a restart. Then the disk grows, appends resume
// by themselves (no disk check runs), and the store is reopened, after a
// clean close and from a crash clone taken at a forced clean of the last
// round. The model: every acknowledged message at or above the log start
// is there once with its body and offsets, none refused is; the log
// starts exactly where the last logged forced clean ended (nothing else
// deleted anything); each forced clean deleted one slice at most, oldest
// first and contiguous from the log's start, and the queue ranges it
// reported are what went.
func TestDiskModel(t *testing.T) {
	defer func(old int64) { truncateStep = old }(truncateStep)
	truncateStep = 64 << 10 // a slice takes several truncations
	rounds := diskModelRounds()
	const writers = 4

	disk := &smallDisk{mem: vfs.NewCrashableMem()}
	disk.total.Store(diskModelTotal)
	fs := faultfs.New(disk.mem, diskModelTotal, 0)
	fs.SetUsageFunc(disk.usage)
	o := memOptions(fs, fakeclock.New(t0))
	o.MemTableSize = 1 << 20 // memtables small against the disk
	o.DiskCheckInterval = -1 // the diskChecker runs the checks
	o.FileReservedTime = -1  // nothing expires: only forced cleans delete
	o.CheckpointBytes = 0    // the default, not memOptions' tiny one: the database beside the log writes what a broker's does
	o.Logger = testLogger{t}
	m := &diskModel{acked: map[string]diskAck{}, refused: map[string]bool{}}
	var s *Store
	o.OnForcedClean = func(fc ForcedClean) {
		m.mu.Lock() // before the clone: what is acked by then was written before it
		defer m.mu.Unlock()
		m.reports = append(m.reports, diskReport{fc, s.MaxPhysOffset()})
		if len(m.reports) == m.crashAt {
			m.crash = &diskCrash{
				fs:      disk.mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 100, RNG: rand.New(rand.NewPCG(36, 0))}),
				acked:   cloneMap(m.acked),
				reports: slices.Clone(m.reports),
			}
		}
	}
	s, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }() // if a check below fails first

	ck := newDiskChecker(s)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var blocked, resumed atomic.Int32 // writers waiting after a refusal; acks after one
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.write(t, s, ck, w, stop, &blocked, &resumed)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		ck.run(stop)
	}()
	halt := sync.OnceFunc(func() { close(stop); wg.Wait() })
	defer halt()

	allRefused := func(what string) {
		t.Helper()
		testwait.For(t, 2*testwait.Default, what, func() bool { return blocked.Load() == writers || t.Failed() })
		if t.Failed() { // a writer's error
			t.FailNow()
		}
	}
	for round := 1; round <= rounds; round++ {
		// The check stalls: the writers fill the disk until each is refused.
		ck.setPaused(true)
		allRefused(fmt.Sprintf("round %d: every writer refused", round))
		m.mu.Lock()
		cleans := len(m.reports)
		if round == rounds {
			m.crashAt = cleans + 1
		}
		m.mu.Unlock()
		// The check runs again: forced cleans until appends are accepted.
		was := resumed.Load()
		ck.setPaused(false)
		testwait.For(t, 2*testwait.Default, fmt.Sprintf("round %d: a forced clean, then appends accepted", round), func() bool {
			m.mu.Lock()
			defer m.mu.Unlock()
			return len(m.reports) > cleans && resumed.Load() > was || t.Failed()
		})
	}
	// Full once more, then the disk grows: appends resume by themselves
	// (a refused append reads the usage again), no disk check runs.
	ck.setPaused(true)
	allRefused("every writer refused before the disk grows")
	disk.total.Store(4 * diskModelTotal)
	was := resumed.Load()
	ck.broadcast()
	testwait.For(t, 2*testwait.Default, "appends accepted once the disk grew", func() bool { return resumed.Load() >= was+writers || t.Failed() })
	halt()
	if t.Failed() {
		return
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	if m.crash == nil {
		t.Fatal("no crash clone: the last round had no forced clean")
	}
	peak := disk.peak.Load()
	t.Logf("%d rounds: %d acked, %d refused, %d forced cleans, the log starts at %d of %d; usage peaked at %d%%",
		rounds, len(m.acked), len(m.refused), len(m.reports), m.reports[len(m.reports)-1].To, s.MaxPhysOffset(), peak)
	// The disk never filled: on a real one Pebble's write would have
	// failed with ENOSPC. Peaks seen: 90-97% (a memtable's flush after the
	// refusal); before the store counted its memtables and excised what
	// forced cleans deleted, 100% in every run.
	if peak >= 100 {
		t.Fatalf("the disk filled (usage read %d%%)", peak)
	}
	t.Run("restart", func(t *testing.T) {
		o := o
		o.Logger = testLogger{t}
		s := mustOpen(t, o)
		checkDiskModel(t, s, m.reports, m.acked, m.acked, m.refused)
		mustPut(t, s, msg("T", 0, "after the restart"))
	})
	t.Run("crash", func(t *testing.T) {
		crashed := faultfs.New(m.crash.fs, 4*diskModelTotal, 20)
		oc := o
		oc.FS = crashed
		oc.OnForcedClean = nil
		oc.Logger = testLogger{t}
		s := mustOpen(t, oc)
		// What was acknowledged after the clone may be there or not.
		checkDiskModel(t, s, m.crash.reports, m.crash.acked, m.acked, m.refused)
		mustPut(t, s, msg("T", 0, "after the crash"))
	})
}

// write is one writer: batches of one to three messages to a random
// queue until stop. After a refusal it waits for the next disk check.
func (m *diskModel) write(t *testing.T, s *Store, ck *diskChecker, w int, stop <-chan struct{}, blocked, resumed *atomic.Int32) {
	src := rand.NewChaCha8([32]byte{36, byte(w)})
	rng := rand.New(src)
	refused := false
	for i := 0; ; {
		select {
		case <-stop:
			return
		default:
		}
		q := diskModelQueues[rng.IntN(len(diskModelQueues))]
		ids := make([]string, 1+rng.IntN(3))
		msgs := make([]*message.MessageExt, len(ids))
		for k := range msgs {
			ids[k] = fmt.Sprintf("%02d-%08d|", w, i)
			i++
			body := make([]byte, 512+rng.IntN(3584))
			copy(body, ids[k])
			_, _ = src.Read(body[len(ids[k]):]) // incompressible: the tables measure the log
			msgs[k] = msg(q.Topic, q.ID, string(body))
		}
		next := ck.progress() // before the Put: a check during it is not missed
		r, err := s.Put(msgs)
		switch {
		case err == nil:
			m.mu.Lock()
			for k, id := range ids {
				m.acked[id] = diskAck{q, r[k].QueueOffset, r[k].CommitLogOffset, bodySum(msgs[k].Body)}
			}
			m.mu.Unlock()
			if refused {
				refused = false
				resumed.Add(1)
			}
			ck.kickNow()
		case errors.Is(err, ErrDiskFull):
			m.mu.Lock()
			for _, id := range ids {
				m.refused[id] = true
			}
			m.mu.Unlock()
			refused = true
			blocked.Add(1)
			ck.kickNow()
			select {
			case <-next:
			case <-stop:
			}
			blocked.Add(-1)
		default:
			t.Errorf("writer %d: %v", w, err)
			return
		}
	}
}

// testLogger is the store's logger: its errors (the refusals are many
// lines) in t's log, Pebble's info dropped.
type testLogger struct{ t testing.TB }

func (l testLogger) Infof(string, ...any)              {}
func (l testLogger) Errorf(format string, args ...any) { l.t.Logf(format, args...) }
func (l testLogger) Fatalf(format string, args ...any) {
	l.t.Errorf(format, args...)
	panic(fmt.Sprintf(format, args...)) // Pebble's Fatalf does not return; off the test's goroutine t.Fatalf may not be called
}

func bodySum(b []byte) uint64 {
	h := fnv.New64a()
	_, _ = h.Write(b)
	return h.Sum64()
}

func cloneMap[K comparable, V any](m map[K]V) map[K]V {
	c := make(map[K]V, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// checkDiskModel checks a reopened store against the model: reports are
// the forced cleans logged, mustHave what was acknowledged before the
// store stopped (all there unless a logged clean deleted it), mayHave
// everything acknowledged (what is there must be one of these, at its
// offsets), refused what must not be there.
func checkDiskModel(t *testing.T, s *Store, reports []diskReport, mustHave, mayHave map[string]diskAck, refused map[string]bool) {
	t.Helper()
	// The cleans: one slice at most each, oldest first, contiguous from
	// the log's start, and so the queue ranges they named.
	var cut int64
	qcut := map[QueueID]int64{}
	maxRecord := int64(4096 + 512) // a body and its record's header
	for i, r := range reports {
		slice := max((r.logEnd-r.From)/10, truncateStep) + maxRecord
		switch {
		case r.From != cut:
			t.Fatalf("forced clean %d deleted [%d, %d), the log started at %d", i, r.From, r.To, cut)
		case r.To <= r.From:
			t.Fatalf("forced clean %d reported deleting [%d, %d)", i, r.From, r.To)
		case r.To-r.From > slice:
			t.Fatalf("forced clean %d deleted [%d, %d) of a log ending at %d: more than one slice (%d bytes)", i, r.From, r.To, r.logEnd, slice)
		}
		cut = r.To
		for q, qr := range r.Queues {
			if qr.Min != qcut[q] || qr.Max <= qr.Min {
				t.Fatalf("forced clean %d reported %v [%d, %d), the queue started at %d", i, q, qr.Min, qr.Max, qcut[q])
			}
			qcut[q] = qr.Max
		}
	}
	if got := s.MinPhysOffset(); got != cut {
		t.Fatalf("the log starts at %d, the logged forced cleans deleted it up to %d", got, cut)
	}
	// What is there: each queue dense from where the cleans left it, each
	// message acknowledged, at its offsets, once.
	seen := map[string]bool{}
	for _, q := range diskModelQueues {
		if lo := s.MinOffset(q.Topic, q.ID); lo != qcut[q] {
			t.Fatalf("%v starts at %d, the logged forced cleans deleted it up to %d", q, lo, qcut[q])
		}
		for off, hi := qcut[q], s.MaxOffset(q.Topic, q.ID); off < hi; {
			r, err := s.Get(q.Topic, q.ID, off, 32, 1<<20, nil)
			if err != nil || r.Status != GetFound || r.Count == 0 {
				t.Fatalf("%v at %d (max %d): %v %v", q, off, hi, r.Status, err)
			}
			ms, err := message.DecodeMessagesRaw(r.Messages)
			if err != nil {
				t.Fatal(err)
			}
			for k, mx := range ms {
				id := string(mx.Body[:min(len(mx.Body), 12)])
				a, ok := mayHave[id]
				switch {
				case refused[id]:
					t.Fatalf("%v at %d is %q, whose append was refused", q, r.QueueOffsets[k], id)
				case !ok:
					t.Fatalf("%v at %d is %q, never acknowledged", q, r.QueueOffsets[k], id)
				case seen[id]:
					t.Fatalf("%q is there twice (again at %v %d)", id, q, r.QueueOffsets[k])
				case a.q != q || a.off != r.QueueOffsets[k] || a.phys != mx.CommitLogOffset || a.sum != bodySum(mx.Body):
					t.Fatalf("%q acknowledged at %v %d (log %d) reads back at %v %d (log %d), same body %v",
						id, a.q, a.off, a.phys, q, r.QueueOffsets[k], mx.CommitLogOffset, a.sum == bodySum(mx.Body))
				}
				seen[id] = true
			}
			off = r.NextBeginOffset
		}
	}
	// Every acknowledged message is there, or a logged clean deleted it:
	// in its log slice and its queue's range.
	deleted := 0
	for id, a := range mustHave {
		if a.phys >= cut {
			if !seen[id] {
				t.Fatalf("acknowledged %q (%v %d, log %d) is gone; the logged forced cleans deleted up to %d", id, a.q, a.off, a.phys, cut)
			}
			continue
		}
		deleted++
		i, _ := slices.BinarySearchFunc(reports, a.phys, func(r diskReport, p int64) int {
			if r.To <= p {
				return -1
			}
			return 1
		})
		if r := reports[i].Queues[a.q]; a.phys < reports[i].From || a.off < r.Min || a.off >= r.Max {
			t.Fatalf("acknowledged %q (%v %d, log %d) deleted by forced clean %d [%d, %d), which named %v [%d, %d)",
				id, a.q, a.off, a.phys, i, reports[i].From, reports[i].To, a.q, r.Min, r.Max)
		}
	}
	if rep, err := s.Verify(); err != nil || rep.Orphans != 0 {
		t.Fatalf("verify: %+v %v", rep, err)
	}
	t.Logf("%d of %d acknowledged deleted by %d forced cleans, %d there", deleted, len(mustHave), len(reports), len(seen))
}
