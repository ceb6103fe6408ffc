package fakebroker

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// Cluster is a fake name server in front of fake brokers.
type Cluster struct {
	ns      *remoting.Server
	Brokers []*Broker
}

// Start starts a name server and one broker per config (one default broker
// when none is given).
func Start(cfgs ...Config) (*Cluster, error) {
	if len(cfgs) == 0 {
		cfgs = []Config{{}}
	}
	c := &Cluster{}
	for _, cfg := range cfgs {
		b, err := StartBroker(cfg)
		if err != nil {
			c.Close()
			return nil, err
		}
		c.Brokers = append(c.Brokers, b)
	}
	scfg := remoting.DefaultServerConfig()
	scfg.Addr = "127.0.0.1:0"
	scfg.Transport = remoting.TransportStd
	scfg.Logger = quiet
	ns, err := remoting.NewServer(scfg)
	if err != nil {
		c.Close()
		return nil, err
	}
	ns.Handle(protocol.ReqGetRouteInfoByTopic, c.route)
	if err := ns.Start(); err != nil {
		c.Close()
		return nil, err
	}
	c.ns = ns
	return c, nil
}

// NameServer returns the name server's address.
func (c *Cluster) NameServer() string { return c.ns.Addr() }

// CreateTopic creates topic with n queues on every broker.
func (c *Cluster) CreateTopic(topic string, n int) {
	for _, b := range c.Brokers {
		b.CreateTopic(topic, n)
	}
}

// Close stops everything.
func (c *Cluster) Close() {
	if c.ns != nil {
		_ = c.ns.Close()
	}
	for _, b := range c.Brokers {
		b.Close()
	}
}

func (c *Cluster) route(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	topic := req.Ext("topic")
	var r protocol.TopicRouteData
	for _, b := range c.Brokers {
		if qd, bd, ok := b.routeOf(topic); ok {
			r.QueueDatas = append(r.QueueDatas, qd)
			r.BrokerDatas = append(r.BrokerDatas, bd)
		}
	}
	if len(r.QueueDatas) == 0 {
		return fail(req, protocol.RespTopicNotExist, fmt.Sprintf("No topic route info in name server for the topic: %s", topic))
	}
	body, err := r.Encode()
	if err != nil {
		return fail(req, protocol.RespSystemError, err.Error())
	}
	resp := ok(req, nil)
	resp.Body = body
	return resp
}

func netipAddrPort(s string) (netip.AddrPort, error) { return netip.ParseAddrPort(s) }
