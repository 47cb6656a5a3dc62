package server

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/fstest"
)

func testDist() fstest.MapFS {
	return fstest.MapFS{
		"index.html":             {Data: []byte("<!doctype html>plain index")},
		"index.html.br":          {Data: []byte("brotli index")},
		"index.html.gz":          {Data: []byte("gzip index")},
		"assets/index-abc.js":    {Data: []byte("console.log('plain')")},
		"assets/index-abc.js.br": {Data: []byte("brotli js")},
		"assets/index-abc.js.gz": {Data: []byte("gzip js")},
		"assets/app-def.css":     {Data: []byte("body{}")},
		"assets/app-def.css.gz":  {Data: []byte("gzip css")},
		"favicon.svg":            {Data: []byte("<svg/>")},
		".vite/manifest.json":    {Data: []byte("{}")},
	}
}

// Every file is sent in the best coding the client accepts among the
// precompressed siblings the build wrote, typed as the original file.
func TestSPAHandlerServesPrecompressedFiles(t *testing.T) {
	t.Parallel()
	h := newSPAHandler(testDist())
	for _, c := range []struct {
		name, path, accept     string
		wantBody, wantEncoding string
		wantType, wantCache    string
		wantVary               bool
	}{
		{"brotli preferred", "/assets/index-abc.js", "gzip, deflate, br, zstd", "brotli js", "br", "text/javascript; charset=utf-8", "public, max-age=31536000, immutable", true},
		{"gzip only", "/assets/index-abc.js", "gzip", "gzip js", "gzip", "text/javascript; charset=utf-8", "public, max-age=31536000, immutable", true},
		{"higher q wins", "/assets/index-abc.js", "br;q=0.5, gzip", "gzip js", "gzip", "text/javascript; charset=utf-8", "public, max-age=31536000, immutable", true},
		{"refused coding", "/assets/index-abc.js", "br;q=0, gzip;q=0", "console.log('plain')", "", "text/javascript; charset=utf-8", "public, max-age=31536000, immutable", true},
		{"wildcard", "/assets/index-abc.js", "*", "brotli js", "br", "text/javascript; charset=utf-8", "public, max-age=31536000, immutable", true},
		{"no header", "/assets/index-abc.js", "", "console.log('plain')", "", "text/javascript; charset=utf-8", "public, max-age=31536000, immutable", true},
		{"sibling missing", "/assets/app-def.css", "br", "body{}", "", "text/css; charset=utf-8", "public, max-age=31536000, immutable", true},
		{"gzip sibling", "/assets/app-def.css", "br, gzip", "gzip css", "gzip", "text/css; charset=utf-8", "public, max-age=31536000, immutable", true},
		{"uncompressed file", "/favicon.svg", "br, gzip", "<svg/>", "", "image/svg+xml", "", false},
		{"index", "/", "br", "brotli index", "br", "text/html; charset=utf-8", "no-cache", true},
		{"route falls back to index", "/games/dice", "gzip", "gzip index", "gzip", "text/html; charset=utf-8", "no-cache", true},
		{"index plain", "/bets", "", "<!doctype html>plain index", "", "text/html; charset=utf-8", "no-cache", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequest(http.MethodGet, c.path, nil)
			if c.accept != "" {
				req.Header.Set("Accept-Encoding", c.accept)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			res := rec.Result()
			if res.StatusCode != http.StatusOK {
				t.Fatalf("status %d, want 200", res.StatusCode)
			}
			if got := rec.Body.String(); got != c.wantBody {
				t.Errorf("body %q, want %q", got, c.wantBody)
			}
			if got := res.Header.Get("Content-Encoding"); got != c.wantEncoding {
				t.Errorf("Content-Encoding %q, want %q", got, c.wantEncoding)
			}
			if got := res.Header.Get("Content-Type"); got != c.wantType {
				t.Errorf("Content-Type %q, want %q", got, c.wantType)
			}
			if got := res.Header.Get("Cache-Control"); got != c.wantCache {
				t.Errorf("Cache-Control %q, want %q", got, c.wantCache)
			}
			if got := res.Header.Get("Vary") == "Accept-Encoding"; got != c.wantVary {
				t.Errorf("Vary %q, want Accept-Encoding: %v", res.Header.Get("Vary"), c.wantVary)
			}
		})
	}
}

// A missing asset is a 404 rather than the index, and only GET and HEAD are
// served.
func TestSPAHandlerRejectsMissingAssetsAndOtherMethods(t *testing.T) {
	t.Parallel()
	h := newSPAHandler(testDist())

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/assets/gone-123.js", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("missing asset: status %d, want 404", rec.Code)
	}

	for _, hidden := range []string{"/.vite/manifest.json", "/.vite", "/.vite/"} {
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, hidden, nil))
		if rec.Code != http.StatusNotFound {
			t.Errorf("%s: status %d, want 404 (the build's own files are not served)", hidden, rec.Code)
		}
	}

	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", nil))
	if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: status %d, Allow %q; want 405 and GET, HEAD", rec.Code, rec.Header().Get("Allow"))
	}

	req := httptest.NewRequest(http.MethodHead, "/settings", nil)
	req.Header.Set("Accept-Encoding", "br")
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || rec.Body.Len() != 0 || rec.Header().Get("Content-Length") != "12" {
		t.Errorf("HEAD: status %d, body %d bytes, Content-Length %q; want 200, empty, 12",
			rec.Code, rec.Body.Len(), rec.Header().Get("Content-Length"))
	}
}

// Without a built app the binary still answers every page with a short
// explanation.
func TestSPAHandlerWithoutBuiltApp(t *testing.T) {
	t.Parallel()
	h := newSPAHandler(fstest.MapFS{".keep": {}})
	req := httptest.NewRequest(http.MethodGet, "/games/dice", nil)
	req.Header.Set("Accept-Encoding", "br, gzip")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Encoding") != "" || rec.Header().Get("Vary") != "" {
		t.Fatalf("status %d, Content-Encoding %q, Vary %q; want 200 and neither",
			rec.Code, rec.Header().Get("Content-Encoding"), rec.Header().Get("Vary"))
	}
	if body := rec.Body.String(); len(body) == 0 || body[:15] != "<!doctype html>" {
		t.Fatalf("body %q, want the placeholder page", body)
	}
}
