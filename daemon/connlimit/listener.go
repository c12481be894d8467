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
//
// An HTTP listener keeps a few places more (Reserve) for health checks and
// scrapes: a connection over the cap takes one of them for a single request
// of at most ReserveLife, which Guard lets through only when it is such a
// check and answers 503 otherwise. A flood of clients that fills the cap
// then still leaves a liveness probe, systemd's watchdog check and a
// Prometheus scrape their answer: refused, the first two would restart a
// daemon that is only busy.
type Listener struct {
	net.Listener
	c      *counts
	refuse func(net.Conn)
	// spares says connections over the cap may take a reserved place
	// (HTTP listeners; a gRPC client cannot read an HTTP/1 answer).
	spares bool
}

// Reserve is how many connections over the cap an HTTP listener (and the
// HTTP listeners beside it) may hold at once for health checks and
// scrapes; ReserveLife bounds each.
const (
	Reserve     = 16
	ReserveLife = 5 * time.Second
)

// counts are the connections of one or more listeners under one cap.
type counts struct {
	max     int64
	reserve int64         // Reserve, but in tests
	life    time.Duration // ReserveLife, but in tests
	open    atomic.Int64
	spare   atomic.Int64 // connections over the cap in the reserve
	refused atomic.Int64
}

// NewListener caps ln, an HTTP listener, at max open connections (max ≥ 1)
// and Reserve more for health checks and scrapes.
func NewListener(ln net.Listener, max int) *Listener {
	return &Listener{Listener: ln, c: &counts{max: int64(max), reserve: Reserve, life: ReserveLife}, refuse: refuse, spares: true}
}

// Beside caps another listener under the same count as l (the gRPC listener
// beside the HTTP one). A connection over the cap there is closed at once:
// a gRPC client cannot read an HTTP/1 answer.
func (l *Listener) Beside(ln net.Listener) *Listener {
	return &Listener{Listener: ln, c: l.c, refuse: func(c net.Conn) { _ = c.Close() }}
}

// BesideHTTP caps another HTTP listener (the metrics listener) under the
// same count and reserve as l.
func (l *Listener) BesideHTTP(ln net.Listener) *Listener {
	return &Listener{Listener: ln, c: l.c, refuse: refuse, spares: true}
}

// Accept returns the next connection within the cap, or over it in the
// reserve; the others are refused here and never reach the caller.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.c.open.Add(1) <= l.c.max {
			return &conn{Conn: c, l: l}, nil
		}
		l.c.open.Add(-1)
		if l.spares && l.c.spare.Add(1) <= l.c.reserve {
			sc := &conn{Conn: c, l: l, spare: true, until: time.Now().Add(l.c.life)}
			_ = c.SetDeadline(sc.until)
			return sc, nil
		}
		if l.spares {
			l.c.spare.Add(-1)
		}
		l.c.refused.Add(1)
		l.refuse(c)
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
	// spare: accepted over the cap into the reserve, until at the latest.
	spare bool
	until time.Time
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		if c.spare {
			c.l.c.spare.Add(-1)
		} else {
			c.l.c.open.Add(-1)
		}
	})
	return err
}

// SetDeadline, SetReadDeadline and SetWriteDeadline keep a reserved
// connection's deadlines within its life, whatever the HTTP server asks.
func (c *conn) SetDeadline(t time.Time) error { return c.Conn.SetDeadline(c.clamp(t)) }

// SetReadDeadline: see SetDeadline.
func (c *conn) SetReadDeadline(t time.Time) error { return c.Conn.SetReadDeadline(c.clamp(t)) }

// SetWriteDeadline: see SetDeadline.
func (c *conn) SetWriteDeadline(t time.Time) error { return c.Conn.SetWriteDeadline(c.clamp(t)) }

func (c *conn) clamp(t time.Time) time.Time {
	if c.spare && (t.IsZero() || t.After(c.until)) {
		return c.until
	}
	return t
}
