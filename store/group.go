package store

import (
	"github.com/runnelmq/runnel/groupconf"
	"github.com/runnelmq/runnel/store/meta"
)

// Groups lists every stored subscription config, by group name.
func (s *Store) Groups() ([]groupconf.Config, error) {
	return scanAll(s, meta.GroupBounds, meta.DecodeGroup)
}
