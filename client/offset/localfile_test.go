package offset

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/runnelmq/runnel/client/queue"
)

var ctx = context.Background()

func open(t *testing.T, path string) *LocalFile {
	t.Helper()
	s, err := OpenLocalFile(path)
	if err != nil {
		t.Fatalf("OpenLocalFile: %v", err)
	}
	return s
}

func read(t *testing.T, s *LocalFile, mq queue.MessageQueue, rt ReadType) int64 {
	t.Helper()
	off, err := s.Read(ctx, mq, rt)
	if err != nil {
		t.Fatalf("Read(%v, %v): %v", mq, rt, err)
	}
	return off
}

func TestLocalFilePersistAndReload(t *testing.T) {
	path, err := LocalFilePath(t.TempDir(), "10.0.0.1@123", "group")
	if err != nil {
		t.Fatal(err)
	}
	s := open(t, path)
	if got := read(t, s, mqA, ReadMemoryThenStore); got != NoOffset {
		t.Fatalf("fresh store read %d", got)
	}
	s.Update(mqA, 10, false)
	s.Update(mqB, 20, false)
	s.Update(mqC, 30, false)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("file written before Persist: %v", err)
	}
	if err := s.Persist(ctx, []queue.MessageQueue{mqA, mqB}); err != nil {
		t.Fatal(err)
	}

	// A restart sees exactly what was persisted.
	r := open(t, path)
	for mq, want := range map[queue.MessageQueue]int64{mqA: 10, mqB: 20, mqC: NoOffset} {
		if got := read(t, r, mq, ReadFromMemory); got != want {
			t.Errorf("after reload %v = %d, want %d", mq, got, want)
		}
	}

	// Persisting a subset keeps the other entries of the file.
	s.Update(mqA, 11, true)
	if err := s.Persist(ctx, []queue.MessageQueue{mqA}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, open(t, path), mqB, ReadFromMemory); got != 20 {
		t.Fatalf("persisting mqA lost mqB: %d", got)
	}
	if got := read(t, open(t, path), mqA, ReadFromMemory); got != 11 {
		t.Fatalf("mqA = %d, want 11", got)
	}
	// The file is the documented, canonical JSON.
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), `"version": 1`) || strings.Index(string(data), `"queueId": 0`) > strings.Index(string(data), `"queueId": 1`) {
		t.Fatalf("unexpected file layout:\n%s", data)
	}
}

func TestLocalFileReadTypes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "offsets.json")
	s := open(t, path)
	s.Update(mqA, 5, false)
	if err := s.Persist(ctx, []queue.MessageQueue{mqA}); err != nil {
		t.Fatal(err)
	}
	s.Update(mqA, 9, false) // memory ahead of the file

	if got := read(t, s, mqA, ReadFromMemory); got != 9 {
		t.Fatalf("memory = %d, want 9", got)
	}
	if got := read(t, s, mqA, ReadMemoryThenStore); got != 9 {
		t.Fatalf("memory-then-store = %d, want 9", got)
	}
	if got := read(t, s, mqA, ReadFromStore); got != 5 {
		t.Fatalf("store = %d, want 5", got)
	}
	// Reading from the store also resets memory to it, as Java does.
	if got := read(t, s, mqA, ReadFromMemory); got != 5 {
		t.Fatalf("memory after store read = %d, want 5", got)
	}
	// Remove forgets memory only: memory-then-store falls back to the file.
	s.Update(mqA, 8, false)
	s.Remove(mqA)
	if got := read(t, s, mqA, ReadFromMemory); got != NoOffset {
		t.Fatalf("memory after Remove = %d", got)
	}
	if got := read(t, s, mqA, ReadMemoryThenStore); got != 5 {
		t.Fatalf("memory-then-store after Remove = %d, want the file's 5", got)
	}
	if got := read(t, s, mqB, ReadFromStore); got != NoOffset {
		t.Fatalf("unknown queue from store = %d", got)
	}
	if _, err := s.Read(ctx, mqA, ReadType(7)); !errors.Is(err, ErrBadReadType) {
		t.Fatalf("bad read type: %v", err)
	}
	if snap := s.Snapshot("T"); len(snap) != 1 || snap[mqA] != 5 {
		t.Fatalf("Snapshot = %v", snap)
	}
}

func TestLocalFileCorrupt(t *testing.T) {
	cases := map[string]string{
		"not json":        "{\"version\":1,\"offsets\":[{\"topic\":",
		"empty":           "",
		"wrong version":   `{"version":2,"offsets":[]}`,
		"negative offset": `{"version":1,"offsets":[{"topic":"T","brokerName":"b","queueId":0,"offset":-5}]}`,
		"duplicate":       `{"version":1,"offsets":[{"topic":"T","brokerName":"b","queueId":0,"offset":1},{"topic":"T","brokerName":"b","queueId":0,"offset":2}]}`,
		"unknown field":   `{"version":1,"offsetTable":{}}`,
		"trailing":        `{"version":1,"offsets":[]} {}`,
		"no broker":       `{"version":1,"offsets":[{"topic":"T","queueId":0,"offset":1}]}`,
	}
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "offsets.json")
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := OpenLocalFile(path)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) {
				t.Fatalf("OpenLocalFile on %s file: err = %v, want ErrCorrupt naming the path", name, err)
			}
		})
	}
	// A file corrupted after opening fails store reads loudly instead of
	// reporting "no offset" (which would restart from the consume-from
	// policy).
	path := filepath.Join(t.TempDir(), "offsets.json")
	s := open(t, path)
	os.WriteFile(path, []byte("garbage"), 0o644)
	if _, err := s.Read(ctx, mqA, ReadFromStore); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Read from corrupt store: %v", err)
	}
}

// persistedAt opens a store file in a new directory and persists offset
// for mqA in it.
func persistedAt(t *testing.T, offset int64) (s *LocalFile, dir, path string) {
	t.Helper()
	dir = t.TempDir()
	path = filepath.Join(dir, "offsets.json")
	s = open(t, path)
	s.Update(mqA, offset, false)
	if err := s.Persist(ctx, []queue.MessageQueue{mqA}); err != nil {
		t.Fatal(err)
	}
	return s, dir, path
}

// TestLocalFileCrashBeforeRename: a crash after the temporary file is
// written but before the rename leaves the old file valid; the next open
// loads the old offsets and removes the leftover temporary file.
func TestLocalFileCrashBeforeRename(t *testing.T) {
	s, dir, path := persistedAt(t, 100)
	old, _ := os.ReadFile(path)

	// Crash right before the rename. A real crash runs no cleanup, so the
	// hook keeps a copy of the synced temporary file under another
	// temporary name (the failed Persist removes the original).
	crash := errors.New("simulated crash")
	var leftover string
	s.beforeRename = func(tmp string) error {
		data, err := os.ReadFile(tmp)
		if err != nil {
			return err
		}
		leftover = tmp + "-crashed"
		if err := os.WriteFile(leftover, data, 0o644); err != nil {
			return err
		}
		return crash
	}
	s.Update(mqA, 200, false)
	if err := s.Persist(ctx, []queue.MessageQueue{mqA}); !errors.Is(err, crash) {
		t.Fatalf("Persist = %v, want the crash", err)
	}
	if data, err := os.ReadFile(leftover); err != nil || !strings.Contains(string(data), `"offset": 200`) {
		t.Fatalf("the crash should have left the new content in a temporary file: %q, %v", data, err)
	}
	if now, _ := os.ReadFile(path); string(now) != string(old) {
		t.Fatalf("file changed before rename:\n%s\nwant\n%s", now, old)
	}

	r := open(t, path)
	if got := read(t, r, mqA, ReadFromMemory); got != 100 {
		t.Fatalf("after crash, offset = %d, want the old 100", got)
	}
	temps, _ := filepath.Glob(filepath.Join(dir, "offsets.json.tmp-*"))
	if len(temps) != 0 {
		t.Fatalf("stale temporary files left after open: %v", temps)
	}
	// And the store works normally afterwards.
	r.Update(mqA, 300, false)
	if err := r.Persist(ctx, []queue.MessageQueue{mqA}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, open(t, path), mqA, ReadFromMemory); got != 300 {
		t.Fatalf("after recovery persist: %d", got)
	}
}

// TestLocalFileFailedWriteCleansUp: a write that fails (not a crash) leaves
// the old file and no temporary file, and the in-memory view of the file is
// unchanged, so the next Persist retries.
func TestLocalFileFailedWriteCleansUp(t *testing.T) {
	s, dir, path := persistedAt(t, 1)
	s.beforeRename = func(string) error { return errors.New("disk gone") }
	s.Update(mqA, 2, false)
	if err := s.Persist(ctx, []queue.MessageQueue{mqA}); err == nil {
		t.Fatal("failed write reported success")
	}
	if temps, _ := filepath.Glob(filepath.Join(dir, "offsets.json.tmp-*")); len(temps) != 0 {
		t.Fatalf("temporary files left: %v", temps)
	}
	s.beforeRename = nil
	if err := s.Persist(ctx, []queue.MessageQueue{mqA}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, open(t, path), mqA, ReadFromMemory); got != 2 {
		t.Fatalf("retry did not write: %d", got)
	}
}

func TestLocalFilePersistEdgeCases(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "offsets.json")
	s := open(t, path)
	// Nothing to persist: no file, no directory.
	if err := s.Persist(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Persist(ctx, []queue.MessageQueue{mqA}); err != nil { // no offset in memory
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(path)); !os.IsNotExist(err) {
		t.Fatalf("Persist without offsets created files: %v", err)
	}
	s.Update(mqA, 4, false)
	if err := s.Persist(ctx, []queue.MessageQueue{mqA}); err != nil {
		t.Fatal(err)
	}
	info1, _ := os.Stat(path)
	// Unchanged offsets: the file is not rewritten (no fsync every 5 s).
	s.beforeRename = func(string) error { t.Fatal("rewrote an unchanged file"); return nil }
	if err := s.Persist(ctx, []queue.MessageQueue{mqA}); err != nil {
		t.Fatal(err)
	}
	s.beforeRename = nil
	info2, _ := os.Stat(path)
	if !info1.ModTime().Equal(info2.ModTime()) {
		t.Fatal("file touched")
	}
	if got := s.persistedQueues(); !slices.Equal(got, []queue.MessageQueue{mqA}) {
		t.Fatalf("persisted = %v", got)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.Persist(cancelled, []queue.MessageQueue{mqA}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Persist with cancelled ctx = %v", err)
	}
}

func TestLocalFilePath(t *testing.T) {
	got, err := LocalFilePath("/r", "10.0.0.1@7", "g")
	if err != nil || got != filepath.Join("/r", "10.0.0.1@7", "g", LocalFileName) {
		t.Fatalf("LocalFilePath = %q, %v", got, err)
	}
	for _, bad := range [][2]string{{"", "g"}, {"c", ""}, {"..", "g"}, {"c", "a/b"}, {`a\b`, "g"}} {
		if _, err := LocalFilePath("/r", bad[0], bad[1]); err == nil {
			t.Errorf("LocalFilePath(%q, %q) accepted", bad[0], bad[1])
		}
	}
	if _, err := OpenLocalFile(""); err == nil {
		t.Error("empty path accepted")
	}
}
