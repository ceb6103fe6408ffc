package store

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/runnelmq/runnel/internal/fakeclock"
)

// A snapshot restored into a new directory answers every read as the
// original does, and stays so while both apply the same encoded ops. The
// original has messages over several topics and queues, offsets, topic
// configs, checkpoints, and a truncation behind it, and data only in
// memory (queue tails, the open index segment) when it is snapshotted.
func TestSnapshotRestore(t *testing.T) {
	rng := seededRand(t, 2)
	a, err := Open(memOptions(vfs.NewMem(), fakeclock.New(t0)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	g := newOpGen(t, rng)
	for i := 0; i < 800; i++ {
		g.applyNext(a, i)
	}
	if _, err := a.ApplyEncoded(g.next(a).Marshal()); err != nil { // a last append, most likely only in memory
		t.Fatal(err)
	}
	if g.truncations == 0 || len(a.Queues()) < 4 {
		t.Fatalf("the store to snapshot has %d truncations, %d queues", g.truncations, len(a.Queues()))
	}
	var snap bytes.Buffer
	if err := a.Snapshot(&snap); err != nil {
		t.Fatal(err)
	}
	opts := memOptions(vfs.NewMem(), fakeclock.New(t0))
	b, err := Restore(opts, bytes.NewReader(snap.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	sameReads(t, a, b)
	sameKeys(t, a, b)
	if rep, err := b.Verify(); err != nil {
		t.Fatalf("restored store: %v (%+v)", err, rep)
	}
	for i := 0; i < 400; i++ {
		enc, ra := g.applyNext(a, i)
		rb, err := b.ApplyEncoded(enc)
		if err != nil || !reflect.DeepEqual(ra, rb) {
			t.Fatalf("op %d on the restored store: %+v %v, original %+v", i, rb, err, ra)
		}
	}
	sameReads(t, a, b)
	// The restored store checkpoints where the original does, so it holds
	// the same bytes: it could be a raft follower.
	n := sameKeys(t, a, b)
	t.Logf("snapshot of %d bytes, %d identical keys after further ops", snap.Len(), n)
}

// Restore refuses a stream cut short, altered or extended, and a directory
// that already holds something, and leaves no database behind.
func TestRestoreRefusesBadSnapshots(t *testing.T) {
	s, _, _ := openMem(t)
	for i := 0; i < 50; i++ {
		mustPut(t, s, msg("T", int32(i%2), fmt.Sprint("m", i)))
	}
	if err := s.CommitOffset("g", "T", 0, 3); err != nil {
		t.Fatal(err)
	}
	var snap bytes.Buffer
	if err := s.Snapshot(&snap); err != nil {
		t.Fatal(err)
	}
	full := snap.Bytes()
	flipped := append([]byte(nil), full...)
	flipped[len(flipped)/2] ^= 0x40
	cases := map[string][]byte{"empty": nil, "header only": full[:8], "flipped": flipped, "extended": append(append([]byte(nil), full...), 0)}
	for _, n := range []int{9, len(full) / 3, len(full) - 13, len(full) - 1} {
		cases[fmt.Sprint("cut to ", n)] = full[:n]
	}
	for name, b := range cases {
		fs := vfs.NewMem()
		r, err := Restore(memOptions(fs, fakeclock.New(t0)), bytes.NewReader(b))
		if !errors.Is(err, ErrBadSnapshot) {
			if r != nil {
				_ = r.Close()
			}
			t.Fatalf("%s: %v", name, err)
		}
		if names, _ := fs.List("db"); len(names) != 0 {
			t.Fatalf("%s: left %v", name, names)
		}
	}
	fs := vfs.NewMem()
	r, err := Restore(memOptions(fs, fakeclock.New(t0)), bytes.NewReader(full))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(memOptions(fs, fakeclock.New(t0)), bytes.NewReader(full)); err == nil {
		t.Fatal("restored over an existing store")
	}
}
