package loadgen

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

// A client WithHeader made sends its headers on every request, leaving the
// caller's request as it was; made again, its headers are replaced, not
// added to.
func TestWithHeader(t *testing.T) {
	got := make(chan http.Header, 3)
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got <- r.Header.Clone() }))
	defer srv.Close()
	plain := &http.Client{}
	require.Same(t, plain, WithHeader(plain, nil), "no headers: the client as it is")

	c := WithHeader(plain, map[string]string{"x-a": "1"})
	req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	resp, err := c.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, "1", (<-got).Get("x-a"))
	require.Empty(t, req.Header.Get("x-a"), "the caller's request is left as it was")

	c = WithHeader(c, map[string]string{"x-b": "2"})
	resp, err = c.Get(srv.URL)
	require.NoError(t, err)
	resp.Body.Close()
	h := <-got
	require.Equal(t, "2", h.Get("x-b"))
	require.Empty(t, h.Get("x-a"), "replaced, not stacked")

	c = WithHeader(c, nil)
	resp, err = c.Get(srv.URL)
	require.NoError(t, err)
	resp.Body.Close()
	require.Empty(t, (<-got).Get("x-b"), "none any more")
}
