package main

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/cloudwego/netpoll.(*defaultPoll).Wait"))
}

type syncBuffer struct {
	mu sync.Mutex
	sb strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sb.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sb.String()
}

// TestDevServesRoutableBroker runs "dev" in-process: once both serving
// lines are out, the name server routes TBW102 to the embedded broker; it
// stops when its context ends.
func TestDevServesRoutableBroker(t *testing.T) {
	var out syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- runDev(ctx, devConfig{dir: t.TempDir(), nsListen: "127.0.0.1:0", brokerListen: "127.0.0.1:0",
			log: slog.New(slog.NewTextHandler(io.Discard, nil))}, &out)
	}()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(out.String(), "broker: serving on") {
		if time.Now().After(deadline) {
			t.Fatalf("no serving lines: %q", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	first, _, _ := strings.Cut(out.String(), "\n")
	nsAddr := strings.TrimPrefix(first, "namesrv: serving on ")
	cl := remoting.NewClient(remoting.DefaultClientConfig())
	rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
	resp, err := cl.Invoke(rctx, nsAddr, protocol.NewRequest(protocol.ReqGetRouteInfoByTopic,
		protocol.GetRouteInfoRequestHeader{Topic: "TBW102"}.Encode(), nil))
	rcancel()
	_ = cl.Close()
	if err != nil || resp.Code != protocol.RespSuccess {
		t.Fatalf("TBW102 route from %s: %v %v", nsAddr, resp, err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("dev did not stop")
	}
}
