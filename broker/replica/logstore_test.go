package replica

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/hashicorp/raft"
)

// The Pebble log (an earlier build's, which a node moves to raft-wal) keeps
// entries, first and last index, range deletions and stable keys across a
// reopen, as raft expects.
func TestLogStore(t *testing.T) {
	fs := vfs.NewMem()
	ls, err := openLogStore("raft", fs)
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := ls.FirstIndex(); f != 0 {
		t.Fatalf("empty store's first index %d", f)
	}
	fill(t, ls, ls)
	if err := ls.Close(); err != nil {
		t.Fatal(err)
	}
	if ls, err = openLogStore("raft", fs); err != nil {
		t.Fatal(err)
	}
	defer ls.Close()
	checkLog(t, ls, ls, 11, 100)
}

// Any bytes decode to an entry or an error, never a panic, and what
// decodes re-encodes to an entry that decodes alike.
func FuzzDecodeLog(f *testing.F) {
	f.Add(encodeLog(nil, &raft.Log{Term: 3, Type: raft.LogCommand, Data: []byte("data"), Extensions: []byte("e"), AppendedAt: time.Unix(1, 0)}))
	f.Add(encodeLog(nil, &raft.Log{Term: 1, Type: raft.LogConfiguration}))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		var l raft.Log
		if decodeLog(7, b, &l) != nil {
			return
		}
		var again raft.Log
		if err := decodeLog(7, encodeLog(nil, &l), &again); err != nil {
			t.Fatalf("re-encoded entry does not decode: %v", err)
		}
		if again.Term != l.Term || again.Type != l.Type || !bytes.Equal(again.Data, l.Data) ||
			!bytes.Equal(again.Extensions, l.Extensions) || !again.AppendedAt.Equal(l.AppendedAt) {
			t.Fatalf("%+v re-decoded as %+v", l, again)
		}
	})
}

// Raft's reads of recent entries (the leader replicating to followers, a
// follower applying what it received) come from the log cache: after a
// run of writes the group's raft logs were read only to start up, not
// once per entry per follower.
func TestLogCacheServesReplication(t *testing.T) {
	g := newGroup(t, 3, nil)
	reads := func() (n int64) {
		for i := range 3 {
			n += g.node(i).logs.reads.Load()
		}
		return n
	}
	const writes = 40
	// A leader change on a loaded machine (a starved node missing its
	// lease) refuses the rest with ErrNotLeader and sends a new leader to
	// Pebble for what its cache never held: the count starts again under
	// the new leader.
	for attempt := 1; ; attempt++ {
		l := g.node(g.leader())
		before := reads()
		var err error
		for i := range writes {
			ctx, cancel := proposeCtx()
			_, err = l.Propose(ctx, appendOp(t, l, testMessage("C", 0, fmt.Sprint(attempt, i))))
			cancel()
			if err != nil {
				break
			}
		}
		if errors.Is(err, ErrNotLeader) && attempt < 5 {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		g.converged()
		// Uncached, each entry is read at least three times (the leader
		// reads it for each follower, each follower to apply it).
		if got := reads() - before; got >= writes {
			t.Fatalf("%d raft log reads from Pebble for %d entries, want fewer than %d", got, writes, writes)
		}
		return
	}
}
