package web_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/gpulet/gpuletd/web"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

func get(t *testing.T, h http.Handler, method, target string, header map[string]string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func body(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

var (
	// The page names its files relative to itself (so that it works under
	// a reverse proxy's path too).
	assetRef  = regexp.MustCompile(`(?:href|src)="(assets/[^"?]+)\?v=([0-9a-f]{16})"`)
	importRef = regexp.MustCompile(`from '\./([a-z]+\.js)'`)
)

func TestPage(t *testing.T) {
	h := web.Handler(zap.NewNop())
	for _, target := range []string{"/", "/index.html"} {
		resp := get(t, h, http.MethodGet, target, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode, target)
		require.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
		require.Equal(t, "no-cache", resp.Header.Get("Cache-Control"), "the page is revalidated on every load")
		require.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"))
		require.Contains(t, resp.Header.Get("Content-Security-Policy"), "script-src 'self'")
		require.Regexp(t, `^"[0-9a-f]{16}"$`, resp.Header.Get("ETag"))
		page := body(t, resp)
		for _, landmark := range []string{"<header", "<main", "<footer", `<html lang="en">`, `id="devices"`, `id="models-table"`, `id="events"`} {
			require.Contains(t, page, landmark)
		}
		refs := assetRef.FindAllStringSubmatch(page, -1)
		require.Len(t, refs, 3, "favicon, stylesheet and script carry their version")
		require.NotRegexp(t, `(?:href|src)="/`, page, "the page names its files and the API relative to itself, for a reverse proxy's path")
	}
}

func TestAssetsReferencedByThePageAreServed(t *testing.T) {
	h := web.Handler(nil)
	page := body(t, get(t, h, http.MethodGet, "/", nil))
	wantType := map[string]string{".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".svg": "image/svg+xml"}
	seen := map[string]bool{}
	var scripts []string
	for _, m := range assetRef.FindAllStringSubmatch(page, -1) {
		p, v := "/"+m[1], m[2]
		resp := get(t, h, http.MethodGet, p+"?v="+v, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode, p)
		require.Equal(t, wantType[path.Ext(p)], resp.Header.Get("Content-Type"), p)
		require.Equal(t, "public, max-age=31536000, immutable", resp.Header.Get("Cache-Control"), "%s at its current version", p)
		require.Equal(t, `"`+v+`"`, resp.Header.Get("ETag"), "the version is the ETag")
		require.Empty(t, resp.Header.Get("Content-Security-Policy"), "only the page carries the policy")
		seen[p] = true
		if path.Ext(p) == ".js" {
			scripts = append(scripts, p)
		}
	}
	// Every module a script imports is served too (imports carry no version).
	for len(scripts) > 0 {
		p := scripts[0]
		scripts = scripts[1:]
		src := body(t, get(t, h, http.MethodGet, p, nil))
		require.NotRegexp(t, `['"]/(api|v2|metrics)`, src, "%s asks the API relative to the page, for a reverse proxy's path", p)
		for _, m := range importRef.FindAllStringSubmatch(src, -1) {
			dep := "/assets/" + m[1]
			if seen[dep] {
				continue
			}
			resp := get(t, h, http.MethodGet, dep, nil)
			require.Equal(t, http.StatusOK, resp.StatusCode, "%s imports %s", p, dep)
			require.Equal(t, "text/javascript; charset=utf-8", resp.Header.Get("Content-Type"))
			require.Equal(t, "no-cache", resp.Header.Get("Cache-Control"), "an unversioned URL is revalidated")
			seen[dep] = true
			scripts = append(scripts, dep)
		}
	}
	require.True(t, seen["/assets/partitions.js"], "the module graph reaches the partitions drawing: %v", seen)
}

func TestConditionalAndHeadRequests(t *testing.T) {
	h := web.Handler(nil)
	first := get(t, h, http.MethodGet, "/assets/style.css", nil)
	etag := first.Header.Get("ETag")
	full := body(t, first)
	require.NotEmpty(t, full)

	tests := []struct {
		name       string
		method     string
		target     string
		header     map[string]string
		wantStatus int
		wantBody   bool
	}{
		{"matching etag", http.MethodGet, "/assets/style.css", map[string]string{"If-None-Match": etag}, http.StatusNotModified, false},
		{"stale etag", http.MethodGet, "/assets/style.css", map[string]string{"If-None-Match": `"0000000000000000"`}, http.StatusOK, true},
		{"head", http.MethodHead, "/assets/style.css", nil, http.StatusOK, false},
		{"head of the page", http.MethodHead, "/", nil, http.StatusOK, false},
		{"wrong version still serves the file", http.MethodGet, "/assets/style.css?v=0123456789abcdef", nil, http.StatusOK, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := get(t, h, tc.method, tc.target, tc.header)
			require.Equal(t, tc.wantStatus, resp.StatusCode)
			b := body(t, resp)
			if tc.wantBody {
				require.Equal(t, full, b)
				require.Equal(t, "no-cache", resp.Header.Get("Cache-Control"))
			} else {
				require.Empty(t, b)
			}
		})
	}
}

func TestUnknownPathsAndMethods(t *testing.T) {
	h := web.Handler(nil)
	tests := []struct {
		method string
		target string
		want   int
	}{
		{http.MethodGet, "/nope", http.StatusNotFound},
		{http.MethodGet, "/assets/", http.StatusNotFound},
		{http.MethodGet, "/assets/nope.js", http.StatusNotFound},
		{http.MethodGet, "/assets/index.html", http.StatusNotFound},
		{http.MethodGet, "/assets/sub/app.js", http.StatusNotFound},
		{http.MethodGet, "/assets/../app.js", http.StatusNotFound},
		{http.MethodGet, "/app.js", http.StatusNotFound},
		{http.MethodGet, "/api/v1/unknown", http.StatusNotFound},
		{http.MethodPost, "/", http.StatusMethodNotAllowed},
		{http.MethodDelete, "/assets/app.js", http.StatusMethodNotAllowed},
		{http.MethodPost, "/nope", http.StatusNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.target, func(t *testing.T) {
			resp := get(t, h, tc.method, tc.target, nil)
			require.Equal(t, tc.want, resp.StatusCode)
			if tc.want == http.StatusMethodNotAllowed {
				require.Equal(t, "GET, HEAD", resp.Header.Get("Allow"))
			}
			require.False(t, strings.HasPrefix(resp.Header.Get("Content-Type"), "text/javascript"))
		})
	}
}
