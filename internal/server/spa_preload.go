package server

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"html"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// viteManifest is the build's dist/.vite/manifest.json (web/vite.config.ts:
// build.manifest): every chunk by its source key, with the chunks it
// imports statically and the CSS it needs.
const viteManifest = ".vite/manifest.json"

// routeSources is where the app keeps its screens: the screen of the path
// /games/dice is src/app/routes/games/dice.tsx, that of / is
// src/app/routes/home.tsx (web/src/app/router.tsx loads each lazily).
const (
	routeSources = "src/app/routes"
	homeSource   = "/home"
)

type manifestChunk struct {
	File           string   `json:"file"`
	Imports        []string `json:"imports"`
	CSS            []string `json:"css"`
	IsEntry        bool     `json:"isEntry"`
	IsDynamicEntry bool     `json:"isDynamicEntry"`
}

// routePages builds, for every path whose screen is a chunk of its own, the
// index page with that screen's chunks (and the chunks and CSS they import)
// preloaded from its head, keyed by the path and then by coding token ("",
// "gzip"). The browser then fetches them with the entry chunk instead of
// after it has run, which saves a round trip before the screen's first
// paint. Without a manifest (an app built without one, or none at all) there
// are no such pages and every path gets the plain index.
func routePages(files fs.FS, index []byte) map[string]map[string][]byte {
	raw, err := fs.ReadFile(files, viteManifest)
	if err != nil {
		return nil
	}
	var chunks map[string]manifestChunk
	if err := json.Unmarshal(raw, &chunks); err != nil {
		return nil
	}
	head := bytes.Index(index, []byte("</head>"))
	if head < 0 {
		return nil
	}
	// The entry and what it imports are in the index page already.
	loaded := map[string]bool{}
	for key, c := range chunks {
		if c.IsEntry {
			markLoaded(chunks, key, loaded)
		}
	}
	pages := map[string]map[string][]byte{}
	for key, c := range chunks {
		if !c.IsDynamicEntry || !strings.HasPrefix(key, routeSources+"/") || !strings.HasSuffix(key, ".tsx") {
			continue
		}
		route := strings.TrimSuffix(strings.TrimPrefix(key, routeSources), ".tsx")
		if route == homeSource {
			route = "/"
		}
		var scripts, styles []string
		collectPreloads(chunks, key, loaded, map[string]bool{}, &scripts, &styles)
		sort.Strings(scripts)
		sort.Strings(styles)
		if len(scripts) == 0 && len(styles) == 0 {
			continue
		}
		var links strings.Builder
		for _, s := range styles {
			links.WriteString(`<link rel="preload" as="style" href="/` + html.EscapeString(s) + `" />`)
		}
		for _, s := range scripts {
			links.WriteString(`<link rel="modulepreload" crossorigin href="/` + html.EscapeString(s) + `" />`)
		}
		page := make([]byte, 0, len(index)+links.Len())
		page = append(page, index[:head]...)
		page = append(page, links.String()...)
		page = append(page, index[head:]...)
		variants := map[string][]byte{"": page}
		var gz bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression) // a valid level: no error
		if _, err := zw.Write(page); err == nil && zw.Close() == nil && gz.Len() < len(page) {
			variants["gzip"] = gz.Bytes()
		}
		pages[route] = variants
	}
	return pages
}

// markLoaded marks key and every chunk it imports statically.
func markLoaded(chunks map[string]manifestChunk, key string, loaded map[string]bool) {
	if loaded[key] {
		return
	}
	loaded[key] = true
	for _, imp := range chunks[key].Imports {
		markLoaded(chunks, imp, loaded)
	}
}

// collectPreloads appends the files of key and of the chunks it imports
// statically, and their CSS, skipping what the index page loads already.
func collectPreloads(chunks map[string]manifestChunk, key string, loaded, seen map[string]bool, scripts, styles *[]string) {
	if loaded[key] || seen[key] {
		return
	}
	seen[key] = true
	c, ok := chunks[key]
	if !ok {
		return
	}
	if c.File != "" {
		*scripts = append(*scripts, c.File)
	}
	for _, css := range c.CSS {
		if !seen["css:"+css] {
			seen["css:"+css] = true
			*styles = append(*styles, css)
		}
	}
	for _, imp := range c.Imports {
		collectPreloads(chunks, imp, loaded, seen, scripts, styles)
	}
}

// routeOf is the key of routePages for a request path: cleaned, without a
// trailing slash.
func routeOf(urlPath string) string {
	p := path.Clean("/" + urlPath)
	if p != "/" {
		p = strings.TrimSuffix(p, "/")
	}
	return p
}
