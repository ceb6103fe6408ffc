package clients

import "sort"

// ClientChannels returns the channels a client id registered: those of its
// producer groups first, then those of its consumer groups, each set newest
// heartbeat first, one per connection. It is how the broker finds a client
// by id (Java ProducerManager.findChannel, used to push a reply to the
// client that sent the request).
func (m *Manager) ClientChannels(clientID string) []Channel {
	m.mu.Lock()
	defer m.mu.Unlock()
	seen := map[uint64]bool{}
	var out []Channel
	collect := func(set map[chanKey]*Channel) []Channel {
		var found []Channel
		for k, c := range set {
			if k.clientID == clientID && !seen[k.connID] {
				seen[k.connID] = true
				found = append(found, *c)
			}
		}
		sort.Slice(found, func(i, j int) bool { return found[i].LastUpdate.After(found[j].LastUpdate) })
		return found
	}
	var prod []Channel
	for _, p := range m.mu.producers {
		prod = append(prod, collect(p)...)
	}
	sort.SliceStable(prod, func(i, j int) bool { return prod[i].LastUpdate.After(prod[j].LastUpdate) })
	out = append(out, prod...)
	var cons []Channel
	for _, g := range m.mu.consumers {
		cons = append(cons, collect(g.channels)...)
	}
	sort.SliceStable(cons, func(i, j int) bool { return cons[i].LastUpdate.After(cons[j].LastUpdate) })
	return append(out, cons...)
}
