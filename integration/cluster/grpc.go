package cluster

import (
	"fmt"
	"net"

	"github.com/runnelmq/runnel/broker/config"
)

// GRPC gives every broker a RocketMQ 5 gRPC door on a free 127.0.0.1 port
// (TLS and plaintext on the one port), kept across restarts; GRPCAddr
// says where. In a Group, each node's door knows the others' (grpcPeers),
// so a follower routes clients to its leader's door.
func GRPC() Option { return func(o *options) { o.grpc = true } }

// grpcListeners opens the gRPC ports of n brokers before any starts, so a
// group's nodes can be told each other's.
func grpcListeners(n int) ([]net.Listener, error) {
	var out []net.Listener
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			for _, l := range out {
				_ = l.Close()
			}
			return nil, err
		}
		out = append(out, ln)
	}
	return out, nil
}

// grpcConfig makes broker i serve its gRPC door on ln, with a group's
// peers.
func grpcConfig(i int, cfg *config.Config, lns []net.Listener, group bool) {
	cfg.GRPC.Listener = lns[i]
	cfg.GRPC.ListenAddr = lns[i].Addr().String()
	if group {
		cfg.GRPC.Peers = map[string]string{}
		for j, l := range lns {
			cfg.GRPC.Peers[fmt.Sprintf("n%d", j)] = l.Addr().String()
		}
	}
}

// GRPCAddr returns broker i's gRPC door address (127.0.0.1:port), the
// endpoint a RocketMQ 5 SDK is given; it stays the same across restarts.
// "" when the cluster was started without GRPC.
func (c *Cluster) GRPCAddr(i int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.brokers[i].cfg.GRPC.ListenAddr
}

// GRPCAddrs returns every broker's gRPC door address, ";"-joined as the
// SDKs take a list of endpoints.
func (c *Cluster) GRPCAddrs() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := ""
	for i, n := range c.brokers {
		if i > 0 {
			s += ";"
		}
		s += n.cfg.GRPC.ListenAddr
	}
	return s
}
