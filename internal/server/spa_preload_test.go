package server

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
)

// A build's manifest (web/vite.config.ts: build.manifest) as Vite writes it:
// the entry, two screens sharing a chunk, a screen outside src/app/routes and
// a shared chunk that the entry imports too.
const testManifest = `{
  "index.html": {"file": "assets/index-a.js", "isEntry": true, "imports": ["_react-b.js"], "css": ["assets/index-a.css"]},
  "_react-b.js": {"file": "assets/react-b.js"},
  "_screen-c.js": {"file": "assets/screen-c.js", "imports": ["index.html", "_react-b.js"], "css": ["assets/screen-c.css"]},
  "src/app/routes/home.tsx": {"file": "assets/home-d.js", "isDynamicEntry": true, "imports": ["index.html"]},
  "src/app/routes/games/dice.tsx": {"file": "assets/dice-e.js", "isDynamicEntry": true, "imports": ["_screen-c.js", "index.html"]},
  "src/app/routes/games/game-screen.tsx": {"file": "assets/x.js", "imports": ["index.html"]},
  "src/features/auth/dialog.tsx": {"file": "assets/dialog-f.js", "isDynamicEntry": true, "imports": ["index.html"]}
}`

func preloadDist() fstest.MapFS {
	dist := testDist()
	dist["index.html"] = &fstest.MapFile{Data: []byte("<!doctype html><html><head><title>t</title></head><body></body></html>")}
	dist[".vite/manifest.json"] = &fstest.MapFile{Data: []byte(testManifest)}
	return dist
}

func getPage(t *testing.T, h http.Handler, path, accept string) (body, encoding string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if accept != "" {
		req.Header.Set("Accept-Encoding", accept)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s: status %d, want 200", path, rec.Code)
	}
	return rec.Body.String(), rec.Header().Get("Content-Encoding")
}

// The page of a screen preloads that screen's chunks and their CSS, not the
// entry's (the index loads them already); other paths get the index as built.
func TestSPAHandlerPreloadsTheRoutesChunks(t *testing.T) {
	t.Parallel()
	h := newSPAHandler(preloadDist())
	const dice = `<link rel="preload" as="style" href="/assets/screen-c.css" />` +
		`<link rel="modulepreload" crossorigin href="/assets/dice-e.js" />` +
		`<link rel="modulepreload" crossorigin href="/assets/screen-c.js" />`
	for _, c := range []struct{ path, want string }{
		{"/games/dice", `<head><title>t</title>` + dice + `</head>`},
		{"/games/dice/", `<head><title>t</title>` + dice + `</head>`},
		{"/", `<head><title>t</title><link rel="modulepreload" crossorigin href="/assets/home-d.js" /></head>`},
		{"/games/game-screen", `<head><title>t</title></head>`},
		{"/features/auth/dialog", `<head><title>t</title></head>`},
		{"/bets", `<head><title>t</title></head>`},
	} {
		body, _ := getPage(t, h, c.path, "")
		if !strings.Contains(body, c.want) {
			t.Errorf("GET %s: %s, want it to contain %s", c.path, body, c.want)
		}
	}
	body, encoding := getPage(t, h, "/games/dice", "br, gzip")
	if encoding != "gzip" {
		t.Fatalf("Content-Encoding %q, want gzip (no Brotli page is built at run time)", encoding)
	}
	zr, err := gzip.NewReader(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(plain), dice) {
		t.Errorf("gzip page %s, want it to contain %s", plain, dice)
	}
}

// A manifest that does not parse leaves every path with the index as built.
func TestSPAHandlerWithoutAUsableManifest(t *testing.T) {
	t.Parallel()
	dist := preloadDist()
	dist[".vite/manifest.json"] = &fstest.MapFile{Data: []byte("{not json")}
	h := newSPAHandler(dist)
	body, _ := getPage(t, h, "/games/dice", "")
	if body != "<!doctype html><html><head><title>t</title></head><body></body></html>" {
		t.Errorf("GET /games/dice: %s, want the index as built", body)
	}
}
