package remoting

import (
	"fmt"
	"testing"
)

// BenchmarkRoundTripTLS measures round trips over TLS next to plain ones on
// the same permissive server, so the ratio is the cost of TLS alone (the
// plain connections keep netpoll's path; TLS ones go through crypto/tls
// whichever transport accepted them). As in BenchmarkRoundTrip, the server
// runs in a child process and srv-cpu-ns/op is its CPU time per round trip,
// which other load on a shared machine disturbs less than rt/s.
//
//	go test -run '^$' -bench RoundTripTLS -benchtime 2s ./remoting
func BenchmarkRoundTripTLS(b *testing.B) {
	for _, inflight := range []int{1, 64} {
		for _, tr := range []string{TransportNetpoll, TransportStd} {
			// Plain and TLS alternate innermost, measured close together.
			for _, wire := range []string{"plain", "tls"} {
				b.Run(fmt.Sprintf("inflight=%d/transport=%s/wire=%s", inflight, tr, wire), func(b *testing.B) {
					addr, stop := startServerProcess(b, tr, benchServerTLSEnv+"=1")
					mod := func(*ClientConfig) {}
					if wire == "tls" {
						mod = func(c *ClientConfig) { c.TLS, _ = ClientTLSConfig("") }
					}
					benchRoundTripWith(b, addr, inflight, 1, mod)
					b.ReportMetric(float64(stop().Nanoseconds())/float64(b.N), "srv-cpu-ns/op")
				})
			}
		}
	}
}
