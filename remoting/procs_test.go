package remoting

import (
	"errors"
	"os"
	"runtime"
	"testing"

	"github.com/cloudwego/netpoll"
)

// TestNetpollAddsPollerProcs checks that a netpoll Server's start gives
// back the P each poller holds while it waits, once for a given GOMAXPROCS,
// and not when told to keep it or when the environment fixed it.
func TestNetpollAddsPollerProcs(t *testing.T) {
	if _, ok := os.LookupEnv("GOMAXPROCS"); ok {
		t.Skip("GOMAXPROCS is set in the environment: Start leaves it alone")
	}
	prev := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(prev) })

	runtime.GOMAXPROCS(1)
	startServer(t, TransportNetpoll, nil, nil)
	if processNetpoll.pollers < 1 {
		t.Fatalf("processNetpoll.pollers %d after a netpoll Start", processNetpoll.pollers)
	}
	want := 1 + processNetpoll.pollers
	if got := runtime.GOMAXPROCS(0); got != want {
		t.Fatalf("GOMAXPROCS %d after a netpoll Start at 1, want %d", got, want)
	}
	startServer(t, TransportNetpoll, nil, nil)
	if got := runtime.GOMAXPROCS(0); got != want {
		t.Fatalf("a second Start moved GOMAXPROCS from %d to %d", want, got)
	}
	startServer(t, TransportStd, nil, nil)
	if got := runtime.GOMAXPROCS(0); got != want {
		t.Fatalf("a std Start moved GOMAXPROCS from %d to %d", want, got)
	}

	// Someone else sets another value: the next Start adds the pollers'
	// Ps to it.
	other := want + 1
	runtime.GOMAXPROCS(other)
	startServer(t, TransportNetpoll, nil, nil)
	if got := runtime.GOMAXPROCS(0); got != other+processNetpoll.pollers {
		t.Fatalf("GOMAXPROCS %d after a netpoll Start at %d, want %d", got, other, other+processNetpoll.pollers)
	}

	runtime.GOMAXPROCS(1)
	startServer(t, TransportNetpoll, func(c *ServerConfig) { c.NetpollKeepGOMAXPROCS = true }, nil)
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Fatalf("GOMAXPROCS %d after a Start told to keep it at 1", got)
	}
}

// TestNetpollSetUp checks what configuring netpoll is given and returns: a
// failure counts no pollers (so no P is added for them) and is what every
// later Start gets too, without configuring again; success counts the
// configured pollers or netpoll's default.
func TestNetpollSetUp(t *testing.T) {
	cfg := DefaultServerConfig()
	cfg.NetpollPollers = 3
	boom := errors.New("epoll_create1: too many open files")
	calls := 0
	var failed netpollSetup
	for start := range 2 {
		n, err := failed.do(&cfg, func(c netpoll.Config) error {
			calls++
			if c.PollerNum != 3 || c.BufferSize != netpollReadSize {
				t.Errorf("configured with %d pollers and %d-byte reads, want 3 and %d", c.PollerNum, c.BufferSize, netpollReadSize)
			}
			return boom
		})
		if !errors.Is(err, boom) || n != 0 {
			t.Fatalf("start %d after a failed configure: %d pollers, err %v", start+1, n, err)
		}
	}
	if calls != 1 {
		t.Fatalf("netpoll configured %d times, want once", calls)
	}
	var ok netpollSetup
	if n, err := ok.do(&cfg, func(netpoll.Config) error { return nil }); err != nil || n != 3 {
		t.Fatalf("3 pollers configured: %d, err %v", n, err)
	}
	cfg.NetpollPollers = 0
	var def netpollSetup
	if n, err := def.do(&cfg, func(netpoll.Config) error { return nil }); err != nil || n != runtime.GOMAXPROCS(0)/20+1 {
		t.Fatalf("netpoll's default: %d pollers, err %v", n, err)
	}
}
