// Package raftnet is the in-memory network of a test's raft group: one
// raft.InmemTransport per node, linked with every other node's, which a
// test cuts and heals to partition the group without sockets. The
// replica package's tests and integration/cluster's Group share it.
//
// What holds: node i and node j are linked both ways exactly when both
// have a transport and neither is cut. A node's restart replaces its
// transport (a fresh one, linked as that rule says); the old one is
// left to its shut-down raft.
package raftnet

import (
	"sync"

	"github.com/hashicorp/raft"
)

// Net links the transports of a fixed set of nodes, numbered by their
// index in the addresses it was made with. It is safe for concurrent use.
type Net struct {
	addrs []raft.ServerAddress

	mu struct {
		sync.Mutex
		trans []*raft.InmemTransport // the node's latest, nil before its first
		cut   []bool
	}
}

// New returns the network of nodes at addrs, none of them cut.
func New(addrs []raft.ServerAddress) *Net {
	n := &Net{addrs: addrs}
	n.mu.trans = make([]*raft.InmemTransport, len(addrs))
	n.mu.cut = make([]bool, len(addrs))
	return n
}

// Addr is node i's address.
func (n *Net) Addr(i int) raft.ServerAddress { return n.addrs[i] }

// Transport makes node i a fresh transport linked with every node that
// has one, unless i or that node is cut.
func (n *Net) Transport(i int) *raft.InmemTransport {
	_, tr := raft.NewInmemTransport(n.addrs[i])
	n.mu.Lock()
	defer n.mu.Unlock()
	n.mu.trans[i] = tr
	for j := range n.mu.trans {
		n.linkLocked(i, j)
	}
	return tr
}

// Cut cuts node i's links to every other node (cut true), or mends those
// to the nodes not cut themselves (cut false).
func (n *Net) Cut(i int, cut bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.mu.cut[i] = cut
	for j := range n.mu.trans {
		n.linkLocked(i, j)
	}
}

// linkLocked links nodes i and j both ways, or unlinks them, as the
// package's rule says.
func (n *Net) linkLocked(i, j int) {
	a, b := n.mu.trans[i], n.mu.trans[j]
	if i == j || a == nil || b == nil {
		return
	}
	if n.mu.cut[i] || n.mu.cut[j] {
		a.Disconnect(n.addrs[j])
		b.Disconnect(n.addrs[i])
		return
	}
	a.Connect(n.addrs[j], b)
	b.Connect(n.addrs[i], a)
}
