package replica

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/store"
)

// tcpGroup starts a group of three on loopback TCP, node i's transport
// over tlsOf(i) (nil: plain TCP), and waits for a leader.
func tcpGroup(t *testing.T, tlsOf func(i int) *tls.Config) (nodes []*Node, leader *Node) {
	t.Helper()
	var peers []Peer
	for i := range 3 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		peers = append(peers, Peer{ID: fmt.Sprint("n", i), Addr: ln.Addr().String()})
		ln.Close()
	}
	for i := range 3 {
		cfg := DefaultConfig()
		cfg.ID, cfg.Dir, cfg.Peers, cfg.BindAddr = peers[i].ID, t.TempDir(), peers, peers[i].Addr
		cfg.TLS = tlsOf(i)
		cfg.Logger = testLogger()
		cfg.Store = store.Options{Now: func() time.Time { return storeTime }, MemTableSize: 4 << 20, CacheSize: 8 << 20}
		n, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = n.Shutdown() })
		nodes = append(nodes, n)
	}
	testwait.For(t, 30*time.Second, "a leader", func() bool {
		for _, n := range nodes {
			if n.IsLeader() {
				leader = n
			}
		}
		return leader != nil
	})
	return nodes, leader
}

// replicate proposes n messages on the leader and waits until every node's
// store holds them.
func replicate(t *testing.T, nodes []*Node, l *Node, n int) {
	t.Helper()
	for i := range n {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := l.Propose(ctx, appendOp(t, l, testMessage("T", 0, fmt.Sprint("tcp", i))))
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	testwait.For(t, 30*time.Second, "identical stores", func() bool {
		want := dump(t, l.Store())
		for _, n := range nodes {
			if dump(t, n.Store()) != want {
				return false
			}
		}
		return true
	})
	if b := bodies(t, nodes[0].Store()); len(b) != n {
		t.Fatalf("%d messages, want %d", len(b), n)
	}
}

// A group of three on raft's TCP transport (loopback) elects a leader and
// replicates to every member.
func TestTCPGroup(t *testing.T) {
	nodes, l := tcpGroup(t, func(int) *tls.Config { return nil })
	replicate(t, nodes, l, 20)
	// Plain TCP decodes and answers anyone who reaches the port: what
	// TestTLSGroupClosedToStrangers's stranger gets nothing of.
	if _, err := strangerVote(t, l, nil); err != nil {
		t.Fatalf("a stranger's RequestVote to a plain TCP member: %v, want an answer", err)
	}
}

// TestTLSGroupClosedToStrangers runs a group over mutual TLS, each member
// with its own certificate from the group's CA: it elects a leader and
// replicates. A stranger's RequestVote, with a term far ahead, gets
// nothing — sent over plain TCP, or over TLS with a certificate of its
// own, or with none — and no member's term moves: it was never decoded.
func TestTLSGroupClosedToStrangers(t *testing.T) {
	ca, caKey := newCA(t, "group CA")
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	nodes, l := tcpGroup(t, func(i int) *tls.Config {
		return MemberTLS(newCert(t, fmt.Sprint("n", i), ca, caKey), pool)
	})
	replicate(t, nodes, l, 20)
	terms := make([]uint64, len(nodes))
	for i, n := range nodes {
		terms[i] = n.raft.CurrentTerm()
	}

	other, otherKey := newCA(t, "another CA")
	otherPool := x509.NewCertPool()
	otherPool.AddCert(other)
	for name, cfg := range map[string]*tls.Config{
		"plain TCP":              nil,
		"TLS, a stranger's cert": MemberTLS(newCert(t, "stranger", other, otherKey), otherPool),
		"TLS, no cert":           {InsecureSkipVerify: true, MinVersion: tls.VersionTLS13}, //nolint:gosec // a stranger
	} {
		for _, n := range nodes {
			if resp, err := strangerVote(t, n, cfg); err == nil {
				t.Errorf("%s: a stranger's RequestVote to %s was answered: %+v", name, n.cfg.ID, resp)
			}
		}
	}
	// A stranger that connects and writes bytes reads nothing back.
	c, err := net.DialTimeout("tcp", nodes[0].cfg.BindAddr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = c.Write([]byte{0, 1, 2, 3, 4, 5, 6, 7})
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := io.ReadAll(c); len(n) > 0 && err == nil {
		t.Errorf("a raw stranger read %d bytes", len(n))
	}
	c.Close()
	for i, n := range nodes {
		if got := n.raft.CurrentTerm(); got != terms[i] && got >= 1000 {
			t.Errorf("node %d's term moved to %d: a stranger's vote was decoded", i, got)
		}
	}
	replicate(t, nodes, l, 25) // the group serves on
}

// TestTLSConfigFromFiles reads a member's TLS from PEM files: with the
// group's CA, and with one certificate every member shares (no CA file).
func TestTLSConfigFromFiles(t *testing.T) {
	ca, caKey := newCA(t, "group CA")
	dir := t.TempDir()
	cert := newCert(t, "n0", ca, caKey)
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	keyDER, err := x509.MarshalECPrivateKey(cert.PrivateKey.(*ecdsa.PrivateKey))
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := write("n0.pem", "CERTIFICATE", cert.Certificate[0]), write("n0.key", "EC PRIVATE KEY", keyDER)
	caFile := write("ca.pem", "CERTIFICATE", ca.Raw)
	for _, ca := range []string{caFile, ""} {
		if _, err := TLSConfig(certFile, keyFile, ca); err != nil {
			t.Fatalf("ca %q: %v", ca, err)
		}
	}
	if _, err := TLSConfig(certFile, keyFile, keyFile); err == nil {
		t.Fatal("a CA file without a certificate was taken")
	}
	if _, err := TLSConfig(certFile, filepath.Join(dir, "missing"), ""); err == nil {
		t.Fatal("a missing key was taken")
	}
}

// strangerVote sends node n a RequestVote from a transport outside the
// group, over TLS with cfg (nil: plain TCP), far ahead in term.
func strangerVote(t *testing.T, n *Node, cfg *tls.Config) (*raft.RequestVoteResponse, error) {
	t.Helper()
	var trans *raft.NetworkTransport
	if cfg == nil {
		tr, err := raft.NewTCPTransport("127.0.0.1:0", nil, 2, 2*time.Second, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		trans = tr
	} else {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		trans = raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
			Stream: &tlsStream{ln: ln, adv: ln.Addr(), cfg: cfg, timeout: 2 * time.Second}, MaxPool: 2, Timeout: 2 * time.Second,
			Logger: testLogger()})
	}
	defer trans.Close()
	defer trans.CloseStreams()
	req := &raft.RequestVoteRequest{RPCHeader: raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte("stranger"), Addr: []byte(trans.LocalAddr())},
		Term: 1000, LastLogIndex: 1 << 40, LastLogTerm: 999}
	var resp raft.RequestVoteResponse
	err := trans.RequestVote(raft.ServerID(n.cfg.ID), raft.ServerAddress(n.cfg.BindAddr), req, &resp)
	return &resp, err
}

func newCA(t *testing.T, name string) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return ca, key
}

// newCert is a member's certificate for name, signed by ca; it names no
// address (members are known by the CA alone).
func newCert(t *testing.T, name string, ca *x509.Certificate, caKey *ecdsa.PrivateKey) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}
