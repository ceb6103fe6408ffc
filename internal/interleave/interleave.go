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
func Run(n, slice, par int, sends []func() error) (Result, error) {
	res := Result{Total: make([]time.Duration, len(sends))}
	for done, round := 0, 0; done < n; round++ {
		k := min(slice, n-done)
		rd := make([]time.Duration, len(sends))
		for j := range sends {
			i := (j + round) % len(sends)
			start := time.Now()
			if err := parallel(k, par, sends[i]); err != nil {
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

// parallel makes k calls of send from par goroutines.
func parallel(k, par int, send func() error) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		next  int
		first error
	)
	for range par {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if next >= k || first != nil {
					mu.Unlock()
					return
				}
				next++
				mu.Unlock()
				if err := send(); err != nil {
					mu.Lock()
					first = err
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}
