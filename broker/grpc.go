package broker

import (
	"crypto/tls"
	"fmt"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/acl/auth"
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
		ChannelExpiry:  c.ChannelExpiry, Now: c.Now, Logger: b.log,
	}
	if b.acl != nil || b.auth.Enabled() {
		gcfg.Access = grpcAccess{plain: b.acl, auth: b.auth}
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

// grpcAccess is the broker's access control as the gRPC door asks it: the
// plain ACL's accounts and ACL 2.0's users and rules, each when enabled,
// as the remoting door checks them.
type grpcAccess struct {
	plain *acl.Checker
	auth  *auth.Manager
}

func (a grpcAccess) Check(remote, accessKey string, verify func(string) bool, needs []grpcdoor.Need) error {
	if a.plain != nil {
		var rs []acl.Resource
		for _, n := range needs {
			perm := acl.Sub
			switch n.Action {
			case grpcdoor.ActionGet:
				continue // routes are not checked by plain ACL
			case grpcdoor.ActionPub:
				perm = acl.Pub
			}
			if n.Topic != "" {
				rs = append(rs, acl.Resource{Name: n.Topic, Perm: perm})
			}
			if n.Group != "" {
				rs = append(rs, acl.GroupResource(n.Group, acl.Sub))
			}
		}
		if err := a.plain.CheckAccess(remote, accessKey, verify, rs); err != nil {
			return err
		}
	}
	if a.auth != nil && a.auth.Enabled() {
		var ns []auth.Need
		for _, n := range needs {
			act := auth.Sub
			switch n.Action {
			case grpcdoor.ActionGet:
				act = auth.Get
			case grpcdoor.ActionPub:
				act = auth.Pub
			}
			if n.Topic != "" {
				ns = append(ns, auth.TopicNeed(n.Topic, act))
			}
			if n.Group != "" {
				ns = append(ns, auth.GroupNeed(n.Group, auth.Sub))
			}
		}
		if err := a.auth.CheckAccess(remote, accessKey, verify, ns); err != nil {
			return err
		}
	}
	return nil
}
