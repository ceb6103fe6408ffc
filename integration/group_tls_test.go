package integration

import (
	"fmt"
	"testing"
	"time"

	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/testwait"
)

// TestGroupRaftOverTLS runs a replicated group whose raft goes over mutual
// TLS (raftTlsCertPath, raftTlsKeyPath: one certificate the members
// share): it elects a master, takes writes, and fails over when the master
// is killed, its writes all on the new master, the old one back as a slave
// that catches up. (A stranger's RPC on such a port gets nothing:
// broker/replica's TestTLSGroupClosedToStrangers.)
func TestGroupRaftOverTLS(t *testing.T) {
	c := rcCluster(t, cluster.Group(3), cluster.RaftOverTLS())
	l := c.Leader()
	waitListed(t, c, l, 10*time.Second)
	p := rcProducer(t, c)
	for i := range 10 {
		sendUntilOK(t, p, "GroupTLS", body(i))
	}
	c.KillBroker(l)
	nl := c.Leader(l)
	waitListed(t, c, nl, 5*time.Second)
	for i := 10; i < 20; i++ {
		sendUntilOK(t, p, "GroupTLS", body(i))
	}
	c.StartBroker(l)
	testwait.Until(t, 30*time.Second, "the old master back as a slave holding every write", func() error {
		var n int64
		for q := int32(0); q < 4; q++ {
			n += c.Broker(l).Core().MaxOffset("GroupTLS", q)
		}
		if c.Broker(l).IsMaster() || n != 20 {
			return fmt.Errorf("old master: master=%v, %d messages of GroupTLS, want 20", c.Broker(l).IsMaster(), n)
		}
		return nil
	})
}
