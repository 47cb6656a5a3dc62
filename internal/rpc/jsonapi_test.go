package rpc

import "testing"

// TestIsJSONContentType: the common spellings are taken without parsing,
// and every other is judged by mime.ParseMediaType as before.
func TestIsJSONContentType(t *testing.T) {
	for ct, want := range map[string]bool{
		"application/json":                  true,
		"application/json; charset=utf-8":   true,
		"application/json;charset=UTF-8":    true,
		"Application/JSON":                  true,
		"application/json ; charset=utf-8":  true,
		"application/json; charset":         true, // an unreadable parameter, as before
		"":                                  false,
		"text/plain":                        false,
		"application/jsonx":                 false,
		"application/json-patch+json":       false,
		"application/x-www-form-urlencoded": false,
		"multipart/form-data; boundary=x":   false,
		"application/json, text/plain":      false,
	} {
		if got := isJSONContentType(ct); got != want {
			t.Errorf("isJSONContentType(%q) = %v, want %v", ct, got, want)
		}
	}
}
