package remoting

import (
	"os"
	"runtime"
	"testing"
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
	if netpollPollers < 1 {
		t.Fatalf("netpollPollers %d after a netpoll Start", netpollPollers)
	}
	want := 1 + netpollPollers
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
	if got := runtime.GOMAXPROCS(0); got != other+netpollPollers {
		t.Fatalf("GOMAXPROCS %d after a netpoll Start at %d, want %d", got, other, other+netpollPollers)
	}

	runtime.GOMAXPROCS(1)
	startServer(t, TransportNetpoll, func(c *ServerConfig) { c.NetpollKeepGOMAXPROCS = true }, nil)
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Fatalf("GOMAXPROCS %d after a Start told to keep it at 1", got)
	}
}
