package remoting

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// benchServerEnv, when set to a transport name, makes the test binary run a
// benchmark server instead of the tests: it prints the listen address and
// serves until its stdin closes.
const benchServerEnv = "RUNNEL_BENCH_SERVER"

// BenchmarkRoundTrip measures request/response round trips per second over
// loopback: the netpoll server against the same handler on the standard
// library's net, with 1 and 64 requests in flight on one connection and
// with 16 connections. The client is the same for both.
//
// proc=separate runs the server in a child process, as a broker runs apart
// from its clients; proc=same runs it inside the benchmark process, where
// the client's and the server's wake-ups share one Go scheduler.
//
//	go test -run '^$' -bench RoundTrip -benchtime 1s ./remoting
func BenchmarkRoundTrip(b *testing.B) {
	cases := []struct{ inflight, conns int }{
		{1, 1},
		{64, 1},
		{16, 16},
		{256, 16},
	}
	// Transports alternate innermost so that each pair is measured close
	// together in time on a shared machine.
	for _, proc := range []string{"separate", "same"} {
		for _, c := range cases {
			for _, tr := range []string{TransportNetpoll, TransportStd} {
				name := fmt.Sprintf("proc=%s/inflight=%d/conns=%d/transport=%s", proc, c.inflight, c.conns, tr)
				b.Run(name, func(b *testing.B) {
					var addr string
					if proc == "same" {
						addr = startServer(b, tr, nil, map[int16]Handler{codeEcho: echo}).Addr()
					} else {
						addr = startServerProcess(b, tr)
					}
					benchRoundTrip(b, addr, c.inflight, c.conns)
				})
			}
		}
	}
}

// runBenchServer is the child process of proc=separate.
func runBenchServer(transport string) int {
	cfg := DefaultServerConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.Transport = transport
	cfg.Logger = quietLogger()
	s, err := NewServer(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	s.Handle(codeEcho, echo)
	if err := s.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(s.Addr())
	io.Copy(io.Discard, os.Stdin)
	s.Close()
	return 0
}

func startServerProcess(b *testing.B, transport string) string {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), benchServerEnv+"="+transport)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatalf("benchmark server: %v", err)
	}
	return strings.TrimSpace(line)
}

func benchRoundTrip(b *testing.B, addr string, inflight, conns int) {
	clients := make([]*Client, conns)
	for i := range clients {
		clients[i] = newClient(b, nil)
		// Connect up front so dialling is not measured.
		if _, err := clients[i].Conn(context.Background(), addr); err != nil {
			b.Fatal(err)
		}
	}
	// A request shaped like a small SEND_MESSAGE_V2: a few extFields and a
	// 128-byte body.
	req := protocol.NewRequest(codeEcho, map[string]string{
		"a": "producer-group", "b": "BenchTopic", "e": "3", "i": "UNIQ_KEY\x01" + "7F0000010001", "k": "x",
	}, make([]byte, 128))

	var left atomic.Int64
	left.Store(int64(b.N))
	var wg sync.WaitGroup
	ctx := context.Background()
	b.ResetTimer()
	start := time.Now()
	for w := 0; w < inflight; w++ {
		cl := clients[w%conns]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for left.Add(-1) >= 0 {
				if _, err := cl.Invoke(ctx, addr, req); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "rt/s")
}
