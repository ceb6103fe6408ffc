// Package gogroup owns the goroutines an owner must wait for as it shuts
// down (a remoting Server or Client, a client instance): it starts them,
// refuses to start more once the owner is stopping, and waits for them.
// Refusing and counting share one lock, so Wait never races a late start.
package gogroup

import "sync"

// Group is a set of goroutines. The zero value is ready to use.
type Group struct {
	mu      sync.Mutex
	stopped bool
	wg      sync.WaitGroup
}

// Go runs fn in a new goroutine and reports true; once Stop was called it
// runs nothing and reports false.
func (g *Group) Go(fn func()) bool {
	if !g.enter() {
		return false
	}
	go func() {
		defer g.wg.Done()
		fn()
	}()
	return true
}

// Run runs fn on the calling goroutine, counted as one of the group's, and
// reports true; once Stop was called it runs nothing and reports false. It
// is for callbacks a library runs on goroutines of its own (netpoll's), so
// that Wait waits for them too.
func (g *Group) Run(fn func()) bool {
	if !g.enter() {
		return false
	}
	defer g.wg.Done()
	fn()
	return true
}

// enter counts one more member unless the group is stopped.
func (g *Group) enter() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		return false
	}
	g.wg.Add(1)
	return true
}

// Stop makes Go and Run refuse from now on. Stopping twice is harmless.
func (g *Group) Stop() {
	g.mu.Lock()
	g.stopped = true
	g.mu.Unlock()
}

// Wait returns once every goroutine Go started, and every fn Run runs, has
// returned. After Stop no new one can start, so Wait then waits for a
// fixed set.
func (g *Group) Wait() { g.wg.Wait() }
