package config

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// GRPCConfig configures the RocketMQ 5 gRPC door (broker/grpcdoor), the
// MessagingService the RocketMQ 5 SDKs speak to RocketMQ's proxy.
type GRPCConfig struct {
	// ListenAddr is where the door serves (grpcServerPort, RocketMQ's proxy
	// key, sets its port; grpcListenAddr, Runnel's, the whole address).
	// TLS and plaintext share it. Default "": no gRPC door (the broker
	// command serves ":8081", runnel dev "127.0.0.1:8081").
	ListenAddr string
	// AdvertiseAddr (grpcAdvertiseAddr, Runnel's key) is the ip:port routes
	// hand out as the door's endpoint, for a door behind a port mapping or
	// in a container. Default: the door's listening address, its host
	// brokerIP1's when that is set, an unspecified host replaced as
	// AdvertiseAddr's is.
	AdvertiseAddr string
	// Peers (grpcPeers, "n0-host:port;n1-host:port;...", Runnel's key) are
	// the advertised gRPC addresses of a replicated group's nodes by their
	// dLegerSelfId, so a follower's routes name its leader's door. Default
	// none: a follower's routes name itself and its writes are refused.
	Peers map[string]string
	// MaxLongPolling (grpcClientConsumerMaxLongPollingTimeoutMillis, the
	// proxy's key, ms) is the longest a receive is held and the long
	// polling timeout push consumers are told. Default 20 s.
	MaxLongPolling time.Duration
	// Renewal keeps push consumers' received messages invisible while
	// their listeners run, under the proxy's keys (ms):
	// defaultInvisibleTimeMills (Invisible, default 60 s),
	// renewAheadTimeMillis (Ahead, 10 s), renewSliceTimeMillis (Slice,
	// 60 s), renewSchedulePeriodMillis (Period, 5 s), renewMaxTimeMillis
	// (Max, 3 h). See grpcdoor.Renewal.
	Renewal struct{ Invisible, Ahead, Slice, Period, Max time.Duration }
	// Listener, if set, is served instead of listening on ListenAddr
	// (tests that must know a door's address before its broker starts).
	Listener net.Listener
}

// setGRPCKey applies one gRPC key; known is false for other keys.
func (c *Config) setGRPCKey(key, val string) (known bool, err error) {
	switch key {
	case "grpcServerPort":
		if _, err := strconv.ParseUint(val, 10, 16); err != nil {
			return true, err
		}
		host := ""
		if h, _, err := net.SplitHostPort(c.GRPC.ListenAddr); err == nil {
			host = h
		}
		c.GRPC.ListenAddr = net.JoinHostPort(host, val)
	case "grpcListenAddr":
		if val != "" {
			if _, _, err := net.SplitHostPort(val); err != nil {
				return true, err
			}
		}
		c.GRPC.ListenAddr = val
	case "grpcAdvertiseAddr":
		if val != "" {
			if _, _, err := net.SplitHostPort(val); err != nil {
				return true, err
			}
		}
		c.GRPC.AdvertiseAddr = val
	case "grpcPeers":
		peers, err := parseGRPCPeers(val)
		if err != nil {
			return true, err
		}
		c.GRPC.Peers = peers
	default:
		return false, nil
	}
	return true, nil
}

// parseGRPCPeers reads "id-host:port;id-host:port" as dLegerPeers is
// written.
func parseGRPCPeers(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, p := range splitAddrs(s) {
		id, addr, ok := strings.Cut(p, "-")
		if !ok || id == "" {
			return nil, fmt.Errorf("peer %q: want id-host:port", p)
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return nil, fmt.Errorf("peer %q: %v", p, err)
		}
		out[id] = addr
	}
	return out, nil
}

// GRPCAdvertise is the gRPC door's configured advertised address: its
// own, else brokerIP1's host (AdvertiseAddr's) with the door's listening
// port, else "" (the door advertises where it listens).
func (c *Config) GRPCAdvertise() string {
	if c.GRPC.AdvertiseAddr != "" {
		return c.GRPC.AdvertiseAddr
	}
	if c.AdvertiseAddr == "" {
		return ""
	}
	host, _, err := net.SplitHostPort(c.AdvertiseAddr)
	if err != nil {
		return ""
	}
	return net.JoinHostPort(host, "0") // port 0: the port the door listens on
}
