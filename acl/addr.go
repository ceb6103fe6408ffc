package acl

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// addrPattern matches a client's IP address, as one whiteRemoteAddress or
// globalWhiteRemoteAddresses entry of plain_acl.yml does. A nil pattern
// (a blank entry) matches nothing.
type addrPattern interface {
	match(ip netip.Addr) bool
}

// parseAddrPattern reads the forms Java's RemoteAddressStrategyFactory
// knows: blank (nothing), "*" (every address), "a,b,c" (any of those),
// "192.168.1.{1,2,3}" (the last part one of those), IPv4 with per-part "*"
// or "lo-hi" ranges ("192.168.*", "10.10.1-9.*"), or one address (IPv4 or
// IPv6).
func parseAddrPattern(s string) (addrPattern, error) {
	s = strings.TrimSpace(s)
	switch s {
	case "":
		return nil, nil
	case "*", "*.*.*.*", "*:*:*:*:*:*:*:*":
		return anyAddr{}, nil
	}
	if strings.HasSuffix(s, "}") {
		i := strings.LastIndexByte(s, '{')
		if i < 0 || !strings.HasSuffix(s[:i], ".") || strings.Count(s[:i], ".") != 3 {
			return nil, fmt.Errorf("%q: want a.b.c.{x,y,...}", s)
		}
		var ps oneOf
		for _, last := range strings.Split(s[i+1:len(s)-1], ",") {
			p, err := parseAddrPattern(s[:i] + strings.TrimSpace(last))
			if err != nil {
				return nil, err
			}
			ps = append(ps, p)
		}
		return ps, nil
	}
	if strings.Contains(s, ",") {
		var ps oneOf
		for _, part := range strings.Split(s, ",") {
			p, err := parseAddrPattern(part)
			if err != nil {
				return nil, err
			}
			if p != nil {
				ps = append(ps, p)
			}
		}
		return ps, nil
	}
	if strings.ContainsAny(s, "*-") {
		return parseRange(s)
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return nil, fmt.Errorf("%q is not an address or address pattern", s)
	}
	return oneAddr(a.Unmap()), nil
}

type anyAddr struct{}

func (anyAddr) match(netip.Addr) bool { return true }

type oneAddr netip.Addr

func (o oneAddr) match(ip netip.Addr) bool { return netip.Addr(o) == ip }

type oneOf []addrPattern

func (ps oneOf) match(ip netip.Addr) bool {
	for _, p := range ps {
		if p.match(ip) {
			return true
		}
	}
	return false
}

// ipv4Range holds, per part of an IPv4 address, the inclusive range it
// must fall in.
type ipv4Range [4][2]byte

func parseRange(s string) (addrPattern, error) {
	parts := strings.Split(s, ".")
	if len(parts) > 4 || len(parts) < 4 && parts[len(parts)-1] != "*" {
		return nil, fmt.Errorf("%q: want an IPv4 pattern such as 192.168.*, 10.0.0.1-99", s)
	}
	var r ipv4Range
	for i := range r {
		part := "*"
		if i < len(parts) {
			part = strings.TrimSpace(parts[i])
		}
		if part == "*" {
			r[i] = [2]byte{0, 255}
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		if !isRange {
			hi = lo
		}
		l, err1 := strconv.ParseUint(lo, 10, 8)
		h, err2 := strconv.ParseUint(hi, 10, 8)
		if err1 != nil || err2 != nil || l > h {
			return nil, fmt.Errorf("%q: part %q is not a number, * or lo-hi within 0-255", s, part)
		}
		r[i] = [2]byte{byte(l), byte(h)}
	}
	return r, nil
}

func (r ipv4Range) match(ip netip.Addr) bool {
	if !ip.Is4() {
		return false
	}
	b := ip.As4()
	for i, rg := range r {
		if b[i] < rg[0] || b[i] > rg[1] {
			return false
		}
	}
	return true
}

// RemoteIP returns the IP of a connection's "ip:port" remote address, or
// the invalid Addr, which no pattern but "*" matches.
func RemoteIP(remote string) netip.Addr {
	if ap, err := netip.ParseAddrPort(remote); err == nil {
		return ap.Addr().Unmap()
	}
	if a, err := netip.ParseAddr(remote); err == nil {
		return a.Unmap()
	}
	return netip.Addr{}
}
