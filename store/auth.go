package store

import (
	"bytes"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/runnelmq/runnel/store/meta"
)

// Access-control records: named opaque values that package acl/auth
// writes (ACL 2.0 users and ACLs) through the one apply path, so a
// replicated group carries them like any other op.

// PutAuth stores (or replaces) the access-control record name.
func (s *Store) PutAuth(name string, value []byte) error {
	_, err := s.Apply(&Op{Kind: OpPutAuth, Name: name, Value: value})
	return err
}

// DeleteAuth removes the access-control record name (none is no error).
func (s *Store) DeleteAuth(name string) error {
	_, err := s.Apply(&Op{Kind: OpDeleteAuth, Name: name})
	return err
}

// AuthVersion counts the access-control ops this store has applied since
// it was opened, whichever path they came by (Apply or ApplyEncoded, so a
// replica's too): a cache of the records reloads when it changes. It is
// raised once an op is durable, before Apply returns.
//
// The count starts at this store handle's epoch (authEpochs) times 2^32,
// so two handles of one process never give the same version: a replica
// that installs a snapshot opens a new store whose records may differ,
// and a cache that compared bare counts could see the old number again
// and keep stale users and ACLs. (A handle applying 2^32 auth ops would
// reach the next epoch; no broker comes near.)
func (s *Store) AuthVersion() uint64 { return s.authVersion.Load() }

// GroupsVersion is AuthVersion for the consumer-group configs (OpPutGroup,
// OpDeleteGroup): a replica that is not master, whose log writes the store
// under its in-memory group table, reloads the table when it moves.
func (s *Store) GroupsVersion() uint64 { return s.groupsVersion.Load() }

// authEpochs numbers the store handles opened in this process (Open and
// Restore), for AuthVersion and GroupsVersion.
var authEpochs atomic.Uint64

// RangeAuth calls fn for every access-control record whose name starts
// with prefix, in name order, until fn returns false. value is only valid
// during the call.
func (s *Store) RangeAuth(prefix string, fn func(name string, value []byte) bool) error {
	if err := s.readLock(); err != nil {
		return err
	}
	defer s.closeMu.RUnlock()
	lo, hi := meta.AuthBounds()
	start := meta.AuthKey(prefix)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return err
	}
	defer it.Close()
	for ok := it.SeekGE(start); ok && bytes.HasPrefix(it.Key(), start); ok = it.Next() {
		if !fn(string(it.Key()[len(lo):]), it.Value()) {
			break
		}
	}
	return it.Error()
}
