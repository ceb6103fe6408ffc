package replica

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runnelmq/runnel/internal/testwait"
)

// TestRetentionFreesEveryReplica: a truncation the leader proposes frees
// the deleted log on every replica as it is applied, not only on the
// leader, and without waiting for Pebble's compactions or a disk check:
// a replica's store runs no retention of its own, and, below
// diskMaxUsedSpaceRatio, nothing else freed what a proposed truncation
// deleted.
func TestRetentionFreesEveryReplica(t *testing.T) {
	g := newGroup(t, 3, func(c *Config) {
		c.Store.FileReservedTime = time.Hour
		c.Store.DiskCheckInterval = -1
	})
	// propose proposes what op builds with the leader's store, again with
	// the next leader if leadership moves under the test (an append may then
	// be stored twice, which the test does not mind).
	propose := func(op func(*Node) []byte) {
		t.Helper()
		for {
			l := g.node(g.leader())
			ctx, cancel := proposeCtx()
			_, err := l.Propose(ctx, op(l))
			cancel()
			if err == nil {
				return
			}
			if !errors.Is(err, ErrNotLeader) {
				t.Fatal(err)
			}
		}
	}
	rng := rand.NewChaCha8([32]byte{})
	const n, size = 96, 64 << 10 // 6 MiB of incompressible bodies
	for i := range n {
		m := testMessage("T", int32(i%2), fmt.Sprint(i))
		m.Body = make([]byte, size)
		_, _ = rng.Read(m.Body)
		propose(func(l *Node) []byte { return appendOp(t, l, m) })
	}
	g.converged()
	// The log in tables, as a busy log is.
	before := make([]int64, 3)
	for i := range 3 {
		if err := g.node(i).Store().ReleaseMemory(); err != nil {
			t.Fatal(err)
		}
		before[i] = logTables(t, g.dirs[i])
	}
	// What the master's retention task (Backend.Retain) proposes, with
	// every message past FileReservedTime.
	now := storeTime.Add(2 * time.Hour)
	for more := true; more; {
		propose(func(l *Node) []byte {
			op, m, err := l.Store().RetentionOp(now)
			if err != nil || op == nil {
				t.Fatalf("RetentionOp: %v, %v", op, err)
			}
			more = m
			return op.Marshal()
		})
	}
	l := g.node(g.leader())
	deleted := l.Store().MinPhysOffset()
	if deleted < n*size {
		t.Fatalf("retention deleted %d bytes, want the whole log (%d)", deleted, n*size)
	}
	for i := range 3 {
		s := g.node(i).Store()
		testwait.For(t, testwait.Default, fmt.Sprintf("node %d to apply the truncations", i),
			func() bool { return s.MinPhysOffset() == deleted })
		testwait.For(t, testwait.Default, fmt.Sprintf("node %d to free %d deleted bytes from %d bytes of log tables", i, deleted, before[i]),
			func() bool { return logTables(t, g.dirs[i]) <= before[i]-deleted*9/10 })
	}
}

// logTables is the size of the table files of the commit logs under a
// node's directory.
func logTables(t *testing.T, dir string) int64 {
	t.Helper()
	var total int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // a file Pebble deleted under the walk
		}
		if filepath.Base(filepath.Dir(path)) == "log" && strings.HasPrefix(filepath.Base(filepath.Dir(filepath.Dir(path))), "store-") &&
			strings.HasSuffix(path, ".sst") {
			if info, err := d.Info(); err == nil {
				total += info.Size()
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return total
}
