package broker

import (
	"crypto/tls"
	"fmt"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/broker/grpcdoor"
	"github.com/runnelmq/runnel/remoting"
)

// newGRPCDoor adds the RocketMQ 5 gRPC door when cfg.GRPC.ListenAddr is
// set. Its port serves TLS and plaintext unless tls.server.mode says
// otherwise; serverTLS is the remoting door's certificate, when it has
// one.
func (b *Broker) newGRPCDoor(serverTLS *tls.Config) error {
	c := b.cfg
	if c.GRPC.ListenAddr == "" && c.GRPC.Listener == nil {
		return nil
	}
	mode := grpcdoor.TLSPermissive // the SDKs start TLS by default
	if c.TLS.Mode != "" {
		m, err := remoting.ParseTLSMode(c.TLS.Mode)
		if err != nil {
			return err
		}
		mode = m
	}
	if serverTLS == nil && mode != grpcdoor.TLSDisabled {
		// The remoting door serves plaintext only, but the gRPC door serves
		// TLS too: the configured certificate, else a generated one.
		t := c.TLS
		t.Mode = remoting.TLSPermissive
		var err error
		if _, serverTLS, err = t.ServerTLS(); err != nil {
			return fmt.Errorf("grpc door: %w", err)
		}
	}
	gcfg := grpcdoor.Config{
		Core: b.core, BrokerName: c.BrokerName,
		ListenAddr: c.GRPC.ListenAddr, Listener: c.GRPC.Listener,
		AdvertiseAddr: c.GRPCAdvertise(), Advertise: config.Advertise,
		TLSMode: mode, TLS: serverTLS,
		MaxLongPolling: c.GRPC.MaxLongPolling,
		Renewal:        grpcdoor.Renewal(c.GRPC.Renewal),
		ChannelExpiry:  c.ChannelExpiry, Now: c.Now, Logger: b.log,
	}
	if b.guard.Enabled() {
		gcfg.Access = b.guard
	}
	if c.Metrics.Enabled() {
		gcfg.Metrics = b.metrics
	}
	if b.node != nil {
		gcfg.Leader = b.grpcLeader
	}
	d, err := grpcdoor.New(gcfg)
	if err != nil {
		return err
	}
	b.grpc = d
	b.doors = append(b.doors, d)
	return nil
}

// grpcLeader is the advertised gRPC address of the group's leader, as
// grpcPeers names it ("" unknown).
func (b *Broker) grpcLeader() string {
	st, ok := b.ReplicaStatus()
	if !ok || st.LeaderID == "" {
		return ""
	}
	return b.cfg.GRPC.Peers[st.LeaderID]
}

// GRPC returns the gRPC door, nil when the broker serves none.
func (b *Broker) GRPC() *grpcdoor.Door { return b.grpc }

// GRPCAddr returns the address the gRPC door listens on, "" when there is
// none or before Start.
func (b *Broker) GRPCAddr() string {
	if b.grpc == nil {
		return ""
	}
	return b.grpc.Addr()
}

// GRPCAdvertisedAddr returns the address routes hand RocketMQ 5 clients,
// "" when there is no gRPC door or before Start.
func (b *Broker) GRPCAdvertisedAddr() string {
	if b.grpc == nil {
		return ""
	}
	return b.grpc.AdvertisedAddr()
}
