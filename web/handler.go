package web

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"time"

	"go.uber.org/zap"
)

// Errors of loading the embedded files; they mean the binary was built
// from a broken tree.
var (
	errUnknownType = errors.New("no content type for this extension")
	errNoIndex     = errors.New("no index.html")
)

// Cache-Control values. The page and unversioned files are revalidated on
// every load (their ETag makes that a 304); a file asked for with its
// current ?v= never changes under that URL.
const (
	cacheRevalidate = "no-cache"
	cacheImmutable  = "public, max-age=31536000, immutable"
)

// contentSecurityPolicy keeps the page to its own files and API: no inline
// script or style, no other origin.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; " +
	"img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; " +
	"form-action 'self'; frame-ancestors 'none'"

// handler serves the embedded page and its files.
type handler struct {
	log    *zap.Logger
	assets map[string]*asset
}

// Handler returns the admin page's handler, to be mounted at "/": the page
// at "/" (and "/index.html"), its files at "/assets/<name>", each with its
// content type, an ETag and cache headers; 404 for any other path, 405 for
// methods other than GET and HEAD. A nil log discards.
func Handler(log *zap.Logger) http.Handler {
	if log == nil {
		log = zap.NewNop()
	}
	assets, err := loadAssets(embedded)
	if err != nil {
		// The files are compiled in: a failure here is a broken build, which
		// the package's tests catch.
		panic(err)
	}
	return &handler{log: log.Named("web"), assets: assets}
}

// ServeHTTP implements http.Handler.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a, immutable := h.lookup(r)
	if a == nil {
		h.log.Debug("no such page file", zap.String("path", r.URL.Path))
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method "+r.Method+" is not allowed on "+r.URL.Path, http.StatusMethodNotAllowed)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", a.contentType)
	hd.Set("ETag", a.etag())
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	if immutable {
		hd.Set("Cache-Control", cacheImmutable)
	} else {
		hd.Set("Cache-Control", cacheRevalidate)
	}
	if a.name == indexName {
		hd.Set("Content-Security-Policy", contentSecurityPolicy)
	}
	http.ServeContent(w, r, a.name, time.Time{}, bytes.NewReader(a.body))
}

// lookup finds the file a request names and whether it names the current
// version of it.
func (h *handler) lookup(r *http.Request) (*asset, bool) {
	p := r.URL.Path
	if p == "/" || p == "/"+indexName {
		return h.assets[indexName], false
	}
	name, ok := strings.CutPrefix(p, "/assets/")
	if !ok || name == indexName || strings.Contains(name, "/") {
		return nil, false
	}
	a := h.assets[name]
	if a == nil {
		return nil, false
	}
	return a, r.URL.Query().Get("v") == a.version
}
