package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/raft"

	"github.com/runnelmq/runnel/bench/internal/proc"
	"github.com/runnelmq/runnel/broker"
	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/broker/replica"
	"github.com/runnelmq/runnel/internal/raftnet"
)

// groupName is a replicated group's brokerName (and dLegerGroup): topics
// are created on the group by name, which the admin client sends to
// whichever node the name server lists as its master.
const groupName = "RaftNode00"

// A replicated group's nodes run with the defaults a user gets from the
// DLedger keys alone (docs/replication.md): flushDiskType as the single
// broker's (ASYNC_FLUSH), the raft log as the broker writes it for that
// mode. Only where the nodes run differs: in this process over raft's
// in-memory transport (raftnet, the one the tests use), or in processes of
// their own over loopback TCP.
//
// But for raft's timeouts (raftHeartbeatTimeoutMs, raftElectionTimeoutMs),
// which are groupTimeout, not the LAN default of 300 ms: what is measured
// is throughput, not failover, and on a 2-core machine shared with other
// jobs a node is now and then starved for longer than the default lease
// (250 ms); its leader then steps down and the run fails on a refused
// send. A longer lease changes nothing while the leader keeps it (the
// heartbeats go every tenth of it instead of every 30 ms).
const groupTimeout = time.Second

// startGroupHere starts a name server and a group of n brokers in this
// process, storing under dir, linked by raftnet's in-memory transport.
func startGroupHere(dir string, n int, o runnelOptions) (*runnelCluster, error) {
	c := &runnelCluster{topicOn: groupName}
	var err error
	if c.ns, err = startNamesrvHere(o); err != nil {
		return nil, err
	}
	c.nsAddr = c.ns.Addr()
	var addrs []raft.ServerAddress
	var peers []replica.Peer
	for i := range n {
		addrs = append(addrs, raft.ServerAddress(fmt.Sprintf("raft-n%d", i)))
		peers = append(peers, replica.Peer{ID: fmt.Sprintf("n%d", i), Addr: string(addrs[i])})
	}
	links := raftnet.New(addrs)
	for i := range n {
		cfg := brokerConfigHere(filepath.Join(dir, peers[i].ID), c.nsAddr, o)
		cfg.BrokerName = groupName
		cfg.Replication.Enable = true
		cfg.Replication.SelfID = peers[i].ID
		cfg.Replication.Peers = peers
		cfg.Replication.Transport = links.Transport(i)
		cfg.Replication.HeartbeatTimeout, cfg.Replication.ElectionTimeout = groupTimeout, groupTimeout
		var b *broker.Broker
		if b, err = broker.New(cfg); err == nil {
			if err = b.Start(); err != nil {
				_ = b.Close()
			}
		}
		if err != nil {
			c.close()
			return nil, fmt.Errorf("group node %d: %w", i, err)
		}
		c.bs = append(c.bs, b)
	}
	return c, nil
}

// startGroupProcess runs a name server process and n broker processes,
// each from a broker.conf with the DLedger keys, on free loopback ports.
func (t topology) startGroupProcess(ctx context.Context, dir string, n int) (*runnelCluster, error) {
	ns, addrs, err := proc.Start(ctx, t.NamesrvBin, []string{"--listen", "127.0.0.1:0", "--log-level", "error"}, devNamesrvLine)
	if err != nil {
		return nil, err
	}
	c := &runnelCluster{nsAddr: addrs[0], ps: []*proc.Proc{ns}, topicOn: groupName}
	ports, err := freePorts(2 * n) // a client port and a raft port each
	if err != nil {
		c.close()
		return nil, err
	}
	var peers []string
	for i := range n {
		peers = append(peers, fmt.Sprintf("n%d-127.0.0.1:%d", i, ports[n+i]))
	}
	for i := range n {
		conf := filepath.Join(dir, fmt.Sprintf("broker-n%d.conf", i))
		if err := os.WriteFile(conf, []byte(strings.Join([]string{
			"brokerClusterName=RaftCluster",
			"brokerName=" + groupName,
			"brokerIP1=127.0.0.1",
			fmt.Sprintf("listenPort=%d", ports[i]),
			"namesrvAddr=" + c.nsAddr,
			"storePathRootDir=" + filepath.Join(dir, fmt.Sprintf("n%d", i)),
			"enableDLegerCommitLog=true",
			"dLegerGroup=" + groupName,
			"dLegerPeers=" + strings.Join(peers, ";"),
			fmt.Sprintf("dLegerSelfId=n%d", i),
			fmt.Sprintf("raftHeartbeatTimeoutMs=%d", groupTimeout.Milliseconds()),
			fmt.Sprintf("raftElectionTimeoutMs=%d", groupTimeout.Milliseconds()),
		}, "\n")+"\n"), 0o644); err != nil {
			c.close()
			return nil, err
		}
		p, _, err := proc.Start(ctx, t.BrokerBin, []string{"-c", conf, "--grpc-listen=", "--log-level", "error"}, devBrokerLine)
		if err != nil {
			c.close()
			return nil, fmt.Errorf("group node %d: %w", i, err)
		}
		c.ps = append(c.ps, p)
	}
	return c, nil
}

// freePorts returns n ports free on 127.0.0.1 now (a process given one
// may still find it taken; the run then fails and says so).
func freePorts(n int) ([]int, error) {
	var out []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}

// brokerConfigHere is an in-process broker's config: loopback, quiet,
// on o's transport, storing in dir, registering with nsAddr.
func brokerConfigHere(dir, nsAddr string, o runnelOptions) config.Config {
	cfg := config.Default()
	cfg.ListenAddr = "127.0.0.1:0"
	cfg.NamesrvAddrs = []string{nsAddr}
	cfg.StoreDir = dir
	cfg.Transport = o.transport()
	cfg.Logger = quietLogger()
	return cfg
}
