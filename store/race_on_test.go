//go:build race

package store

// raceEnabled: tests that are slow under the race detector do less.
const raceEnabled = true
