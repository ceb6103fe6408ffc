package main

import (
	"os"
	"testing"

	"github.com/apache/rocketmq-client-go/v2/rlog"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// The official client (used to produce in process tests) logs at info.
	rlog.SetLogLevel("error")
	code := m.Run()
	removeBinary()
	if code == 0 {
		if err := goleak.Find(
			// netpoll starts its pollers once per process and never stops them.
			goleak.IgnoreAnyFunction("github.com/cloudwego/netpoll.(*defaultPoll).Wait"),
			// The official client starts a cache janitor when its packages
			// load, for the life of the process.
			goleak.IgnoreAnyFunction("github.com/patrickmn/go-cache.(*janitor).Run"),
			// Its producer's periodic tasks sleep up to 10 s before their
			// first tick and only then see that Shutdown closed them.
			goleak.IgnoreAnyFunction("github.com/apache/rocketmq-client-go/v2/internal.(*rmqClient).Start.func1.1"),
			goleak.IgnoreAnyFunction("github.com/apache/rocketmq-client-go/v2/internal.(*rmqClient).Start.func1.2"),
			goleak.IgnoreAnyFunction("github.com/apache/rocketmq-client-go/v2/internal.(*rmqClient).Start.func1.3"),
			goleak.IgnoreAnyFunction("github.com/apache/rocketmq-client-go/v2/internal.(*rmqClient).Start.func1.4"),
		); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}
