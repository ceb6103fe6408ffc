//go:build !race

// The RocketMQ 5 SDK's push consumer races inside itself (its process
// queues share state unguarded); this runs in the race-free pass only.

package main

import (
	"context"
	"testing"
	"time"
)

// One run, not runSmoke's two rounds: an SDK consumer takes about 2 s to
// start and its stop waits out its held receives.
func TestSmokeV5(t *testing.T) {
	s := &v5System{MaxLongPolling: 5 * time.Second} // the door holds a receive at least 5 s
	start := time.Now()
	res, err := s.Run(context.Background(), t.TempDir(), smoke)
	if err != nil {
		t.Fatal(err)
	}
	if res.System != "v5" || res.Msgs != smoke.Msgs || res.Produce.Wall <= 0 || res.Consume.Wall <= 0 || res.Produce.CPU <= 0 || res.BrokerProcess {
		t.Fatalf("result %+v", res)
	}
	t.Logf("%s (the run took %v)", roundLine(1, res), time.Since(start).Round(time.Millisecond))
}
