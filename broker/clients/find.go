package clients

import "sort"

// ClientChannels returns the channels a client id registered: those of its
// producer groups first, then those of its consumer groups, each set newest
// heartbeat first, one per connection. It is how the broker finds a client
// by id (Java ProducerManager.findChannel, used to push a reply to the
// client that sent the request).
func (m *Manager[C]) ClientChannels(clientID string) []Channel[C] {
	m.mu.Lock()
	defer m.mu.Unlock()
	seen := map[uint64]bool{}
	var out []Channel[C]
	collect := func(set map[chanKey]*Channel[C]) []Channel[C] {
		var found []Channel[C]
		for k, c := range set {
			if k.clientID == clientID && !seen[k.connID] {
				seen[k.connID] = true
				found = append(found, *c)
			}
		}
		sort.Slice(found, func(i, j int) bool { return found[i].LastUpdate.After(found[j].LastUpdate) })
		return found
	}
	var prod []Channel[C]
	for _, p := range m.mu.producers {
		prod = append(prod, collect(p)...)
	}
	sort.SliceStable(prod, func(i, j int) bool { return prod[i].LastUpdate.After(prod[j].LastUpdate) })
	out = append(out, prod...)
	var cons []Channel[C]
	for _, g := range m.mu.consumers {
		cons = append(cons, collect(g.channels)...)
	}
	sort.SliceStable(cons, func(i, j int) bool { return cons[i].LastUpdate.After(cons[j].LastUpdate) })
	return append(out, cons...)
}
