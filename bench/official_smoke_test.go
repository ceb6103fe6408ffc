//go:build !race

// The official client's consumers race inside themselves; this runs in the
// race-free pass only.

package main

import "testing"

func TestSmokeOfficial(t *testing.T) {
	runSmoke(t, &officialSystem{}, natsSystem{})
}
