package replica

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/hashicorp/raft"

	"github.com/runnelmq/runnel/store"
)

// fsm is the raft state machine: the node's store. raft calls Apply,
// ApplyBatch, Snapshot and Restore from its one FSM goroutine, in log
// order, so the store has a single writer.
type fsm struct {
	n *Node
}

// applied is an entry's result as Propose hands it back.
type applied struct {
	res *store.ApplyResult
	err error
}

var _ raft.BatchingFSM = (*fsm)(nil)

func (f *fsm) Apply(l *raft.Log) any { return f.apply(l) }

// ApplyBatch applies the commands of a batch of committed entries in order
// (raft passes the batch's other entry types too, answered nil).
func (f *fsm) ApplyBatch(logs []*raft.Log) []any {
	out := make([]any, len(logs))
	for i, l := range logs {
		out[i] = f.apply(l)
	}
	return out
}

func (f *fsm) apply(l *raft.Log) any {
	if l.Type != raft.LogCommand {
		return nil
	}
	res, err := f.n.Store().ApplyEncoded(l.Data)
	if err != nil && !deterministic(err) {
		// The store could not do what every other replica did: this
		// replica no longer holds the group's state. Stop it; a restart
		// rebuilds the store from the snapshot and the log.
		f.n.fail(fmt.Errorf("replica: apply entry %d: %w", l.Index, err))
	}
	return applied{res: res, err: err}
}

// deterministic says err is what every replica's store answers for the
// same op (it changed nothing anywhere), so the replicas still agree.
func deterministic(err error) bool { return store.RefusedOp(err) }

// Snapshot captures the store as of the last applied entry. The store's
// Snapshot takes its Pebble snapshots before it writes a byte, so the
// capture is done once the first write (or the return) is seen; streaming
// goes on in the background into the pipe Persist drains, while the FSM
// applies further entries.
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	pr, pw := io.Pipe()
	captured := make(chan struct{})
	var once sync.Once
	w := &firstWrite{w: pw, first: func() { once.Do(func() { close(captured) }) }}
	s := f.n.Store()
	snap := &fsmSnapshot{r: pr, done: make(chan struct{})}
	go func() {
		defer close(snap.done)
		err := s.Snapshot(w)
		w.first()
		pw.CloseWithError(err)
	}()
	<-captured
	return snap, nil
}

// Restore replaces the store with the snapshot's: a fresh store is restored
// beside the current one, swapped in, and the old one closed and deleted.
func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	return f.n.restoreStore(rc)
}

// firstWrite calls first before the first byte reaches w.
type firstWrite struct {
	w     io.Writer
	first func()
}

func (fw *firstWrite) Write(p []byte) (int, error) {
	fw.first()
	return fw.w.Write(p)
}

// fsmSnapshot streams one store snapshot to raft's sink.
type fsmSnapshot struct {
	r    *io.PipeReader
	done chan struct{}
}

func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	if _, err := io.Copy(sink, s.r); err != nil {
		_ = sink.Cancel()
		return fmt.Errorf("replica: snapshot: %w", err)
	}
	return sink.Close()
}

// Release ends the background stream whether or not Persist ran.
func (s *fsmSnapshot) Release() {
	_ = s.r.CloseWithError(errors.New("replica: snapshot released"))
	<-s.done
}
