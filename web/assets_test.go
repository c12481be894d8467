package web

import (
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"
)

func TestLoadAssets(t *testing.T) {
	index := `<link href="assets/a.css"><script src="assets/b.js"></script><img src="assets/missing.svg">`
	fsys := fstest.MapFS{
		"assets/index.html": {Data: []byte(index)},
		"assets/a.css":      {Data: []byte("body{}")},
		"assets/b.js":       {Data: []byte("export {}")},
		"assets/img/x.svg":  {Data: []byte("<svg/>")}, // a folder is not served
	}
	got, err := loadAssets(fsys)
	require.NoError(t, err)
	require.Len(t, got, 3)
	require.Equal(t, "text/css; charset=utf-8", got["a.css"].contentType)
	require.Equal(t, "text/javascript; charset=utf-8", got["b.js"].contentType)
	require.Equal(t, version([]byte("body{}")), got["a.css"].version)
	require.Len(t, got["a.css"].version, 16)
	want := `<link href="assets/a.css?v=` + got["a.css"].version + `"><script src="assets/b.js?v=` + got["b.js"].version +
		`"></script><img src="assets/missing.svg">`
	require.Equal(t, want, string(got["index.html"].body), "references to embedded files carry their version; others are left")
	require.Equal(t, version([]byte(want)), got["index.html"].version, "the page's version is of the rewritten page")
}

func TestLoadAssetsErrors(t *testing.T) {
	tests := []struct {
		name string
		fsys fstest.MapFS
		want error
	}{
		{"unknown extension", fstest.MapFS{"assets/index.html": {}, "assets/x.wasm": {}}, errUnknownType},
		{"no page", fstest.MapFS{"assets/a.css": {}}, errNoIndex},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadAssets(tc.fsys)
			require.ErrorIs(t, err, tc.want)
		})
	}
	_, err := loadAssets(fstest.MapFS{})
	require.Error(t, err, "no assets folder")
}

func TestEmbeddedAssetsLoad(t *testing.T) {
	got, err := loadAssets(embedded)
	require.NoError(t, err)
	for _, name := range []string{"index.html", "style.css", "app.js", "favicon.svg"} {
		require.Contains(t, got, name)
		require.NotEmpty(t, got[name].body, name)
	}
}
