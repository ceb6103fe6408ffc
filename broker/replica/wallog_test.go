package replica

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	walfs "github.com/hashicorp/raft-wal/fs"
	"github.com/hashicorp/raft-wal/types"
)

// entries are raft log entries first..last of term 2, each with data that
// names its index.
func entries(first, last uint64) []*raft.Log {
	at := time.Unix(1_700_000_000, 5)
	var logs []*raft.Log
	for i := first; i <= last; i++ {
		logs = append(logs, &raft.Log{Index: i, Term: 2, Type: raft.LogCommand, Data: bytes.Repeat([]byte{byte(i)}, 100+int(i)),
			Extensions: []byte("x"), AppendedAt: at})
	}
	return logs
}

// checkLog fails t unless the log holds exactly first..last as entries
// wrote them, with term 7 and vote "n1".
func checkLog(t *testing.T, l raft.LogStore, st raft.StableStore, first, last uint64) {
	t.Helper()
	f, _ := l.FirstIndex()
	la, _ := l.LastIndex()
	if f != first || la != last {
		t.Fatalf("index range %d..%d, want %d..%d", f, la, first, last)
	}
	var got raft.Log
	if first > 1 {
		if err := l.GetLog(first-1, &got); !errors.Is(err, raft.ErrLogNotFound) {
			t.Fatalf("deleted entry %d: %v", first-1, err)
		}
	}
	for _, want := range entries(first, last) {
		if err := l.GetLog(want.Index, &got); err != nil {
			t.Fatalf("entry %d: %v", want.Index, err)
		}
		if got.Index != want.Index || got.Term != want.Term || got.Type != want.Type || !bytes.Equal(got.Data, want.Data) ||
			!bytes.Equal(got.Extensions, want.Extensions) || !got.AppendedAt.Equal(want.AppendedAt) {
			t.Fatalf("entry %d read back as %+v", want.Index, got)
		}
	}
	if term, err := st.GetUint64([]byte("CurrentTerm")); err != nil || term != 7 {
		t.Fatalf("term %d, %v; want 7", term, err)
	}
	if v, err := st.Get([]byte("LastVoteCand")); err != nil || string(v) != "n1" {
		t.Fatalf("vote %q, %v; want n1", v, err)
	}
}

// fill stores entries 1..100, deletes 1..10 as a snapshot's compaction
// does and a tail as a follower's conflict does (raft-wal v0.4.0 then
// sealed the tail's segment without its index, and after a reopen its
// entries could not be read), and sets term and vote.
func fill(t *testing.T, l raft.LogStore, st raft.StableStore) {
	t.Helper()
	if err := l.StoreLogs(entries(1, 60)); err != nil {
		t.Fatal(err)
	}
	if err := l.StoreLogs(entries(61, 105)); err != nil {
		t.Fatal(err)
	}
	if err := l.DeleteRange(1, 10); err != nil {
		t.Fatal(err)
	}
	if err := l.DeleteRange(101, 105); err != nil {
		t.Fatal(err)
	}
	if err := st.SetUint64([]byte("CurrentTerm"), 7); err != nil {
		t.Fatal(err)
	}
	if err := st.Set([]byte("LastVoteCand"), []byte("n1")); err != nil {
		t.Fatal(err)
	}
}

// The raft log keeps entries, its first and last index, a head deletion
// and term and vote across a reopen, in each durability mode.
func TestRaftLogKeepsWhatItStored(t *testing.T) {
	for name, mode := range map[string]struct {
		noSync bool
		every  time.Duration
	}{"sync": {}, "deferred": {every: time.Hour}, "nosync": {noSync: true}} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			l, err := openRaftLog(dir, mode.noSync, mode.every, hclog.NewNullLogger(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if f, _ := l.FirstIndex(); f != 0 {
				t.Fatalf("empty log's first index %d", f)
			}
			fill(t, l, l)
			checkLog(t, l, l, 11, 100)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			if l, err = openRaftLog(dir, mode.noSync, mode.every, hclog.NewNullLogger(), nil); err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			checkLog(t, l, l, 11, 100)
		})
	}
}

// With its fsyncs deferred (ASYNC_FLUSH), the raft log keeps what it
// stored through a process crash: the files as the page cache holds them,
// copied while the log is open and owes its fsyncs, open with every entry.
func TestRaftLogSurvivesAProcessCrash(t *testing.T) {
	dir := t.TempDir()
	l, err := openRaftLog(dir, false, time.Hour, hclog.NewNullLogger(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	fill(t, l, l)
	// fill's head deletion committed a segment list, which fsynced what was
	// written before it; these are owed.
	if err := l.StoreLogs(entries(101, 120)); err != nil {
		t.Fatal(err)
	}
	if owed := len(l.fs.dirty); owed == 0 {
		t.Fatal("no fsync owed: the test's premise (deferred fsyncs) does not hold")
	}
	crashed := t.TempDir()
	copyDir(t, filepath.Join(dir, walDir), filepath.Join(crashed, walDir))
	after, err := openRaftLog(crashed, false, 0, hclog.NewNullLogger(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer after.Close()
	checkLog(t, after, after, 11, 120)
	l.syncSegments()
	if owed := len(l.fs.dirty); owed != 0 {
		t.Fatalf("%d files still owe an fsync after the flusher ran", owed)
	}
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.CopyFS(to, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
}

// recordingFS is raft-wal's file system that remembers which files were
// written since their last fsync, and can fail writes as a full disk does.
type recordingFS struct {
	types.VFS
	mu      sync.Mutex
	unsyncd map[string]bool
	syncs   int
	fail    bool
}

func newRecordingFS() *recordingFS {
	return &recordingFS{VFS: walfs.New(), unsyncd: map[string]bool{}}
}

func (fs *recordingFS) Create(dir, name string, size uint64) (types.WritableFile, error) {
	f, err := fs.VFS.Create(dir, name, size)
	return &recordingFile{WritableFile: f, fs: fs, name: name}, err
}

func (fs *recordingFS) OpenWriter(dir, name string) (types.WritableFile, error) {
	f, err := fs.VFS.OpenWriter(dir, name)
	return &recordingFile{WritableFile: f, fs: fs, name: name}, err
}

// owing is the files written since their last fsync.
func (fs *recordingFS) owing() []string {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	var names []string
	for n, u := range fs.unsyncd {
		if u {
			names = append(names, n)
		}
	}
	return names
}

type recordingFile struct {
	types.WritableFile
	fs   *recordingFS
	name string
}

func (f *recordingFile) WriteAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	fail := f.fs.fail
	if !fail {
		f.fs.unsyncd[f.name] = true
	}
	f.fs.mu.Unlock()
	if fail {
		return 0, &os.PathError{Op: "write", Path: f.name, Err: syscall.ENOSPC}
	}
	return f.WritableFile.WriteAt(p, off)
}

func (f *recordingFile) Sync() error {
	f.fs.mu.Lock()
	f.fs.unsyncd[f.name] = false
	f.fs.syncs++
	f.fs.mu.Unlock()
	return f.WritableFile.Sync()
}

var _ io.WriterAt = (*recordingFile)(nil)

// With its fsyncs deferred, the raft log still commits a new segment list
// (a segment sealed, a new one started) only after every segment write it
// may describe is fsynced: an OS crash can lose the last interval's
// entries, never leave a list that names what is not on disk.
func TestRaftLogSyncsSegmentsBeforeItsList(t *testing.T) {
	rec := newRecordingFS()
	fs := newDeferFS(rec, false, true)
	commits := 0
	hook := func() {
		commits++
		if owing := rec.owing(); len(owing) > 0 {
			t.Errorf("the segment list was committed with %v written and not fsynced", owing)
		}
	}
	l, err := openWALSized(t.TempDir(), fs, time.Hour, 64<<10, hook)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i := uint64(1); i <= 1000; i += 20 {
		if err := l.StoreLogs(entries(i, i+19)); err != nil {
			t.Fatal(err)
		}
	}
	// 1,000 entries of 100-1,100 bytes fill several 64 KiB segments.
	if commits < 3 {
		t.Fatalf("%d segment lists committed, want the rolls of several segments", commits)
	}
	if len(rec.owing()) == 0 {
		t.Fatal("nothing owed an fsync at the end: the test's premise (deferred fsyncs) does not hold")
	}
}

// A failed raft log write is an error raft is handed, the node is told
// once, and every later write fails alike (raft-wal's writer may hold what
// it did not write); reopened, the log holds what was stored before.
func TestRaftLogWriteFailureLatches(t *testing.T) {
	dir := t.TempDir()
	rec := newRecordingFS()
	var told []error
	l, err := openWAL(filepath.Join(dir, walDir), newDeferFS(rec, false, false), 0, hclog.NewNullLogger(), func(err error) { told = append(told, err) })
	if err != nil {
		t.Fatal(err)
	}
	if err := l.StoreLogs(entries(1, 10)); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	rec.fail = true
	rec.mu.Unlock()
	if err := l.StoreLogs(entries(11, 12)); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("a write on a full disk: %v, want ENOSPC", err)
	}
	rec.mu.Lock()
	rec.fail = false
	rec.mu.Unlock()
	for what, err := range map[string]error{"StoreLogs": l.StoreLogs(entries(11, 12)), "DeleteRange": l.DeleteRange(1, 2)} {
		if !errors.Is(err, syscall.ENOSPC) {
			t.Errorf("%s after a failed write: %v, want the first failure", what, err)
		}
	}
	if len(told) != 1 {
		t.Fatalf("the node was told %d times, want once: %v", len(told), told)
	}
	_ = l.Close()
	if l, err = openRaftLog(dir, false, 0, hclog.NewNullLogger(), nil); err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if last, err := l.LastIndex(); err != nil || last != 10 {
		t.Fatalf("reopened, the log ends at %d, %v; want 10", last, err)
	}
	if err := l.StoreLogs(entries(11, 12)); err != nil {
		t.Fatalf("reopened, a write: %v", err)
	}
}

// A node whose raft log an earlier build kept in Pebble finds it moved to
// raft-wal at its first start: entries, first index, term and vote; the
// Pebble log and an earlier interrupted move's leftovers are gone, and a
// crash after the move's rename only leaves the old log to delete.
func TestRaftLogMovesAPebbleLog(t *testing.T) {
	dir := t.TempDir()
	old, err := openLogStore(filepath.Join(dir, pebbleLogDir), vfs.Default)
	if err != nil {
		t.Fatal(err)
	}
	fill(t, old, old)
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	// An earlier move that crashed before its rename.
	if err := os.MkdirAll(filepath.Join(dir, walDir+".tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, walDir+".tmp", "wal-meta.db"), []byte("torn"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := openRaftLog(dir, false, 0, hclog.NewNullLogger(), nil)
	if err != nil {
		t.Fatal(err)
	}
	checkLog(t, l, l, 11, 100)
	if err := l.StoreLogs(entries(101, 101)); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{pebbleLogDir, walDir + ".tmp"} {
		if _, err := os.Stat(filepath.Join(dir, gone)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s after the move: %v, want it gone", gone, err)
		}
	}
	// A crash after the rename, before the old log was deleted: the old
	// log (here an empty one) is deleted, not moved over the new.
	stale, err := openLogStore(filepath.Join(dir, pebbleLogDir), vfs.Default)
	if err != nil {
		t.Fatal(err)
	}
	_ = stale.Close()
	if l, err = openRaftLog(dir, false, 0, hclog.NewNullLogger(), nil); err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	checkLog(t, l, l, 11, 101)
	if _, err := os.Stat(filepath.Join(dir, pebbleLogDir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the stale Pebble log: %v, want it deleted", err)
	}
}

func openWALSized(dir string, fs *deferFS, syncEvery time.Duration, segmentSize int, beforeCommit func()) (*raftLog, error) {
	return openWALWith(dir, fs, syncEvery, hclog.NewNullLogger(), nil, walTuning{segmentSize: segmentSize, beforeCommit: beforeCommit})
}

// A raft log another holder has open is refused at once, not waited for:
// raft-wal's own open waits for its meta file's lock forever, so a second
// broker started on a node's directory would hang without a word.
func TestRaftLogInUseIsRefused(t *testing.T) {
	dir := t.TempDir()
	l, err := openRaftLog(dir, true, 0, hclog.NewNullLogger(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.StoreLogs(entries(1, 1)); err != nil {
		t.Fatal(err)
	}
	if second, err := openRaftLog(dir, true, 0, hclog.NewNullLogger(), nil); !errors.Is(err, ErrInUse) {
		if err == nil {
			_ = second.Close()
		}
		t.Fatalf("a second open of a log in use: %v, want ErrInUse", err)
	}
}

// A second node started on a running node's directory (a second broker on
// its store) is refused with ErrInUse, and the running node keeps its
// store: the refusal comes before a start deletes an earlier run's stores.
func TestNodeDirectoryInUseIsRefused(t *testing.T) {
	g := newGroup(t, 1, nil)
	l := g.node(g.leader())
	ctx, cancel := proposeCtx()
	defer cancel()
	if _, err := l.Propose(ctx, appendOp(t, l, testMessage("T", 0, "kept"))); err != nil {
		t.Fatal(err)
	}
	cfg := g.config(0)
	cfg.Transport = g.net.Transport(0)
	if second, err := New(cfg); !errors.Is(err, ErrInUse) {
		if err == nil {
			_ = second.Shutdown()
		}
		t.Fatalf("a second node on the directory: %v, want ErrInUse", err)
	}
	if b := bodies(t, l.Store()); len(b) != 1 {
		t.Fatalf("the running node holds %d messages after the refused start, want 1", len(b))
	}
	if _, err := os.Stat(filepath.Join(cfg.Dir, "store-1")); err != nil {
		t.Fatalf("the running node's store directory after the refused start: %v", err)
	}
}

// A segment closed while a flusher has taken it from the owed set but not
// yet fsynced it is fsynced by Close: what a file owes is its own flag,
// not its place in the set, so neither side skips the fsync.
func TestDeferredFsyncOwedAtClose(t *testing.T) {
	rec := newRecordingFS()
	fs := newDeferFS(rec, false, true)
	w, err := fs.Create(t.TempDir(), "seg", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteAt([]byte("entry"), 0); err != nil {
		t.Fatal(err)
	}
	if err := w.Sync(); err != nil || len(rec.owing()) != 1 {
		t.Fatalf("a deferred Sync: %v, %v owing; want the write owed", err, rec.owing())
	}
	fs.mu.Lock()
	clear(fs.dirty) // a flusher's syncAll took it, and has not fsynced it yet
	fs.mu.Unlock()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if owing := rec.owing(); len(owing) != 0 {
		t.Fatalf("closed with %v written and never fsynced", owing)
	}
	if err := fs.syncAll(); err != nil {
		t.Fatalf("the flusher after Close: %v", err)
	}
}
