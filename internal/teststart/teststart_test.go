package teststart

import (
	"context"
	"testing"
)

type thing struct{ started, stopped bool }

func (x *thing) Start(context.Context) error    { x.started = true; return nil }
func (x *thing) Shutdown(context.Context) error { x.stopped = true; return nil }

// Started starts what it is given and shuts it down when the test ends,
// not before.
func TestStartedShutsDownAtCleanup(t *testing.T) {
	x := &thing{}
	t.Run("user", func(t *testing.T) {
		if got := Started(t, x, nil); got != x || !x.started || x.stopped {
			t.Fatalf("after Started: %+v", x)
		}
	})
	if !x.stopped {
		t.Fatal("not shut down when the test ended")
	}
}
