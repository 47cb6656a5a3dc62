package accounts

import "testing"

func TestScopeOf(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]IPScope{
		"127.0.0.1":          ScopeLoopback,
		"127.255.10.3":       ScopeLoopback,
		"::1":                ScopeLoopback,
		"0:0:0:0:0:0:0:1":    ScopeLoopback,
		"[::1]":              ScopeLoopback,
		"::ffff:127.0.0.1":   ScopeLoopback,
		"10.1.2.3":           ScopePrivate,
		"172.16.0.1":         ScopePrivate,
		"172.31.255.255":     ScopePrivate,
		"192.168.1.20":       ScopePrivate,
		"169.254.1.1":        ScopePrivate,
		"fc00::1":            ScopePrivate,
		"fd12:3456::9":       ScopePrivate,
		"fe80::1":            ScopePrivate,
		"febf::abcd":         ScopePrivate,
		"fe80::1%eth0":       ScopePrivate,
		"::ffff:192.168.0.7": ScopePrivate,
		"172.15.0.1":         ScopePublic,
		"172.32.0.1":         ScopePublic,
		"192.169.1.1":        ScopePublic,
		"8.8.8.8":            ScopePublic,
		"2001:db8::1":        ScopePublic,
		"fec0::1":            ScopePublic,
		"::2":                ScopePublic,
		"":                   ScopeUnknown,
		"   ":                ScopeUnknown,
		"not-an-ip":          ScopeUnknown,
		"999.1.1.1":          ScopeUnknown,
		"10.0.0.1:8080":      ScopeUnknown,
	} {
		if got := ScopeOf(addr); got != want {
			t.Errorf("ScopeOf(%q) = %q, want %q", addr, got, want)
		}
	}
}

// An IPv6 address counts as its /64, an IPv4 address (mapped or not) as
// itself, and anything else as it is.
func TestNetworkOf(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]string{
		"203.0.113.7":               "203.0.113.7",
		"::ffff:203.0.113.7":        "203.0.113.7",
		"2001:db8:1:2::1":           "2001:db8:1:2::/64",
		"2001:db8:1:2:ffff:ffff::9": "2001:db8:1:2::/64",
		"2001:db8:1:3::1":           "2001:db8:1:3::/64",
		"fe80::1%eth0":              "fe80::/64",
		"::1":                       "::/64",
		"":                          "",
		"not an address":            "not an address",
	} {
		if got := NetworkOf(addr); got != want {
			t.Errorf("NetworkOf(%q) = %q, want %q", addr, got, want)
		}
	}
}

// SiteOf groups an IPv6 site's /48 (from an address or its NetworkOf /64)
// and keeps an IPv4 address as it is.
func TestSiteOf(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]string{
		"203.0.113.7":        "203.0.113.7",
		"::ffff:203.0.113.7": "203.0.113.7",
		"2001:db8:1:2::1":    "2001:db8:1::/48",
		"2001:db8:1:ff00::9": "2001:db8:1::/48",
		"2001:db8:1:2::/64":  "2001:db8:1::/48",
		"2001:db8:2:2::/64":  "2001:db8:2::/48",
		"fe80::1%eth0":       "fe80::/48",
		"":                   "",
		"not an address":     "not an address",
	} {
		if got := SiteOf(addr); got != want {
			t.Errorf("SiteOf(%q) = %q, want %q", addr, got, want)
		}
	}
}
