// Package latch owns the "first caller wins" step of Close, Stop and Drain
// methods that are safe to call more than once: a flag, kept under the
// owner's mutex, that only the first call sets.
package latch

import "sync"

// Set sets *flag under mu and reports whether this call set it: false
// when an earlier call already had, and the caller has nothing left to do.
func Set(mu sync.Locker, flag *bool) bool {
	mu.Lock()
	defer mu.Unlock()
	if *flag {
		return false
	}
	*flag = true
	return true
}
