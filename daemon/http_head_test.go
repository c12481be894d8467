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
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			get, err := http.Get(srv.URL + tc.path)
			require.NoError(t, err)
			getBody, err := io.ReadAll(get.Body)
			require.NoError(t, err)
			require.NoError(t, get.Body.Close())
			require.Equal(t, tc.code, get.StatusCode)
			require.NotEmpty(t, getBody)

			head, err := http.Head(srv.URL + tc.path)
			require.NoError(t, err)
			headBody, err := io.ReadAll(head.Body)
			require.NoError(t, err)
			require.NoError(t, head.Body.Close())
			require.Equal(t, tc.code, head.StatusCode)
			require.Equal(t, get.Header.Get("Content-Type"), head.Header.Get("Content-Type"))
			require.Empty(t, headBody)
		})
	}
}
