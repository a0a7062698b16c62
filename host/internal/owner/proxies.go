package owner

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// SettingTrustedProxies is the app setting naming the front ends (reverse
// proxies, ingresses, load balancers) trusted to say who their client is
// in X-Forwarded-For: addresses and CIDR ranges, separated by commas or
// spaces. Unset, no front end is trusted and a client's address is the
// address of its connection.
const SettingTrustedProxies = "FUNCMCP_TRUSTED_PROXIES"

// maxForwardedHops bounds the X-Forwarded-For entries read from the right:
// a chain of trusted proxies longer than this names its leftmost trusted
// hop read.
const maxForwardedHops = 32

// Proxies are the front ends trusted to name their client in
// X-Forwarded-For. The nil *Proxies trusts none.
type Proxies struct {
	nets []netip.Prefix
}

// ParseProxies reads a list of addresses and CIDR ranges separated by
// commas or spaces (the value of [SettingTrustedProxies]); "" trusts none
// (nil).
func ParseProxies(list string) (*Proxies, error) {
	p := &Proxies{}
	for _, f := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		if !strings.Contains(f, "/") {
			a, err := netip.ParseAddr(f)
			if err != nil {
				return nil, fmt.Errorf("reading the trusted proxies: %q is neither an address nor a CIDR range", f)
			}
			a = a.Unmap()
			p.nets = append(p.nets, netip.PrefixFrom(a, a.BitLen()))
			continue
		}
		n, err := netip.ParsePrefix(f)
		if err != nil {
			return nil, fmt.Errorf("reading the trusted proxies: %q is neither an address nor a CIDR range", f)
		}
		if n.Addr().Is4In6() && n.Bits() >= 96 {
			n = netip.PrefixFrom(n.Addr().Unmap(), n.Bits()-96)
		}
		p.nets = append(p.nets, n.Masked())
	}
	if len(p.nets) == 0 {
		return nil, nil
	}
	return p, nil
}

// Trusts reports whether a is one of the trusted front ends.
func (p *Proxies) Trusts(a netip.Addr) bool {
	if p == nil || !a.IsValid() {
		return false
	}
	a = a.Unmap().WithZone("")
	for _, n := range p.nets {
		if n.Contains(a) {
			return true
		}
	}
	return false
}

// Client returns the owner named by r's client address. A connection from
// a trusted front end names its client in X-Forwarded-For: the entries
// are read from the right (each proxy appends the address it saw), and
// the first that is not a trusted front end is the client; the entries
// left of it were written by the client and are never believed. A
// connection from anywhere else is its own client, whatever it sends.
func (p *Proxies) Client(r *http.Request) ID {
	peer := hostAddr(r.RemoteAddr)
	if !p.Trusts(peer) {
		return Address(r.RemoteAddr)
	}
	last := peer
	vals := r.Header.Values("X-Forwarded-For")
	hops := 0
	for i := len(vals) - 1; i >= 0; i-- {
		v := vals[i]
		for v != "" {
			if hops++; hops > maxForwardedHops {
				return addrID(last)
			}
			var hop string
			if j := strings.LastIndexByte(v, ','); j >= 0 {
				v, hop = v[:j], v[j+1:]
			} else {
				v, hop = "", v
			}
			hop = strings.TrimSpace(hop)
			if hop == "" {
				continue
			}
			a := hostAddr(hop)
			if !a.IsValid() {
				// What a trusted front end wrote is not an address:
				// nothing left of it is believed either.
				return addrID(last)
			}
			if !p.Trusts(a) {
				return addrID(a)
			}
			last = a
		}
	}
	return addrID(last)
}

// hostAddr parses an address with or without a port ("1.2.3.4",
// "1.2.3.4:80", "[::1]:80", "::1"); the zero Addr when it is none.
func hostAddr(s string) netip.Addr {
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap()
	}
	if h, _, err := net.SplitHostPort(s); err == nil {
		if a, err := netip.ParseAddr(h); err == nil {
			return a.Unmap()
		}
	}
	if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")); err == nil {
		return a.Unmap()
	}
	return netip.Addr{}
}

func addrID(a netip.Addr) ID { return ID("addr:" + a.WithZone("").String()) }
