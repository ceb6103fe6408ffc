package store

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/runnelmq/runnel/internal/fakeclock"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store/consumequeue"
	"github.com/runnelmq/runnel/store/faultfs"
)

// openFault opens a store on a faultfs of 1 GiB used at pct, with a fast
// disk check; onFull records the store's disk-state calls.
func openFault(t *testing.T, pct int, onFull *atomic.Int32) (*Store, *faultfs.FS, Options) {
	t.Helper()
	fs := faultfs.New(vfs.NewMem(), 1<<30, pct)
	o := memOptions(fs, fakeclock.New(t0))
	o.DiskCheckInterval = 5 * time.Millisecond
	o.FileReservedTime = -1
	if onFull != nil {
		o.OnDiskFull = func(full bool) {
			if full {
				onFull.Add(1)
			} else {
				onFull.Add(-1)
			}
		}
	}
	s, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	return s, fs, o
}

// TestDiskFullRefusesAppendsAndResumes: above diskSpaceWarningLevelRatio
// appends are refused before any write fails, reads and offset commits go
// on, and appends resume by themselves when space returns.
func TestDiskFullRefusesAppendsAndResumes(t *testing.T) {
	var state atomic.Int32
	s, fs, _ := openFault(t, 50, &state)
	defer func() { _ = s.Close() }()
	mustPut(t, s, msg("T", 0, "before"))

	fs.SetUsage(91)
	testwait.For(t, testwait.Default, "the disk check to see 91%", func() bool { return s.Writable() != nil })
	if _, err := s.Put(msgsN("T", 1)); !errors.Is(err, ErrDiskFull) || !strings.Contains(err.Error(), "91.0% used") {
		t.Fatalf("Put on a full disk: %v, want ErrDiskFull with the usage", err)
	}
	if _, err := s.AppendOp(msgsN("T", 1)); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("AppendOp on a full disk: %v", err)
	}
	// The disk check flips the state that Writable reads before it calls
	// OnDiskFull (after a log line), so the call can come a moment after
	// the refusal is seen: waited for, not read once (it flaked under load).
	testwait.For(t, testwait.Default, "OnDiskFull(true)", func() bool { return state.Load() != 0 })
	if state.Load() != 1 {
		t.Fatalf("OnDiskFull state %d, want 1 (told full once)", state.Load())
	}
	if fs.Failed.Load() != 0 {
		t.Fatal("a write reached the disk's ENOSPC; the refusal must come first")
	}
	// Reads and offset commits keep working.
	r, err := s.Get("T", 0, 0, 32, 1<<20, nil)
	if err != nil || r.Count != 1 {
		t.Fatalf("Get while full: %v, %+v", err, r)
	}
	if err := s.CommitOffset("g", "T", 0, 1); err != nil {
		t.Fatalf("CommitOffset while full: %v", err)
	}

	fs.SetUsage(60)
	testwait.For(t, testwait.Default, "appends to resume", func() bool { return s.Writable() == nil })
	mustPut(t, s, msg("T", 0, "after"))
	if got := s.MaxOffset("T", 0); got != 2 {
		t.Fatalf("max offset %d, want 2", got)
	}
	testwait.For(t, testwait.Default, "OnDiskFull(false)", func() bool { return state.Load() != 1 }) // as above
	if state.Load() != 0 {
		t.Fatalf("OnDiskFull state %d, want 0 (told writable again)", state.Load())
	}
}

// TestDiskForceClean: above diskSpaceCleanForciblyRatio retention deletes
// the oldest log although nothing expired (FileReservedTime forever).
func TestDiskForceClean(t *testing.T) {
	s, fs, _ := openFault(t, 50, nil)
	defer func() { _ = s.Close() }()
	for i := 0; i < 40; i++ {
		mustPut(t, s, msg("T", 0, strings.Repeat("x", 64<<10)))
	}
	time.Sleep(50 * time.Millisecond) // several disk checks below the ratios
	if s.MinPhysOffset() != 0 {
		t.Fatal("retention deleted log below diskMaxUsedSpaceRatio with nothing expired")
	}
	fs.SetUsage(87)
	testwait.For(t, testwait.Default, "a forced clean", func() bool { return s.MinOffset("T", 0) > 0 })
	if err := s.Writable(); err != nil {
		t.Fatalf("writable at 87%%: %v", err)
	}
	if s.MaxOffset("T", 0) != 40 {
		t.Fatal("forced clean lost the newest messages")
	}
}

// TestDiskForceCleanOneSlicePerCheck: a disk check above
// diskSpaceCleanForciblyRatio deletes one slice, the oldest tenth of the log
// as it was at the check (before, the log was cut step after step down to
// its last ten steps); it frees what it deleted (excised), so the space comes back
// and the usage read after it is what the next check acts on: once below
// the ratio, nothing more goes.
func TestDiskForceCleanOneSlicePerCheck(t *testing.T) {
	defer func(old int64) { truncateStep = old }(truncateStep)
	truncateStep = 16 << 10 // a slice takes several truncations
	fs := faultfs.New(vfs.NewMem(), 1<<30, 50)
	o := memOptions(fs, fakeclock.New(t0))
	o.DiskCheckInterval = -1 // the test runs the checks
	o.FileReservedTime = -1
	var reports []ForcedClean
	o.OnForcedClean = func(fc ForcedClean) { reports = append(reports, fc) } // the test's goroutine runs the checks
	s := mustOpen(t, o)
	const n, size = 100, 16 << 10
	fillLog(t, s, n, size, 2)
	tables := func() int64 { return logTableBytes(t, s) }
	full := tables()
	// The disk is above the ratio while the log holds more than 85% of
	// what it held: two slices' worth.
	fs.SetUsageFunc(func() int {
		if tables() > full*85/100 {
			return 87
		}
		return 60
	})
	check := func(what string) (deleted int64) {
		t.Helper()
		lo, hi := s.MinPhysOffset(), s.MaxPhysOffset()
		s.watchDisk()
		deleted = s.MinPhysOffset() - lo
		if slice := (hi-lo)/10 + 2*size; deleted > slice {
			t.Fatalf("%s: deleted %d bytes of a %d-byte log, more than one slice (%d)", what, deleted, hi-lo, slice)
		}
		return deleted
	}
	for i := 1; i <= 2; i++ {
		before, lo, qmin := tables(), s.MinPhysOffset(), s.MinOffset("T", 0)
		if check(fmt.Sprint("forced check ", i)) == 0 {
			t.Fatalf("forced check %d at 87%% deleted nothing", i)
		}
		want := ForcedClean{From: lo, To: s.MinPhysOffset(),
			Queues: map[QueueID]consumequeue.Range{{Topic: "T", ID: 0}: {Min: qmin, Max: s.MinOffset("T", 0)}}}
		if len(reports) != i || !reflect.DeepEqual(reports[i-1], want) {
			t.Fatalf("forced check %d: reports %+v, want the %dth %+v", i, reports, i, want)
		}
		// Pebble deletes the excised tables' files in the background.
		testwait.For(t, testwait.Default, fmt.Sprintf("forced check %d's tables deleted (%d bytes before)", i, before),
			func() bool { return tables() < before-int64(size) })
	}
	// Pebble deletes the rest of the excised tables in the background too.
	testwait.For(t, testwait.Default, "usage back to 60% after the second forced clean", func() bool {
		s.checkDiskShared()
		pct, _ := s.DiskUsage()
		return pct <= 61
	})
	if d := check("check below the ratio"); d != 0 || len(reports) != 2 {
		t.Fatalf("a check at 60%% deleted %d bytes with nothing expired (%d forced cleans reported)", d, len(reports))
	}
	if s.MaxOffset("T", 0) != n || s.MinOffset("T", 0) > n/4 {
		t.Fatalf("queue [%d, %d), want the newest three quarters or more kept", s.MinOffset("T", 0), s.MaxOffset("T", 0))
	}
}

// TestDiskForceCleanProposed: with ProposedRetention (a replica) the disk
// check deletes nothing itself, so replicas cannot cut their logs apart;
// it chooses the slice, which RetentionOp then proposes, once.
func TestDiskForceCleanProposed(t *testing.T) {
	fs := faultfs.New(vfs.NewMem(), 1<<30, 87)
	o := memOptions(fs, fakeclock.New(t0))
	o.DiskCheckInterval = -1
	o.FileReservedTime = -1
	o.ProposedRetention = true
	s := mustOpen(t, o)
	fillLog(t, s, 40, 64<<10, 4)
	s.watchDisk()
	if s.MinPhysOffset() != 0 {
		t.Fatalf("the disk check of a store whose retention is proposed deleted the log below %d", s.MinPhysOffset())
	}
	op, _, err := s.RetentionOp(t0)
	if err != nil || op == nil {
		t.Fatalf("RetentionOp above the forced ratio: %v, %v", op, err)
	}
	if op.Cutoff != s.forceCut.Load() || op.Cutoff > s.MaxPhysOffset()/10+truncateStep+(64<<10) {
		t.Fatalf("proposed cut %d, forced slice %d of a %d-byte log", op.Cutoff, s.forceCut.Load(), s.MaxPhysOffset())
	}
	// Applied (as raft applies it), it is freed by the next check.
	if _, err := s.Apply(op); err != nil {
		t.Fatal(err)
	}
	tables := func() int64 { return logTableBytes(t, s) }
	before := tables()
	s.watchDisk()
	testwait.For(t, testwait.Default, fmt.Sprintf("half the %d bytes truncated freed from %d bytes of tables", op.Cutoff, before),
		func() bool { return tables() <= before-op.Cutoff/2 })
}

// fillLog appends n incompressible messages of size bytes (so tables
// measure the log) and flushes the log every `every` of them: the log is in
// tables of that many, as a busy log is in flushes, and a forced clean
// frees the tables wholly below its cut (see freeLog).
func fillLog(t *testing.T, s *Store, n, size, every int) {
	t.Helper()
	rng := rand.NewChaCha8([32]byte{})
	for i := 1; i <= n; i++ {
		body := make([]byte, size)
		_, _ = rng.Read(body)
		mustPut(t, s, msg("T", 0, string(body)))
		if i%every == 0 || i == n {
			if err := s.log.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// logTableBytes is the size of the log's table files on disk: what forced
// cleaning frees (a narrowed table keeps its file).
func logTableBytes(t testing.TB, s *Store) int64 {
	t.Helper()
	dir := s.opts.FS.PathJoin(s.opts.Dir, "log")
	names, err := s.opts.FS.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, name := range names {
		if strings.HasSuffix(name, ".sst") {
			if st, err := s.opts.FS.Stat(s.opts.FS.PathJoin(dir, name)); err == nil {
				n += st.Size()
			}
		}
	}
	return n
}

// TestDiskRefusesBeforeFullBetweenChecks: with no periodic check and
// batches under largePut, the bytes appended since the last statfs
// (writeAmp times over) make the store read the usage again, so appends
// are refused at the warning ratio, not when the disk is already full.
func TestDiskRefusesBeforeFullBetweenChecks(t *testing.T) {
	const total = 64 << 20
	fs := faultfs.New(vfs.NewMem(), total, 80)
	o := memOptions(fs, fakeclock.New(t0))
	o.DiskCheckInterval = -1 // only Open's read and the puts' own
	s := mustOpen(t, o)
	// A disk at 80% that fills at twice the log's bytes, as Pebble's WAL
	// and tables do.
	usage := func() int { return 80 + int(s.MaxPhysOffset()*writeAmp*100/total) }
	fs.SetUsageFunc(usage)
	body := strings.Repeat("x", 4<<10)
	for {
		if u := usage(); u >= 100 {
			t.Fatalf("the disk reached %d%% and appends were never refused", u)
		}
		_, err := s.Put([]*message.MessageExt{msg("T", 0, body)})
		if errors.Is(err, ErrDiskFull) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if u := usage(); u > 91 {
		t.Fatalf("appends refused at %d%%, want at the warning ratio (90%%)", u)
	}
}

// TestDiskCountsUnflushedLog: the log still in its memtables counts as
// used. It lands on disk at the flush, a memtable at once, while the
// write-ahead log it went to is a recycled file statfs already counted:
// read alone, statfs stayed at 80% here and appends were never refused
// (TestDiskModel's small disk read 100%). Usage that refuses appends is
// also above the forced-clean ratio, so the disk check frees room even
// though the memtable is not full and would not be flushed by itself.
func TestDiskCountsUnflushedLog(t *testing.T) {
	const total = 16 << 20
	fs := faultfs.New(vfs.NewMem(), total, 80) // statfs: 80%, whatever is appended
	o := memOptions(fs, fakeclock.New(t0))     // 4 MiB memtables: nothing flushes below
	o.DiskCheckInterval = -1
	o.MinOpenFreeBytes = -1 // a disk this small has not the room Open asks for
	o.FileReservedTime = -1
	s := mustOpen(t, o)
	body := strings.Repeat("x", 64<<10)
	for {
		_, err := s.Put([]*message.MessageExt{msg("T", 0, body)})
		if errors.Is(err, ErrDiskFull) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if s.MaxPhysOffset() > 3<<20 {
			t.Fatalf("%d bytes appended on a disk at 80%% of %d and not refused", s.MaxPhysOffset(), total)
		}
	}
	// Refused at 90%: 80% and a tenth of the disk appended (a record over).
	if got, want := s.MaxPhysOffset(), int64(total/10); got > want+70<<10 {
		t.Fatalf("refused after %d bytes appended, want about %d", got, want)
	}
	s.watchDisk()
	if s.MinPhysOffset() == 0 {
		t.Fatal("the disk check above the forced-clean ratio deleted nothing")
	}
	if err := s.Writable(); err != nil {
		t.Fatalf("after the forced clean (its excise flushed the memtable): %v", err)
	}
}

// TestWriteENOSPC: a write that does hit ENOSPC latches the store with a
// reason naming it, Close returns without a panic, and a reopen on a disk
// with space has every acknowledged message.
func TestWriteENOSPC(t *testing.T) {
	s, fs, o := openFault(t, 50, nil)
	o.FS = fs
	acked := 0
	for i := 0; i < 100; i++ {
		mustPut(t, s, msg("T", 0, fmt.Sprint(i)))
		acked++
	}
	if err := s.CommitOffset("g", "T", 0, 7); err != nil {
		t.Fatal(err)
	}
	fs.FailWrites(true)
	var err error
	for i := 0; i < 1000 && err == nil; i++ { // the WAL block fills
		if _, err = s.Put(msgsN("T", 8)); err == nil {
			acked += 8
		}
	}
	if !errors.Is(err, ErrFailed) || !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "restarted") {
		t.Fatalf("Put on ENOSPC: %v, want ErrFailed with ENOSPC and what to do", err)
	}
	if _, err := s.Put(msgsN("T", 1)); !errors.Is(err, ErrFailed) {
		t.Fatalf("second Put: %v", err)
	}
	if s.Writable() == nil {
		t.Fatal("a failed store says it is writable")
	}
	// Only the log failed: an offset commit still goes through (into the
	// other database's WAL; the disk has room for it again).
	fs.FailWrites(false)
	if err := s.CommitOffset("g", "T", 0, 9); err != nil {
		t.Fatalf("CommitOffset after the log failed: %v", err)
	}
	// Still full at Close: it may say what it could not write (the WAL
	// trailers) but must not panic in a flush.
	fs.FailWrites(true)
	t.Logf("Close on a full disk: %v", s.Close())
	fs.FailWrites(false)
	s, err = Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	if got := s.MaxOffset("T", 0); got < int64(acked) {
		t.Fatalf("after reopen max offset %d, %d were acknowledged", got, acked)
	}
	if off, ok, err := s.ConsumerOffset("g", "T", 0); err != nil || !ok || off != 9 {
		t.Fatalf("offset after reopen %d %v %v", off, ok, err)
	}
	mustPut(t, s, msg("T", 0, "again"))
}

// TestSyncCommitENOSPC: a write that waits for its own sync (here a
// truncation's side beside the log, made durable before the log goes) and
// hits ENOSPC is an error that latches the store. Committed through
// Pebble's Apply(Sync) it was Pebble's "fatal commit error", which exits
// the process: a broker gone without a word, and in a test binary a FAIL
// naming no test (a test binary that dies this way prints only the
// ENOSPC line).
func TestSyncCommitENOSPC(t *testing.T) {
	s, fs, _ := openFault(t, 50, nil)
	defer func() { _ = s.Close() }()
	var r []PutResult
	for i := 0; i < 100; i++ {
		r = append(r, mustPut(t, s, msg("T", 0, fmt.Sprint(i)))...)
	}
	fs.FailWrites(true)
	_, err := s.Apply(&Op{Kind: OpTruncate, Cutoff: r[50].CommitLogOffset})
	fs.FailWrites(false)
	if !errors.Is(err, ErrFailed) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("truncate on ENOSPC: %v, want ErrFailed with ENOSPC", err)
	}
	if s.Writable() == nil {
		t.Fatal("a failed store says it is writable")
	}
}

// TestOpenFullDisk: a store on a disk without room to recover fails at
// once with one clear error.
func TestOpenFullDisk(t *testing.T) {
	fs := faultfs.New(vfs.NewMem(), 1<<30, 100)
	o := memOptions(fs, fakeclock.New(t0))
	start := time.Now()
	_, err := Open(o)
	if !errors.Is(err, ErrDiskFull) || !strings.Contains(err.Error(), "free space") {
		t.Fatalf("Open on a full disk: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Open took %v", d)
	}
}

func msgsN(topic string, n int) []*message.MessageExt {
	out := make([]*message.MessageExt, n)
	for i := range out {
		out[i] = msg(topic, 0, fmt.Sprint("m", i))
	}
	return out
}
