package clients

// Census is the number of connected clients of one kind in one group, by
// language, version and protocol: what a metrics scrape reads.
type Census struct {
	Group string
	// ConsumeType is the consumer group's (empty for producers).
	ConsumeType string
	Language    string
	Version     int
	Protocol    string
	Count       int
}

// ProducerCensus counts producer channels by group, language and version.
func (m *Manager[C]) ProducerCensus() []Census {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Census
	for name, set := range m.mu.producers {
		out = appendCensus(out, name, "", set)
	}
	return out
}

// ConsumerCensus counts consumer channels by group, language and version.
func (m *Manager[C]) ConsumerCensus() []Census {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Census
	for name, g := range m.mu.consumers {
		out = appendCensus(out, name, g.data.ConsumeType, g.channels)
	}
	return out
}

func appendCensus[C any](out []Census, group, consumeType string, set map[chanKey]*Channel[C]) []Census {
	start := len(out)
next:
	for _, ch := range set {
		for i := start; i < len(out); i++ {
			if out[i].Language == ch.Language && out[i].Version == ch.Version && out[i].Protocol == ch.Protocol {
				out[i].Count++
				continue next
			}
		}
		out = append(out, Census{Group: group, ConsumeType: consumeType, Language: ch.Language, Version: ch.Version, Protocol: ch.Protocol, Count: 1})
	}
	return out
}
