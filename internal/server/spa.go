package server

import (
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/fairplay/fairplay/web"
)

// spaHandler serves the embedded web app: real files as they are (hashed
// assets cached for a year), any other path as index.html so the app's
// router can handle it.
func spaHandler() http.Handler {
	files := web.Dist()
	index, err := fs.ReadFile(files, "index.html")
	if err != nil {
		index = []byte(`<!doctype html><html><head><meta charset="utf-8"><title>Fairplay</title></head>` +
			`<body><h1>Fairplay</h1><p>The web app is not built into this binary. Run <code>make web</code> and rebuild, ` +
			`or use the API under <code>/api</code>.</p></body></html>`)
	}
	fileServer := http.FileServerFS(files)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name := strings.TrimPrefix(path.Clean(r.URL.Path), "/")
		if name != "" && name != "index.html" {
			if st, err := fs.Stat(files, name); err == nil && !st.IsDir() {
				if strings.HasPrefix(name, "assets/") {
					w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
				}
				fileServer.ServeHTTP(w, r)
				return
			}
			if strings.HasPrefix(name, "assets/") {
				http.NotFound(w, r)
				return
			}
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(index)
	})
}
