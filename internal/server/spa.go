package server

import (
	"bytes"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/fairplay/fairplay/web"
)

// contentCodings are the precompressed siblings the web build writes next
// to a compressible file (web/vite.config.ts: name.br, name.gz), in the
// order of preference when a client accepts both equally.
var contentCodings = []struct{ token, suffix string }{
	{"br", ".br"},
	{"gzip", ".gz"},
}

// spaHandler serves the embedded web app (web.Dist()).
func spaHandler() http.Handler {
	return newSPAHandler(web.Dist())
}

// newSPAHandler serves the built app in files: real files as they are
// (hashed assets cached for a year), any other path as index.html so the
// app's router can handle it (with the preloads of the path's screen when
// the build's manifest names one: routePages). A file with a precompressed sibling is sent
// in the best coding the client accepts (Brotli, then gzip), with Vary:
// Accept-Encoding, so no request pays for compression at run time.
func newSPAHandler(files fs.FS) http.Handler {
	index, err := readVariants(files, "index.html")
	if err != nil {
		index = map[string][]byte{"": []byte(`<!doctype html><html><head><meta charset="utf-8"><title>Fairplay</title></head>` +
			`<body><h1>Fairplay</h1><p>The web app is not built into this binary. Run <code>make web</code> and rebuild, ` +
			`or use the API under <code>/api</code>.</p></body></html>`)}
	}
	pages := routePages(files, index[""])
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name := strings.TrimPrefix(path.Clean(r.URL.Path), "/")
		if name == ".vite" || strings.HasPrefix(name, ".vite/") {
			// The build's own files (.vite/manifest.json, read at start-up
			// for the preloads) are not the app's to serve.
			http.NotFound(w, r)
			return
		}
		if name != "" && name != "index.html" {
			if st, err := fs.Stat(files, name); err == nil && !st.IsDir() {
				if strings.HasPrefix(name, "assets/") {
					w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
				}
				serveFile(w, r, files, name, st.ModTime())
				return
			}
			if strings.HasPrefix(name, "assets/") {
				http.NotFound(w, r)
				return
			}
		}
		page := index
		if p, ok := pages[routeOf(r.URL.Path)]; ok {
			page = p
		}
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Cache-Control", "no-cache")
		if len(page) > 1 {
			h.Add("Vary", "Accept-Encoding")
		}
		coding := negotiateCoding(r.Header.Get("Accept-Encoding"), func(c string) bool { return page[c] != nil })
		body := page[coding]
		if coding != "" {
			h.Set("Content-Encoding", coding)
		}
		h.Set("Content-Length", strconv.Itoa(len(body)))
		if r.Method == http.MethodHead {
			return
		}
		_, _ = w.Write(body)
	})
}

// serveFile sends the file name of files, or its precompressed sibling in
// the coding negotiated with the request. Conditional and range requests
// are answered by http.ServeContent; a range of a coded response counts
// bytes of the coded body, as HTTP defines it.
func serveFile(w http.ResponseWriter, r *http.Request, files fs.FS, name string, modtime time.Time) {
	h := w.Header()
	var available []string
	for _, c := range contentCodings {
		if st, err := fs.Stat(files, name+c.suffix); err == nil && !st.IsDir() {
			available = append(available, c.token)
		}
	}
	if len(available) > 0 {
		h.Add("Vary", "Accept-Encoding")
	}
	coding := negotiateCoding(r.Header.Get("Accept-Encoding"), func(c string) bool {
		for _, a := range available {
			if a == c {
				return true
			}
		}
		return false
	})
	file := name
	if coding != "" {
		file += suffixOf(coding)
		h.Set("Content-Encoding", coding)
	}
	// The type is the original file's: ServeContent would otherwise sniff
	// the coded bytes.
	ctype := mime.TypeByExtension(path.Ext(name))
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	h.Set("Content-Type", ctype)

	f, err := files.Open(file)
	if err != nil {
		h.Del("Content-Encoding")
		http.Error(w, "could not open the file", http.StatusInternalServerError)
		return
	}
	defer func() { _ = f.Close() }() // read-only: a close error loses nothing
	content, ok := f.(io.ReadSeeker)
	if !ok {
		b, err := io.ReadAll(f)
		if err != nil {
			h.Del("Content-Encoding")
			http.Error(w, "could not read the file", http.StatusInternalServerError)
			return
		}
		content = bytes.NewReader(b)
	}
	http.ServeContent(w, r, name, modtime, content)
}

// readVariants reads name and its precompressed siblings, keyed by coding
// token ("" for the file as it is).
func readVariants(files fs.FS, name string) (map[string][]byte, error) {
	plain, err := fs.ReadFile(files, name)
	if err != nil {
		return nil, err
	}
	variants := map[string][]byte{"": plain}
	for _, c := range contentCodings {
		if b, err := fs.ReadFile(files, name+c.suffix); err == nil {
			variants[c.token] = b
		}
	}
	return variants, nil
}

func suffixOf(coding string) string {
	for _, c := range contentCodings {
		if c.token == coding {
			return c.suffix
		}
	}
	return ""
}

// negotiateCoding picks, from the codings available reports, the one
// Accept-Encoding rates highest (ties go to the order of contentCodings),
// or "" for the file as it is when the client accepts none of them. A
// coding is acceptable when named, or matched by "*", with a q above 0.
func negotiateCoding(acceptEncoding string, available func(string) bool) string {
	if acceptEncoding == "" {
		return ""
	}
	q := map[string]float64{}
	wildcard := -1.0
	for _, part := range strings.Split(acceptEncoding, ",") {
		token, params, _ := strings.Cut(part, ";")
		token = strings.ToLower(strings.TrimSpace(token))
		if token == "" {
			continue
		}
		weight := 1.0
		for _, p := range strings.Split(params, ";") {
			k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
					weight = f
				} else {
					weight = 0
				}
			}
		}
		if token == "*" {
			wildcard = weight
			continue
		}
		q[token] = weight
	}
	best, bestQ := "", 0.0
	for _, c := range contentCodings {
		weight, named := q[c.token]
		if !named {
			weight = wildcard
		}
		if weight > bestQ && available(c.token) {
			best, bestQ = c.token, weight
		}
	}
	return best
}
