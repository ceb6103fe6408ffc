package routeinfo

import "github.com/runnelmq/runnel/remoting/protocol"

// WipeWritePerm takes write permission from every topic's queue data of
// broker group brokerName (mqadmin wipeWritePerm, RocketMQ
// RouteInfoManager.wipeWritePermOfBrokerByLock): clients routed by this
// table stop sending there while they still consume. It returns how many
// topics it changed, counting those already without it, as Java does.
//
// The change lasts until the group's master registers a topic table with
// a new data version, which rewrites its queue data (as in Java); a
// registration with the same version leaves it alone.
func (t *Table) WipeWritePerm(brokerName string) int {
	return t.setWritePerm(brokerName, func(perm int) int { return perm &^ protocol.PermWrite })
}

// AddWritePerm gives back write permission (AddWritePermOfBrokerByLock):
// every topic's queue data of brokerName becomes read and write, whatever
// other bits it had (Java sets PERM_READ|PERM_WRITE, dropping inherit). It
// returns how many topics it changed.
func (t *Table) AddWritePerm(brokerName string) int {
	return t.setWritePerm(brokerName, func(int) int { return protocol.PermRead | protocol.PermWrite })
}

func (t *Table) setWritePerm(brokerName string, perm func(int) int) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, qs := range t.mu.topics {
		if i, ok := qs.find(brokerName); ok {
			qs[i].Perm = perm(qs[i].Perm)
			n++
		}
	}
	return n
}
