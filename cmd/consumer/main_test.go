package main

import (
	"os"
	"testing"

	"github.com/apache/rocketmq-client-go/v2/rlog"
	"go.uber.org/goleak"

	"github.com/runnelmq/runnel/internal/leakcheck"
	"github.com/runnelmq/runnel/internal/official"
)

func TestMain(m *testing.M) {
	// The official client (used to produce in process tests) logs at info.
	rlog.SetLogLevel("error")
	code := m.Run()
	removeBinary()
	if code == 0 {
		// The official client (its producer makes the tests' messages)
		// leaves goroutines running.
		if err := goleak.Find(append([]goleak.Option{leakcheck.Netpoll}, official.Leftovers...)...); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}
