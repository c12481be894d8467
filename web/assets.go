package web

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

//go:embed assets
var embedded embed.FS

// assetsDir is the folder of the page's files inside embedded.
const assetsDir = "assets"

// indexName is the page itself; the handler serves it at "/".
const indexName = "index.html"

// contentTypes maps the extensions of the embedded files to their media
// types. The table is explicit so that the answer does not depend on the
// host's MIME database; a file with another extension is not served.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".svg":  "image/svg+xml",
}

// asset is one embedded file ready to serve.
type asset struct {
	name        string
	body        []byte
	contentType string
	// version is a short hash of body: the ?v= query that lets a browser
	// keep the file for good, and the ETag.
	version string
}

// etag is the asset's strong entity tag.
func (a *asset) etag() string { return `"` + a.version + `"` }

// loadAssets reads the embedded files. index.html has every reference
// "assets/<name>" to another file rewritten to "assets/<name>?v=<version>",
// so a new binary's page never runs with an old binary's cached scripts.
// The page names its files and the API relative to itself, so that it also
// works behind a reverse proxy that serves the daemon under a path
// ("/gpuletd/").
func loadAssets(fsys fs.FS) (map[string]*asset, error) {
	out := map[string]*asset{}
	entries, err := fs.ReadDir(fsys, assetsDir)
	if err != nil {
		return nil, fmt.Errorf("read assets: %w", err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		ct, ok := contentTypes[path.Ext(e.Name())]
		if !ok {
			return nil, fmt.Errorf("load asset %s: %w", e.Name(), errUnknownType)
		}
		body, err := fs.ReadFile(fsys, path.Join(assetsDir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("read asset %s: %w", e.Name(), err)
		}
		out[e.Name()] = &asset{name: e.Name(), body: body, contentType: ct, version: version(body)}
	}
	index, ok := out[indexName]
	if !ok {
		return nil, fmt.Errorf("load assets: %w", errNoIndex)
	}
	page := string(index.body)
	for name, a := range out {
		if name == indexName {
			continue
		}
		ref := `"assets/` + name + `"`
		page = strings.ReplaceAll(page, ref, `"assets/`+name+`?v=`+a.version+`"`)
	}
	index.body = []byte(page)
	index.version = version(index.body)
	return out, nil
}

// version is the first 16 hex digits of the SHA-256 of body.
func version(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:8])
}
