package auth

import (
	"strings"
	"sync"
	"sync/atomic"
)

// MemStore is a Store in memory: a name server's users (its initial ones,
// nothing else writes them) and tests.
type MemStore struct {
	mu      sync.Mutex
	recs    map[string][]byte
	version atomic.Uint64
}

// NewMemStore returns an empty MemStore.
func NewMemStore() *MemStore { return &MemStore{recs: map[string][]byte{}} }

// PutAuth stores a copy of v as name.
func (s *MemStore) PutAuth(name string, v []byte) error {
	s.mu.Lock()
	s.recs[name] = append([]byte(nil), v...)
	s.mu.Unlock()
	s.version.Add(1)
	return nil
}

// DeleteAuth deletes name.
func (s *MemStore) DeleteAuth(name string) error {
	s.mu.Lock()
	delete(s.recs, name)
	s.mu.Unlock()
	s.version.Add(1)
	return nil
}

// RangeAuth calls fn for every record whose name starts with prefix, in no
// order, until fn returns false.
func (s *MemStore) RangeAuth(prefix string, fn func(string, []byte) bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range s.recs {
		if strings.HasPrefix(k, prefix) && !fn(k, v) {
			break
		}
	}
	return nil
}

// AuthVersion moves with every write.
func (s *MemStore) AuthVersion() uint64 { return s.version.Load() }
