package pop

import "sync"

// keyedLocks is a mutex per key, kept only while someone holds or waits
// for it.
type keyedLocks[K comparable] struct {
	mu   sync.Mutex
	held map[K]*keyedLock
}

type keyedLock struct {
	sync.Mutex
	refs int // holders and waiters, under keyedLocks.mu
}

func (l *keyedLocks[K]) ref(k K) *keyedLock {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held == nil {
		l.held = make(map[K]*keyedLock)
	}
	kl := l.held[k]
	if kl == nil {
		kl = &keyedLock{}
		l.held[k] = kl
	}
	kl.refs++
	return kl
}

func (l *keyedLocks[K]) unref(k K, kl *keyedLock) {
	l.mu.Lock()
	if kl.refs--; kl.refs == 0 {
		delete(l.held, k)
	}
	l.mu.Unlock()
}

// lock locks k and returns its unlock.
func (l *keyedLocks[K]) lock(k K) (unlock func()) {
	kl := l.ref(k)
	kl.Lock()
	return func() {
		kl.Unlock()
		l.unref(k, kl)
	}
}

// tryLock locks k if nobody holds it.
func (l *keyedLocks[K]) tryLock(k K) (unlock func(), ok bool) {
	kl := l.ref(k)
	if !kl.TryLock() {
		l.unref(k, kl)
		return nil, false
	}
	return func() {
		kl.Unlock()
		l.unref(k, kl)
	}, true
}

// len is how many keys are held or waited for (for tests).
func (l *keyedLocks[K]) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.held)
}
