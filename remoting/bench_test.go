package remoting

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/pprof"
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

// benchServerTLSEnv, when set, makes the benchmark server permissive
// (BenchmarkRoundTripTLS).
const benchServerTLSEnv = "RUNNEL_BENCH_SERVER_TLS"

// benchServerProfileEnv, when set to a path, makes the benchmark server
// write a CPU profile of its whole life there, so the server side of
// proc=separate can be profiled on its own:
//
//	RUNNEL_BENCH_SERVER_CPUPROFILE=/tmp/server.pprof go test -run '^$' -bench 'RoundTrip/proc=separate/inflight=64/conns=1/transport=netpoll' ./remoting
//
// With several sub-benchmarks each server overwrites the file; select one.
const benchServerProfileEnv = "RUNNEL_BENCH_SERVER_CPUPROFILE"

// BenchmarkRoundTrip measures request/response round trips per second over
// loopback: the netpoll server against the same handler on the standard
// library's net, with 1 and 64 requests in flight on one connection and
// with 16 connections. The client is the same for both.
//
// proc=separate runs the server in a child process, as a broker runs apart
// from its clients; proc=same runs it inside the benchmark process, where
// the client's and the server's wake-ups share one Go scheduler.
// proc=separate also reports the server process's CPU time (user + system)
// per round trip, srv-cpu-ns/op, which other load on the machine disturbs
// less than the round trips/s.
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
					if proc == "same" {
						addr := startServer(b, tr, nil, map[int16]Handler{codeEcho: echo}).Addr()
						benchRoundTrip(b, addr, c.inflight, c.conns)
						return
					}
					addr, stop := startServerProcess(b, tr)
					benchRoundTrip(b, addr, c.inflight, c.conns)
					// The server's CPU includes its start and the clients'
					// dials, which a run of a second makes negligible.
					b.ReportMetric(float64(stop().Nanoseconds())/float64(b.N), "srv-cpu-ns/op")
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
	if os.Getenv(benchServerTLSEnv) != "" {
		cfg.TLSMode, cfg.TLS = TLSPermissive, devTLS.cfg
	}
	s, err := NewServer(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	s.Handle(codeEcho, echo)
	if path := os.Getenv(benchServerProfileEnv); path != "" {
		f, err := os.Create(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	if err := s.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(s.Addr())
	io.Copy(io.Discard, os.Stdin)
	s.Close()
	return 0
}

// startServerProcess starts a benchmark server in a child process and
// returns its address and a function that stops it and returns the CPU time
// it used. The child is stopped at the end of the benchmark if stop was not
// called.
func startServerProcess(b *testing.B, transport string, env ...string) (addr string, stop func() time.Duration) {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), benchServerEnv+"="+transport), env...)
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
	var once sync.Once
	stop = func() time.Duration {
		once.Do(func() {
			stdin.Close()
			cmd.Wait()
		})
		if st := cmd.ProcessState; st != nil {
			return st.UserTime() + st.SystemTime()
		}
		return 0
	}
	b.Cleanup(func() { stop() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatalf("benchmark server: %v", err)
	}
	return strings.TrimSpace(line), stop
}

func benchRoundTrip(b *testing.B, addr string, inflight, conns int) {
	benchRoundTripWith(b, addr, inflight, conns, nil)
}

// benchRoundTripWith is benchRoundTrip with mod adjusting each client's
// config.
func benchRoundTripWith(b *testing.B, addr string, inflight, conns int, mod func(*ClientConfig)) {
	clients := make([]*Client, conns)
	for i := range clients {
		clients[i] = newClient(b, mod)
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
