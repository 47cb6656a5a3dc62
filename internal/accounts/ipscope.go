package accounts

import (
	"net/netip"
	"strings"
)

// IPScope is where a session's address is, as the sessions list labels it
// (SPEC.md §2: "Local (This Device)", "Internal Network: <ip>", the address).
type IPScope string

// The scopes of an address.
const (
	// ScopeUnknown is an empty address or one that does not parse.
	ScopeUnknown IPScope = ""
	// ScopeLoopback is this device: 127.0.0.0/8 and ::1.
	ScopeLoopback IPScope = "loopback"
	// ScopePrivate is the internal network: RFC 1918 and fc00::/7 unique
	// local addresses, and link-local ones (169.254.0.0/16, fe80::/10).
	ScopePrivate IPScope = "private"
	// ScopePublic is any other address.
	ScopePublic IPScope = "public"
)

// ScopeOf classifies addr with net/netip. It takes what servers and proxies
// report: an IPv4-mapped IPv6 address counts as its IPv4 address, and
// brackets ("[::1]") and a zone ("fe80::1%eth0") are allowed.
func ScopeOf(addr string) IPScope {
	addr = strings.TrimSpace(addr)
	if strings.HasPrefix(addr, "[") && strings.HasSuffix(addr, "]") {
		addr = addr[1 : len(addr)-1]
	}
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return ScopeUnknown
	}
	ip = ip.Unmap()
	switch {
	case ip.IsLoopback():
		return ScopeLoopback
	case ip.IsPrivate(), ip.IsLinkLocalUnicast():
		return ScopePrivate
	}
	return ScopePublic
}

// SiteOf is the site an address or a NetworkOf network belongs to: an IPv4
// address itself, an IPv6 address's /48 (what a site is assigned, RFC 6177:
// one holder may use any of its 65,536 /64s), and anything else as it is.
// The live feed shares a full replica's places between sites.
func SiteOf(addr string) string {
	if p, err := netip.ParsePrefix(addr); err == nil {
		addr = p.Addr().String()
	}
	return v6Prefix(addr, 48)
}

// NetworkOf is whom the per-address limits count an address against: an
// IPv4 address itself, an IPv6 address's /64 (one subscriber, one host or
// one home line holds a whole /64 and may use any address in it, so counting
// each address alone would let one client through as many), and anything
// that does not parse as it is.
func NetworkOf(addr string) string { return v6Prefix(addr, 64) }

// v6Prefix is an IPv6 address's prefix of bits bits; an IPv4 address (or
// one mapped into IPv6) itself, and anything that does not parse as it is.
func v6Prefix(addr string, bits int) string {
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return addr
	}
	ip = ip.Unmap()
	if ip.Is4() {
		return ip.String()
	}
	return netip.PrefixFrom(ip.WithZone(""), bits).Masked().String()
}
