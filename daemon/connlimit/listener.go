package connlimit

import (
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// refusalBody is the JSON error a connection over the cap reads.
const refusalBody = `{"error":"too many open connections to gpuletd (limits.max_connections); retry shortly"}` + "\n"

// refusal is what a connection over the cap gets before it is closed: a
// complete HTTP answer, so that a client sees why instead of a reset.
var refusal = []byte("HTTP/1.1 503 Service Unavailable\r\n" +
	"Content-Type: application/json\r\n" +
	"Retry-After: 1\r\n" +
	"Connection: close\r\n" +
	"Content-Length: " + strconv.Itoa(len(refusalBody)) + "\r\n\r\n" + refusalBody)

// refuseWriteTimeout bounds the write of the refusal so that a client that
// does not read cannot stall the accept loop.
const refuseWriteTimeout = 50 * time.Millisecond

// Listener is a net.Listener that keeps at most Max connections open: a
// connection accepted over the cap is answered 503 and closed at once, so
// that held connections cannot use up the daemon's file descriptors.
type Listener struct {
	net.Listener
	c      *counts
	refuse func(net.Conn)
}

// counts are the connections of one or more listeners under one cap.
type counts struct {
	max     int64
	open    atomic.Int64
	refused atomic.Int64
}

// NewListener caps ln at max open connections (max ≥ 1).
func NewListener(ln net.Listener, max int) *Listener {
	return &Listener{Listener: ln, c: &counts{max: int64(max)}, refuse: refuse}
}

// Beside caps another listener under the same count as l (the gRPC listener
// beside the HTTP one). A connection over the cap there is closed at once:
// a gRPC client cannot read an HTTP/1 answer.
func (l *Listener) Beside(ln net.Listener) *Listener {
	return &Listener{Listener: ln, c: l.c, refuse: func(c net.Conn) { _ = c.Close() }}
}

// Accept returns the next connection within the cap; those over it are
// refused here and never reach the caller.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.c.open.Add(1) > l.c.max {
			l.c.open.Add(-1)
			l.c.refused.Add(1)
			l.refuse(c)
			continue
		}
		return &conn{Conn: c, l: l}, nil
	}
}

// Open is the number of connections open now, on l and the listeners
// beside it.
func (l *Listener) Open() int64 { return l.c.open.Load() }

// Refused is the number of connections refused over the cap so far.
func (l *Listener) Refused() int64 { return l.c.refused.Load() }

// Max is the cap.
func (l *Listener) Max() int64 { return l.c.max }

func refuse(c net.Conn) {
	_ = c.SetWriteDeadline(time.Now().Add(refuseWriteTimeout))
	_, _ = c.Write(refusal)
	_ = c.Close()
}

// conn gives its place back when closed (once, however often Close runs).
type conn struct {
	net.Conn
	l    *Listener
	once sync.Once
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.c.open.Add(-1) })
	return err
}
