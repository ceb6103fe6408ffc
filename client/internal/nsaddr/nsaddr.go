// Package nsaddr reads RocketMQ's name server address lists, as our client
// and admin client take them: each entry a "host:port", or several joined
// with ';' (Java's namesrvAddr), an "http://" or "https://" prefix
// stripped.
package nsaddr

import (
	"net"
	"strings"
)

// Split returns every address the entries hold, in order, and ok. Empty
// parts are skipped. When a part is not host:port with a port, it returns
// the entry holding it as bad, and not ok.
func Split(entries []string) (addrs []string, bad string, ok bool) {
	for _, e := range entries {
		for _, part := range strings.Split(e, ";") {
			part = strings.TrimSpace(part)
			part = strings.TrimPrefix(strings.TrimPrefix(part, "http://"), "https://")
			if part == "" {
				continue
			}
			if _, port, err := net.SplitHostPort(part); err != nil || port == "" {
				return nil, e, false
			}
			addrs = append(addrs, part)
		}
	}
	return addrs, "", true
}
