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
