package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/runnelmq/runnel/broker/replica"
)

// A RocketMQ DLedger broker.conf configures a replicated group member.
func TestApplyDLedgerProperties(t *testing.T) {
	cfg := Default()
	cfg.StoreDir = t.TempDir()
	_, err := cfg.ApplyProperties(strings.NewReader(`
brokerName=RaftNode00
enableDLegerCommitLog=true
dLegerGroup=RaftNode00
dLegerPeers=n0-127.0.0.1:40911;n1-127.0.0.1:40912;n2-127.0.0.1:40913
dLegerSelfId=n1
raftHeartbeatTimeoutMs=600
slaveReadEnable=true
raftTlsCertPath=/etc/runnel/raft.pem
raftTlsKeyPath=/etc/runnel/raft.key
raftTlsCaPath=/etc/runnel/raft-ca.pem
`))
	if err != nil {
		t.Fatal(err)
	}
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	r := cfg.Replication
	want := []replica.Peer{{ID: "n0", Addr: "127.0.0.1:40911"}, {ID: "n1", Addr: "127.0.0.1:40912"}, {ID: "n2", Addr: "127.0.0.1:40913"}}
	if !r.Enable || r.Group != "RaftNode00" || r.SelfID != "n1" || !reflect.DeepEqual(r.Peers, want) || !cfg.SlaveReadEnable {
		t.Fatalf("replication %+v slaveRead %v", r, cfg.SlaveReadEnable)
	}
	if r.HeartbeatTimeout != 600*time.Millisecond || r.ElectionTimeout != 300*time.Millisecond {
		t.Errorf("timeouts %v %v, want 600ms and the 300ms default", r.HeartbeatTimeout, r.ElectionTimeout)
	}
	if r.TLSCertPath != "/etc/runnel/raft.pem" || r.TLSKeyPath != "/etc/runnel/raft.key" || r.TLSCAPath != "/etc/runnel/raft-ca.pem" {
		t.Errorf("raft TLS %q %q %q", r.TLSCertPath, r.TLSKeyPath, r.TLSCAPath)
	}
	if id := r.SlaveID(); id != 2 {
		t.Errorf("slave id %d, want 2 (n1 is second in dLegerPeers)", id)
	}
}

func TestDLedgerConfigRefusals(t *testing.T) {
	for _, tc := range []struct{ conf, want string }{
		{"dLegerPeers=n0:1", "want id-host:port"},
		{"dLegerPeers=n0-nohostport", "dLegerPeers entry"},
		{"raftElectionTimeoutMs=0", "positive"},
	} {
		cfg := Default()
		_, err := cfg.ApplyProperties(strings.NewReader(tc.conf))
		if !errors.Is(err, ErrBadConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrBadConfig with %q", tc.conf, err, tc.want)
		}
	}
	for _, tc := range []struct {
		mod  func(*ReplicationConfig)
		want string
	}{
		{func(r *ReplicationConfig) { r.SelfID = "n9" }, "not among dLegerPeers"},
		{func(r *ReplicationConfig) { r.SelfID = "" }, "dLegerSelfId is empty"},
		{func(r *ReplicationConfig) { r.Peers = r.Peers[:2] }, "1, 3 or 5"},
		{func(r *ReplicationConfig) { r.TLSCertPath = "c.pem" }, "raftTlsCertPath and raftTlsKeyPath go together"},
		{func(r *ReplicationConfig) { r.TLSCAPath = "ca.pem" }, "raftTlsCaPath with them"},
	} {
		cfg := Default()
		cfg.StoreDir = t.TempDir()
		cfg.Replication = ReplicationConfig{Enable: true, SelfID: "n0",
			Peers: []replica.Peer{{ID: "n0", Addr: "a:1"}, {ID: "n1", Addr: "b:1"}, {ID: "n2", Addr: "c:1"}}}
		tc.mod(&cfg.Replication)
		if err := cfg.Validate(); !errors.Is(err, ErrBadConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v, want ErrBadConfig with %q", err, tc.want)
		}
	}
}
