package store

import (
	"github.com/cockroachdb/pebble/v2"

	"github.com/runnelmq/runnel/groupconf"
	"github.com/runnelmq/runnel/store/meta"
)

// Groups lists every stored subscription config, by group name.
func (s *Store) Groups() ([]groupconf.Config, error) {
	if err := s.readLock(); err != nil {
		return nil, err
	}
	defer s.closeMu.RUnlock()
	lo, hi := meta.GroupBounds()
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []groupconf.Config
	for ok := it.First(); ok; ok = it.Next() {
		c, err := meta.DecodeGroup(it.Value())
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, it.Error()
}
