package remoting

import (
	"fmt"
	"testing"
)

// BenchmarkRoundTripTLS measures round trips over TLS next to plain ones on
// the same permissive server, so the ratio is the cost of TLS alone (the
// plain connections keep netpoll's path; TLS ones go through crypto/tls
// whichever transport accepted them). Server and client share the process.
//
//	go test -run '^$' -bench RoundTripTLS -benchtime 2s ./remoting
func BenchmarkRoundTripTLS(b *testing.B) {
	for _, inflight := range []int{1, 64} {
		for _, tr := range []string{TransportNetpoll, TransportStd} {
			// Plain and TLS alternate innermost, measured close together.
			for _, wire := range []string{"plain", "tls"} {
				b.Run(fmt.Sprintf("inflight=%d/transport=%s/wire=%s", inflight, tr, wire), func(b *testing.B) {
					s, _ := startTLSServer(b, tr, TLSPermissive)
					mod := func(*ClientConfig) {}
					if wire == "tls" {
						mod = func(c *ClientConfig) { c.TLS, _ = ClientTLSConfig("") }
					}
					benchRoundTripWith(b, s.Addr(), inflight, 1, mod)
				})
			}
		}
	}
}
