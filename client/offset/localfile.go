package offset

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/runnelmq/runnel/client/queue"
)

// LocalFileName is the file name under <root>/<clientID>/<group>/, as Java's
// LocalFileOffsetStore names it.
const LocalFileName = "offsets.json"

// ErrCorrupt means the offset file exists but cannot be understood; the
// wrapping error names the file and the problem. The store refuses to start
// rather than silently re-consume or skip messages.
var ErrCorrupt = errors.New("offset: corrupt offset file")

// DefaultLocalRoot is Java's default directory for local offset files,
// $HOME/.rocketmq_offsets.
func DefaultLocalRoot() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("offset: no home directory for the default offset root: %w", err)
	}
	return filepath.Join(home, ".rocketmq_offsets"), nil
}

// LocalFilePath returns <root>/<clientID>/<group>/offsets.json, refusing ids
// that would escape root.
func LocalFilePath(root, clientID, group string) (string, error) {
	for name, v := range map[string]string{"client id": clientID, "consumer group": group} {
		if v == "" || v == "." || v == ".." || strings.ContainsAny(v, `/\`) || strings.ContainsRune(v, 0) {
			return "", fmt.Errorf("offset: %s %q cannot be a directory name", name, v)
		}
	}
	return filepath.Join(root, clientID, group, LocalFileName), nil
}

// fileFormat is the JSON on disk; see the package doc.
type fileFormat struct {
	Version int         `json:"version"`
	Offsets []fileEntry `json:"offsets"`
}

type fileEntry struct {
	Topic      string `json:"topic"`
	BrokerName string `json:"brokerName"`
	QueueID    int32  `json:"queueId"`
	Offset     int64  `json:"offset"`
}

const fileVersion = 1

// LocalFile is the broadcasting-mode Store: offsets in memory, persisted to
// one JSON file. One LocalFile owns its file; two stores on the same path
// would overwrite each other's entries.
type LocalFile struct {
	path  string
	table Table

	// mu serializes file writes and guards onDisk, the offsets the file
	// holds, so that persisting some queues keeps the others' entries.
	mu     sync.Mutex
	onDisk map[queue.MessageQueue]int64

	// beforeRename, if set (tests only), runs after the temporary file is
	// written and synced, before it replaces the real one.
	beforeRename func(tmp string) error
}

var _ Store = (*LocalFile)(nil)

// OpenLocalFile opens the store at path, creating nothing until the first
// Persist, removes temporary files a crash left behind, and loads the
// offsets. A missing file is an empty store; a corrupt one is ErrCorrupt.
func OpenLocalFile(path string) (*LocalFile, error) {
	if path == "" {
		return nil, errors.New("offset: local offset file path is empty")
	}
	s := &LocalFile{path: path, onDisk: map[queue.MessageQueue]int64{}}
	if err := s.removeStaleTemps(); err != nil {
		return nil, err
	}
	if err := s.Load(context.Background()); err != nil {
		return nil, err
	}
	return s, nil
}

// Path returns the file's path.
func (s *LocalFile) Path() string { return s.path }

func (s *LocalFile) tempPattern() string { return filepath.Base(s.path) + ".tmp-*" }

func (s *LocalFile) removeStaleTemps() error {
	stale, err := filepath.Glob(filepath.Join(filepath.Dir(s.path), s.tempPattern()))
	if err != nil {
		return fmt.Errorf("offset: looking for stale temporary files of %s: %w", s.path, err)
	}
	for _, f := range stale {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("offset: removing stale temporary file: %w", err)
		}
	}
	return nil
}

// readFile returns the offsets in the file; none if it does not exist.
func (s *LocalFile) readFile() (map[queue.MessageQueue]int64, error) {
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[queue.MessageQueue]int64{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("offset: reading %s: %w", s.path, err)
	}
	return decodeFile(s.path, data)
}

func decodeFile(path string, data []byte) (map[queue.MessageQueue]int64, error) {
	corrupt := func(format string, args ...any) error {
		return fmt.Errorf("%w %s: %s", ErrCorrupt, path, fmt.Sprintf(format, args...))
	}
	var f fileFormat
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, corrupt("%v", err)
	}
	if dec.More() {
		return nil, corrupt("trailing data after the JSON object")
	}
	if f.Version != fileVersion {
		return nil, corrupt("version %d, want %d", f.Version, fileVersion)
	}
	out := make(map[queue.MessageQueue]int64, len(f.Offsets))
	for _, e := range f.Offsets {
		mq := queue.MessageQueue{Topic: e.Topic, BrokerName: e.BrokerName, QueueID: e.QueueID}
		switch {
		case e.Topic == "" || e.BrokerName == "" || e.QueueID < 0:
			return nil, corrupt("bad queue %v", mq)
		case e.Offset < 0:
			return nil, corrupt("negative offset %d for %v", e.Offset, mq)
		}
		if _, dup := out[mq]; dup {
			return nil, corrupt("%v listed twice", mq)
		}
		out[mq] = e.Offset
	}
	return out, nil
}

func encodeFile(offsets map[queue.MessageQueue]int64) ([]byte, error) {
	mqs := make([]queue.MessageQueue, 0, len(offsets))
	for mq := range offsets {
		mqs = append(mqs, mq)
	}
	queue.Sort(mqs)
	f := fileFormat{Version: fileVersion, Offsets: make([]fileEntry, 0, len(mqs))}
	for _, mq := range mqs {
		f.Offsets = append(f.Offsets, fileEntry{mq.Topic, mq.BrokerName, mq.QueueID, offsets[mq]})
	}
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("offset: encoding offsets: %w", err)
	}
	return append(data, '\n'), nil
}

// Load reads the file into memory, overwriting in-memory offsets of the
// queues it lists (Java's load).
func (s *LocalFile) Load(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("offset: load: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	onDisk, err := s.readFile()
	if err != nil {
		return err
	}
	s.onDisk = onDisk
	for mq, off := range onDisk {
		s.table.Update(mq, off, false)
	}
	return nil
}

// Update implements Store.
func (s *LocalFile) Update(mq queue.MessageQueue, offset int64, increaseOnly bool) {
	s.table.Update(mq, offset, increaseOnly)
}

// Read implements Store. ReadFromStore reads the file itself, so it sees
// what a restart would see.
func (s *LocalFile) Read(ctx context.Context, mq queue.MessageQueue, t ReadType) (int64, error) {
	switch t {
	case ReadFromMemory, ReadMemoryThenStore:
		if off, ok := s.table.Get(mq); ok {
			return off, nil
		}
		if t == ReadFromMemory {
			return NoOffset, nil
		}
	case ReadFromStore:
	default:
		return NoOffset, fmt.Errorf("%w: %d", ErrBadReadType, int(t))
	}
	if err := ctx.Err(); err != nil {
		return NoOffset, fmt.Errorf("offset: read %v: %w", mq, err)
	}
	s.mu.Lock()
	onDisk, err := s.readFile()
	s.mu.Unlock()
	if err != nil {
		return NoOffset, err
	}
	off, ok := onDisk[mq]
	if !ok {
		return NoOffset, nil
	}
	s.table.Update(mq, off, false)
	return off, nil
}

// Persist implements Store: the file keeps every entry it had and gets the
// in-memory offsets of mqs. With no mqs it does nothing, as Java.
func (s *LocalFile) Persist(ctx context.Context, mqs []queue.MessageQueue) error {
	if len(mqs) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("offset: persist: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	next := make(map[queue.MessageQueue]int64, len(s.onDisk)+len(mqs))
	for mq, off := range s.onDisk {
		next[mq] = off
	}
	changed := false
	for _, mq := range mqs {
		if off, ok := s.table.Get(mq); ok {
			if old, had := next[mq]; !had || old != off {
				changed = true
			}
			next[mq] = off
		}
	}
	if !changed {
		if _, err := os.Stat(s.path); err == nil || len(next) == 0 {
			return nil // the file already says exactly this
		}
	}
	data, err := encodeFile(next)
	if err != nil {
		return err
	}
	if err := s.writeAtomic(data); err != nil {
		return err
	}
	s.onDisk = next
	return nil
}

// writeAtomic replaces the file with data so that a crash leaves either the
// old or the new content: temp file, fsync, rename, fsync of the directory.
func (s *LocalFile) writeAtomic(data []byte) (err error) {
	dir := filepath.Dir(s.path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("offset: creating %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, s.tempPattern())
	if err != nil {
		return fmt.Errorf("offset: creating temporary file in %s: %w", dir, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("offset: writing %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("offset: syncing %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("offset: closing %s: %w", tmp.Name(), err)
	}
	if s.beforeRename != nil {
		if err := s.beforeRename(tmp.Name()); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp.Name(), s.path); err != nil {
		return fmt.Errorf("offset: replacing %s: %w", s.path, err)
	}
	// The rename is durable only once the directory entry is.
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("offset: opening %s to sync it: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("offset: syncing %s: %w", dir, err)
	}
	return nil
}

// Remove implements Store. It forgets the in-memory offset only: the file
// keeps the last persisted one, so a queue that comes back resumes there.
func (s *LocalFile) Remove(mq queue.MessageQueue) { s.table.Remove(mq) }

// Snapshot implements Store.
func (s *LocalFile) Snapshot(topic string) map[queue.MessageQueue]int64 {
	return s.table.Snapshot(topic)
}

// persistedQueues lists the queues in the file as last written or loaded, in
// canonical order (tests).
func (s *LocalFile) persistedQueues() []queue.MessageQueue {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]queue.MessageQueue, 0, len(s.onDisk))
	for mq := range s.onDisk {
		out = append(out, mq)
	}
	queue.Sort(out)
	return out
}
