// Package interleave measures setups side by side inside one benchmark:
// it sends against each in turn, a short slice at a time, so the load of a
// shared machine, which changes from second to second, lands on every
// setup alike. Runs of separate processes one after another (even
// alternating) compare seconds far apart; a slice here lasts milliseconds.
package interleave

import (
	"slices"
	"sync"
	"time"
)

// Result is what Run measured: per setup, its total wall time over all
// slices, and per round the time of each setup's slice.
type Result struct {
	Total  []time.Duration
	Rounds [][]time.Duration // Rounds[r][i]: setup i's slice of round r
}

// Ratio is setup i's throughput next to setup 0's over the whole run:
// setup 0's total time over setup i's (above 1: i is faster).
func (r Result) Ratio(i int) float64 { return float64(r.Total[0]) / float64(r.Total[i]) }

// MedianRatio is the median over rounds of setup 0's slice time over
// setup i's.
func (r Result) MedianRatio(i int) float64 {
	xs := make([]float64, 0, len(r.Rounds))
	for _, rd := range r.Rounds {
		xs = append(xs, float64(rd[0])/float64(rd[i]))
	}
	slices.Sort(xs)
	if len(xs) == 0 {
		return 0
	}
	if len(xs)%2 == 1 {
		return xs[len(xs)/2]
	}
	return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
}

// Run makes n calls of each send, from par goroutines, in rounds: each
// round runs a slice of `slice` calls against every setup, the first
// setup of a round rotating so none always follows another. It stops at
// the first error, returning it.
//
// The par goroutines live for the whole run, as an application's senders
// do: goroutines started per slice grew their stacks anew every slice,
// which charged a setup with a deeper send path (a signed request) for
// stack copies no long-lived sender pays.
func Run(n, slice, par int, sends []func() error) (Result, error) {
	res := Result{Total: make([]time.Duration, len(sends))}
	p := startSenders(par)
	defer p.stop()
	for done, round := 0, 0; done < n; round++ {
		k := min(slice, n-done)
		rd := make([]time.Duration, len(sends))
		for j := range sends {
			i := (j + round) % len(sends)
			start := time.Now()
			if err := p.run(k, sends[i]); err != nil {
				return res, err
			}
			rd[i] = time.Since(start)
			res.Total[i] += rd[i]
		}
		res.Rounds = append(res.Rounds, rd)
		done += k
	}
	return res, nil
}

// senders are the goroutines that make a run's calls.
type senders struct {
	par   int
	slice chan *sliceRun
	wg    sync.WaitGroup
}

// sliceRun is one slice: k calls of send, shared by every sender.
type sliceRun struct {
	k    int
	send func() error
	done sync.WaitGroup

	mu    sync.Mutex
	next  int
	first error
}

func startSenders(par int) *senders {
	p := &senders{par: par, slice: make(chan *sliceRun)}
	for range par {
		p.wg.Go(func() {
			for s := range p.slice {
				s.work()
				s.done.Done()
			}
		})
	}
	return p
}

// run makes k calls of send from the senders and returns the first error.
func (p *senders) run(k int, send func() error) error {
	s := &sliceRun{k: k, send: send}
	s.done.Add(p.par)
	for range p.par {
		p.slice <- s
	}
	s.done.Wait()
	return s.first
}

// stop ends the senders and waits for them.
func (p *senders) stop() {
	close(p.slice)
	p.wg.Wait()
}

// work makes calls of the slice's send until k are made or one failed.
func (s *sliceRun) work() {
	for {
		s.mu.Lock()
		if s.next >= s.k || s.first != nil {
			s.mu.Unlock()
			return
		}
		s.next++
		s.mu.Unlock()
		if err := s.send(); err != nil {
			s.mu.Lock()
			if s.first == nil {
				s.first = err
			}
			s.mu.Unlock()
			return
		}
	}
}
