package testserver

import (
	"net/http"
	"net/netip"
	"strconv"
	"strings"
)

// ipResolver finds a request's client address and groups it into a key.
type ipResolver struct {
	trusted []netip.Prefix
	v4Bits  int
	v6Bits  int
}

// clientKey returns the grouped client address: a plain address for a full-length prefix, a
// prefix in CIDR notation otherwise, or the raw RemoteAddr when it is not an IP address.
func (p *ipResolver) clientKey(r *http.Request) string {
	return string(p.appendClientKey(nil, r))
}

// appendClientKey appends clientKey(r) to dst.
func (p *ipResolver) appendClientKey(dst []byte, r *http.Request) []byte {
	addr, ok := parseHostAddr(r.RemoteAddr)
	if !ok {
		return append(dst, r.RemoteAddr...)
	}
	if p.isTrusted(addr) {
		if fwd, ok := p.forwarded(r); ok {
			addr = fwd
		}
	}
	bits := p.v4Bits
	if addr.Is6() {
		bits = p.v6Bits
	}
	if bits >= addr.BitLen() {
		return addr.AppendTo(dst)
	}
	pfx, err := addr.Prefix(bits)
	if err != nil {
		return addr.AppendTo(dst)
	}
	// Prefix.String: the masked address, "/", the prefix length.
	dst = pfx.Addr().AppendTo(dst)
	dst = append(dst, '/')
	return strconv.AppendInt(dst, int64(pfx.Bits()), 10)
}

func (p *ipResolver) isTrusted(a netip.Addr) bool {
	for _, pfx := range p.trusted {
		if pfx.Contains(a) {
			return true
		}
	}
	return false
}

// forwarded returns the client named by X-Forwarded-For (walking from the right past trusted
// proxies) or, without it, by X-Real-IP. It is called only for requests from a trusted proxy.
func (p *ipResolver) forwarded(r *http.Request) (netip.Addr, bool) {
	if xff := r.Header.Values("X-Forwarded-For"); len(xff) > 0 {
		hops := strings.Split(strings.Join(xff, ","), ",")
		var last netip.Addr
		found := false
		for i := len(hops) - 1; i >= 0; i-- {
			a, ok := parseHostAddr(strings.TrimSpace(hops[i]))
			if !ok {
				// A malformed hop: stop trusting the chain here.
				break
			}
			last, found = a, true
			if !p.isTrusted(a) {
				return a, true
			}
		}
		if found {
			return last, true
		}
		return netip.Addr{}, false
	}
	if v := strings.TrimSpace(r.Header.Get("X-Real-IP")); v != "" {
		if a, ok := parseHostAddr(v); ok {
			return a, true
		}
	}
	return netip.Addr{}, false
}

// parseHostAddr parses "ip", "ip:port" or "[ipv6]:port", unmapping IPv4-in-IPv6 and dropping
// zones.
func parseHostAddr(s string) (netip.Addr, bool) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap().WithZone(""), true
	}
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap().WithZone(""), true
	}
	return netip.Addr{}, false
}
