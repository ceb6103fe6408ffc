// Package teststart starts what a test needs and shuts it down when the
// test ends: anything with Start and Shutdown, our client's producers and
// consumers above all. It imports nothing of Runnel's, so the client's own
// tests may use it as well as the helpers built on the client.
package teststart

import (
	"context"
	"testing"
)

// Startable is what Started starts.
type Startable interface {
	Start(context.Context) error
	Shutdown(context.Context) error
}

// Started fails t with err (making or configuring c failed), else starts
// c, shut down at t's cleanup, and returns it.
func Started[C Startable](t testing.TB, c C, err error) C {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Shutdown(context.Background()) })
	return c
}
