// Package keyed owns a mutex per key: one lock for each of many names (a
// topic's writers, a POP queue, an in-flight record), each kept only while
// someone holds or waits for it, so the set never grows with the names
// ever seen.
package keyed

import "sync"

// Mutexes is a mutex per key. The zero value is ready to use.
type Mutexes[K comparable] struct {
	mu   sync.Mutex
	held map[K]*entry
}

type entry struct {
	sync.Mutex
	refs int // holders and waiters, under Mutexes.mu
}

func (l *Mutexes[K]) ref(k K) *entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held == nil {
		l.held = make(map[K]*entry)
	}
	e := l.held[k]
	if e == nil {
		e = &entry{}
		l.held[k] = e
	}
	e.refs++
	return e
}

func (l *Mutexes[K]) unref(k K, e *entry) {
	l.mu.Lock()
	if e.refs--; e.refs == 0 {
		delete(l.held, k)
	}
	l.mu.Unlock()
}

// Lock locks k and returns its unlock.
func (l *Mutexes[K]) Lock(k K) (unlock func()) {
	e := l.ref(k)
	e.Lock()
	return func() {
		e.Unlock()
		l.unref(k, e)
	}
}

// TryLock locks k if nobody holds it, and returns its unlock.
func (l *Mutexes[K]) TryLock(k K) (unlock func(), ok bool) {
	e := l.ref(k)
	if !e.TryLock() {
		l.unref(k, e)
		return nil, false
	}
	return func() {
		e.Unlock()
		l.unref(k, e)
	}, true
}

// Len is how many keys are held or waited for.
func (l *Mutexes[K]) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.held)
}
