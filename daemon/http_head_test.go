package daemon

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

// HEAD is answered wherever GET is, with GET's status and headers and no
// body (health checkers and monitors send HEAD; it was 405 everywhere).
func TestHeadIsAnsweredAsGet(t *testing.T) {
	n := exposedNode(t)
	srv := httptest.NewServer(n.handler(nil))
	defer srv.Close()
	tests := []struct {
		path string
		code int
	}{
		{"/v2/health/live", http.StatusOK},
		{"/v2/health/ready", http.StatusServiceUnavailable}, // a and b wait for a gpu-let
		{"/v2", http.StatusOK},
		{"/v2/models/a/infer", http.StatusMethodNotAllowed}, // POST only: still not GET
		{"/nosuch", http.StatusNotFound},
	}
	fetch := func(t *testing.T, method, path string) (*http.Response, []byte) {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp, body
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			get, getBody := fetch(t, http.MethodGet, tc.path)
			require.Equal(t, tc.code, get.StatusCode)
			require.NotEmpty(t, getBody)
			head, headBody := fetch(t, http.MethodHead, tc.path)
			require.Equal(t, tc.code, head.StatusCode)
			require.Equal(t, get.Header.Get("Content-Type"), head.Header.Get("Content-Type"))
			require.Empty(t, headBody)
		})
	}
}
