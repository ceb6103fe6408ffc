package core

import (
	"github.com/runnelmq/runnel/broker/clients"
	"github.com/runnelmq/runnel/remoting/protocol"
	"github.com/runnelmq/runnel/store"
)

// filterOf compiles a heartbeat subscription into the store's filter; nil
// passes everything.
func filterOf(s clients.Subscription) store.Filter {
	if protocol.IsSubAll(s.Expression) {
		return nil
	}
	return newTagFilter(s.Tags, s.Codes)
}

// tagFilter matches consume-queue tag hashes against a TAG subscription.
// It holds the codes the subscriber sent and the Java hash of each tag
// string, since the official Go client hashes non-ASCII tags differently
// from the store. Consumers filter by tag string again, so a hash collision
// costs a wasted transfer, never a wrong delivery.
type tagFilter struct {
	codes map[int64]struct{}
}

func newTagFilter(tags []string, codes []int64) store.Filter {
	if len(tags) == 0 && len(codes) == 0 {
		return nil
	}
	f := tagFilter{codes: make(map[int64]struct{}, len(tags)+len(codes))}
	for _, c := range codes {
		f.codes[c] = struct{}{}
	}
	for _, t := range tags {
		if t == protocol.SubAll {
			return nil
		}
		f.codes[protocol.TagsHashCode(t)] = struct{}{}
	}
	return f
}

func (f tagFilter) MatchTagsCode(code int64) bool {
	_, ok := f.codes[code]
	return ok
}

func (f tagFilter) MatchRecord([]byte) bool { return true }
