package raftnet

import (
	"fmt"
	"sync"
	"testing"

	"github.com/hashicorp/raft"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// answer answers every RPC on tr until the returned stop is called, so a
// probe between linked nodes returns at once and one to a stopped node
// times out.
func answer(tr *raft.InmemTransport) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case rpc := <-tr.Consumer():
				rpc.Respond(&raft.RequestVoteResponse{}, nil)
			case <-done:
				return
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// linked reports which ordered pairs (from, to) of running nodes can
// reach each other, as "ij" strings.
func linked(net *Net, trans []*raft.InmemTransport) map[string]bool {
	out := map[string]bool{}
	for i, a := range trans {
		for j := range trans {
			if i == j || a == nil || trans[j] == nil {
				continue
			}
			err := a.RequestVote(raft.ServerID(fmt.Sprint(j)), net.Addr(j), &raft.RequestVoteRequest{}, &raft.RequestVoteResponse{})
			if err == nil {
				out[fmt.Sprintf("%d%d", i, j)] = true
			}
		}
	}
	return out
}

func want(pairs ...string) map[string]bool {
	out := map[string]bool{}
	for _, p := range pairs {
		out[p] = true
	}
	return out
}

// TestCutHealRestart walks the package's rule through cuts, heals and
// restarts of a three-node network, probing every link with an RPC.
func TestCutHealRestart(t *testing.T) {
	net := New([]raft.ServerAddress{"a0", "a1", "a2"})
	trans := make([]*raft.InmemTransport, 3)
	stops := make([]func(), 3)
	defer func() {
		for _, stop := range stops {
			if stop != nil {
				stop()
			}
		}
	}()
	// start (re)starts node i; the old transport stops answering, as a
	// shut-down raft's does, so a link left on it fails the probe.
	start := func(i int) {
		if stops[i] != nil {
			stops[i]()
		}
		trans[i] = net.Transport(i)
		stops[i] = answer(trans[i])
	}
	check := func(step string, w map[string]bool) {
		t.Helper()
		if got := linked(net, trans); fmt.Sprint(got) != fmt.Sprint(w) {
			t.Fatalf("%s: linked %v, want %v", step, got, w)
		}
	}
	all := want("01", "02", "10", "12", "20", "21")

	start(0)
	start(1)
	check("two started", want("01", "10"))
	start(2)
	check("three started", all)

	net.Cut(0, true)
	check("0 cut", want("12", "21"))
	net.Cut(1, true)
	check("0 and 1 cut", want())
	net.Cut(0, false)
	check("0 healed, 1 still cut", want("02", "20"))

	start(1) // a restart while cut: the fresh transport stays cut off
	check("1 restarted cut", want("02", "20"))
	net.Cut(1, false)
	check("1 healed", all)

	start(2) // a restart replaces the node's transport in every link
	check("2 restarted", all)
}
