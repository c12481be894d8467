package connlimit

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/kserve"
)

// A flood of clients that fills the cap leaves health checks and scrapes
// their answer: a connection over the cap gets a place of the reserve for a
// check, and is refused otherwise, whether the listener reads its request
// line (plain HTTP) or the server does (Guard alone, as over TLS). Before,
// every connection over the cap was refused, so that a liveness probe
// (Kubernetes dials anew for each) restarted a daemon that was only busy.
func TestTheReserveAnswersChecksOverTheCap(t *testing.T) {
	for _, mode := range []string{"request lines read", "guard alone"} {
		t.Run(mode, func(t *testing.T) {
			inner, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			ln := NewListener(inner, 1)
			ln.res.max, ln.res.life = 2, 300*time.Millisecond
			check := func(method, path string) bool {
				return method == http.MethodGet && (path == "/live" || path == "/slow")
			}
			if mode == "request lines read" {
				ln.Checks(check)
			}
			release := make(chan struct{})
			srv := &http.Server{ConnContext: ConnContext, Handler: Guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/slow" {
					<-release
				}
				_, _ = io.WriteString(w, "ok")
			}), check)}
			served := make(chan error, 1)
			go func() { served <- srv.Serve(ln) }()
			addr := inner.Addr().String()

			send := func(c net.Conn, path string) {
				t.Helper()
				_, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n")
				require.NoError(t, err)
			}
			read := func(c net.Conn, r *bufio.Reader) (*http.Response, string) {
				t.Helper()
				require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
				resp, err := http.ReadResponse(r, nil)
				require.NoError(t, err)
				body, err := io.ReadAll(resp.Body)
				require.NoError(t, err)
				require.NoError(t, resp.Body.Close())
				return resp, string(body)
			}
			over := func(path string) (*http.Response, string) {
				t.Helper()
				c, err := net.Dial("tcp", addr)
				require.NoError(t, err)
				defer c.Close()
				send(c, path)
				return read(c, bufio.NewReader(c))
			}

			// A keep-alive client holds the one place within the cap.
			held, err := net.Dial("tcp", addr)
			require.NoError(t, err)
			heldR := bufio.NewReader(held)
			send(held, "/infer")
			resp, _ := read(held, heldR)
			require.Equal(t, http.StatusOK, resp.StatusCode, "within the cap everything is served")
			require.False(t, resp.Close)
			require.EqualValues(t, 1, ln.Open())

			resp, body := over("/live")
			require.Equal(t, http.StatusOK, resp.StatusCode, "a check over the cap is served")
			require.Equal(t, "ok", body)
			require.True(t, resp.Close, "on its own connection, closed after it")
			resp, body = over("/infer")
			require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "anything else over the cap is refused")
			require.Equal(t, "1", resp.Header.Get("Retry-After"))
			require.Equal(t, "connection_limit", resp.Header.Get(kserve.HeaderFailureReason))
			require.True(t, resp.Close)
			require.Equal(t, refusalBody, body)
			require.EqualValues(t, 1, ln.Refused())
			require.EqualValues(t, 1, ln.Open(), "the reserve is not counted open")

			// A connection over the cap that sends nothing is closed
			// within a second or its life.
			idle, err := net.Dial("tcp", addr)
			require.NoError(t, err)
			require.NoError(t, idle.SetReadDeadline(time.Now().Add(5*time.Second)))
			_, err = io.Copy(io.Discard, idle)
			require.NoError(t, err, "closed by the daemon before the client's own deadline")
			require.NoError(t, idle.Close())

			// With the reserve full, a check over the cap is refused too.
			require.Eventually(t, func() bool { return ln.res.n.Load() == 0 }, 5*time.Second, time.Millisecond)
			var slow []net.Conn
			for range 2 {
				c, err := net.Dial("tcp", addr)
				require.NoError(t, err)
				send(c, "/slow")
				slow = append(slow, c)
			}
			require.Eventually(t, func() bool { return ln.res.n.Load() == 2 }, 5*time.Second, time.Millisecond)
			resp, _ = over("/live")
			require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
			close(release)
			for _, c := range slow {
				resp, _ := read(c, bufio.NewReader(c))
				require.Equal(t, http.StatusOK, resp.StatusCode)
				require.NoError(t, c.Close())
			}
			require.Eventually(t, func() bool { return ln.res.n.Load() == 0 }, 5*time.Second, time.Millisecond, "places given back")

			require.NoError(t, held.Close())
			require.NoError(t, srv.Close())
			require.True(t, errors.Is(<-served, http.ErrServerClosed))
		})
	}
}
