package connlimit

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A flood of clients that fills the cap leaves health checks and scrapes
// their answer: a connection over the cap takes a place of the reserve for
// one request, which is served when it is a check and refused otherwise.
// Before, every connection over the cap was refused, so that a liveness
// probe or systemd's watchdog check restarted a daemon that was only busy.
func TestTheReserveAnswersChecksOverTheCap(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ln := NewListener(inner, 1)
	ln.c.reserve, ln.c.life = 2, 300*time.Millisecond
	check := func(r *http.Request) bool { return r.URL.Path == "/live" }
	srv := &http.Server{ConnContext: ConnContext, Handler: Guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}), check)}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	addr := inner.Addr().String()

	// A keep-alive client holds the one place within the cap.
	held, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	heldR := bufio.NewReader(held)
	get := func(c net.Conn, r *bufio.Reader, path string) *http.Response {
		t.Helper()
		_, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n")
		require.NoError(t, err)
		require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
		resp, err := http.ReadResponse(r, nil)
		require.NoError(t, err)
		return resp
	}
	resp := get(held, heldR, "/infer")
	require.Equal(t, http.StatusOK, resp.StatusCode, "within the cap everything is served")
	require.False(t, resp.Close)
	require.NoError(t, resp.Body.Close())
	require.EqualValues(t, 1, ln.Open())

	over := func(path string) *http.Response {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer c.Close()
		resp := get(c, bufio.NewReader(c), path)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		resp.Body = io.NopCloser(strings.NewReader(string(body)))
		return resp
	}
	resp = over("/live")
	require.Equal(t, http.StatusOK, resp.StatusCode, "a check over the cap is served")
	require.True(t, resp.Close, "on its own connection, closed after it")
	resp = over("/infer")
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "anything else over the cap is refused")
	require.Equal(t, "1", resp.Header.Get("Retry-After"))
	require.True(t, resp.Close)
	body, _ := io.ReadAll(resp.Body)
	require.Equal(t, refusalBody, string(body))
	require.EqualValues(t, 1, ln.Refused())
	require.EqualValues(t, 1, ln.Open(), "the reserve is not counted open")

	// A reserved connection that sends nothing is closed within its life.
	idle, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer idle.Close()
	require.NoError(t, idle.SetReadDeadline(time.Now().Add(5*time.Second)))
	start := time.Now()
	_, err = idle.Read(make([]byte, 1))
	require.ErrorIs(t, err, io.EOF)
	require.Less(t, time.Since(start), 4*time.Second)

	// With the reserve full, a connection over the cap is refused at once.
	var silent []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		silent = append(silent, c)
	}
	require.Eventually(t, func() bool { return ln.c.spare.Load() == 2 }, 5*time.Second, time.Millisecond)
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
	resp, err = http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err, "refused with an answer before any request")
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	require.NoError(t, resp.Body.Close())
	require.NoError(t, c.Close())
	for _, c := range silent {
		require.NoError(t, c.Close())
	}

	require.NoError(t, held.Close())
	require.NoError(t, srv.Close())
	require.True(t, errors.Is(<-served, http.ErrServerClosed))
}
