package cluster

import (
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/raft"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/broker/replica"
	"github.com/runnelmq/runnel/internal/raftnet"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/remoting"
)

// Group makes the cluster's brokers one replicated group of n nodes
// (n = 1, 3 or 5): all named "broker-a", each a raft member "n<i>" over
// raft's in-memory transport, which Cut and Heal break and mend. The
// nodes' raft logs are written without fsync (a test's crash is a
// process's, not a machine's). Brokers(n) is implied.
func Group(n int) Option {
	return func(o *options) { o.brokers, o.group = n, n }
}

// RaftOverTCP makes a Group's raft run over TCP on loopback (each node's
// raft transport on a free 127.0.0.1 port) instead of the in-memory
// transport: what benchmarks measure. Cut and Heal do nothing then.
func RaftOverTCP() Option { return func(o *options) { o.raftTCP = true } }

// RaftOverTLS is RaftOverTCP over mutual TLS: every node presents one
// shared certificate, generated for the cluster, which is also the one it
// trusts (raftTlsCertPath and raftTlsKeyPath, no raftTlsCaPath).
func RaftOverTLS() Option { return func(o *options) { o.raftTCP, o.raftTLS = true, true } }

// raftCertificate writes a generated certificate and its key, PEM, in dir.
func raftCertificate(dir string) (certFile, keyFile string, err error) {
	cert, certPEM, err := remoting.SelfSignedCertificate()
	if err != nil {
		return "", "", err
	}
	key, ok := cert.PrivateKey.(*ecdsa.PrivateKey)
	if !ok {
		return "", "", fmt.Errorf("a %T key", cert.PrivateKey)
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return "", "", err
	}
	certFile, keyFile = filepath.Join(dir, "raft.pem"), filepath.Join(dir, "raft.key")
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		return "", "", err
	}
	return certFile, keyFile, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600)
}

// links is a replicated group's raft network: in memory (package
// raftnet's, which Cut and Heal break and mend), or loopback TCP.
type links struct {
	addrs []raft.ServerAddress // 127.0.0.1 ports over TCP
	net   *raftnet.Net         // nil over TCP
	// certFile and keyFile are the members' shared certificate over TLS.
	certFile, keyFile string
}

func newLinks(n int, tcp bool) (*links, error) {
	l := &links{}
	for i := range n {
		addr := fmt.Sprintf("raft-n%d", i)
		if tcp {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				return nil, err
			}
			addr = ln.Addr().String()
			_ = ln.Close()
		}
		l.addrs = append(l.addrs, raft.ServerAddress(addr))
	}
	if !tcp {
		l.net = raftnet.New(l.addrs)
	}
	return l, nil
}

func (l *links) peers() []replica.Peer {
	var out []replica.Peer
	for i, a := range l.addrs {
		out = append(out, replica.Peer{ID: fmt.Sprintf("n%d", i), Addr: string(a)})
	}
	return out
}

// set cuts node i off from every other node, or heals it.
func (l *links) set(i int, cut bool) {
	if l.net != nil {
		l.net.Cut(i, cut)
	}
}

// groupConfig makes broker i's config a group member's.
func (c *Cluster) groupConfig(i int, cfg *config.Config) {
	cfg.BrokerName = "broker-a"
	cfg.Replication.Enable = true
	cfg.Replication.SelfID = fmt.Sprintf("n%d", i)
	cfg.Replication.Peers = c.links.peers()
	cfg.Replication.LogNoSync = true
	cfg.Replication.TLSCertPath, cfg.Replication.TLSKeyPath = c.links.certFile, c.links.keyFile
}

// Cut cuts group node i's raft links to every other node (its client and
// name server connections stay up): a leader cut off steps down within
// its lease, and the majority elects another.
func (c *Cluster) Cut(i int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.links.set(i, true)
}

// Heal mends node i's raft links.
func (c *Cluster) Heal(i int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.links.set(i, false)
}

// Leader waits until exactly one running group node, not among except,
// is announced master and every running name server has it registered as
// its group's master, and returns it. A node becomes master before it
// registers as one: a client asking the name servers in between finds no
// master to write to (on a loaded machine, for seconds).
func (c *Cluster) Leader(except ...int) int {
	c.t.Helper()
	found := -1
	testwait.For(c.t, 30*time.Second, "one master in the group, registered with the name servers", func() bool {
		found = -1
		for i := range c.Brokers() {
			b := c.Broker(i)
			if b == nil || !b.IsMaster() || contains(except, i) {
				continue
			}
			if found >= 0 {
				return false
			}
			found = i
		}
		return found >= 0 && c.registeredMaster(found)
	})
	return found
}

// registeredMaster reports whether every running name server names node i
// its group's master.
func (c *Cluster) registeredMaster(i int) bool {
	name, addr := c.BrokerName(i), c.BrokerAddr(i)
	for k := range c.NamesrvAddrs() {
		ns := c.NamesrvAt(k)
		if ns == nil {
			continue
		}
		if ns.Table().ClusterInfo().BrokerAddrTable[name].BrokerAddrs[0] != addr {
			return false
		}
	}
	return true
}

// Masters returns the running nodes announced master now.
func (c *Cluster) Masters() []int {
	var out []int
	for i := range c.Brokers() {
		if b := c.Broker(i); b != nil && b.IsMaster() {
			out = append(out, i)
		}
	}
	return out
}

// StartBroker starts broker i again after KillBroker or StopBroker, on its
// address and store (a group node rejoins from its raft log).
func (c *Cluster) StartBroker(i int) {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.brokers[i].b != nil {
		return
	}
	if err := c.startNode(c.brokers[i]); err != nil {
		c.t.Fatalf("cluster: start broker %d: %v", i, err)
	}
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
