package connlimit

import (
	"context"
	"io"
	"net"
	"net/http"

	"github.com/gpulet/gpuletd/kserve"
)

// connKey is the context key under which ConnContext keeps a request's
// connection.
type connKey struct{}

// ConnContext is an http.Server's ConnContext for a Listener's server: it
// keeps each connection in its requests' context, where Guard finds it.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// reserved is the connection of the reserve under c (under a TLS
// connection, say), or nil when c is within the cap or not a Listener's.
func reserved(c net.Conn) *conn {
	for c != nil {
		if lc, ok := c.(*conn); ok {
			if lc.spare {
				return lc
			}
			return nil
		}
		u, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			return nil
		}
		c = u.NetConn()
	}
	return nil
}

// Guard serves with h every request of a connection within the cap. Of a
// connection over it, in the reserve, it serves those check says are health
// checks or scrapes and then closes the connection; it answers the others
// 503 with Retry-After, as a connection refused at once is, and counts them
// refused. The server must set ConnContext.
func Guard(h http.Handler, check func(method, path string) bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _ := r.Context().Value(connKey{}).(net.Conn)
		lc := reserved(c)
		if lc == nil {
			h.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Connection", "close")
		if check(r.Method, r.URL.Path) {
			h.ServeHTTP(w, r)
			return
		}
		lc.l.c.refused.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "1")
		w.Header().Set(kserve.HeaderFailureReason, RefusalReason)
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, refusalBody)
	})
}
