package connlimit

import (
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gpulet/gpuletd/kserve"
)

// RefusalReason is the failure reason (header kserve.HeaderFailureReason)
// of a request refused over the cap, so that a client counting failures by
// cause, gpuletd load's report, tells these from its models' refusals.
const RefusalReason = "connection_limit"

// refusalBody is the JSON error a connection over the cap reads.
const refusalBody = `{"error":"too many open connections to gpuletd (limits.max_connections); retry shortly"}` + "\n"

// refusal is what a connection over the cap gets before it is closed: a
// complete HTTP answer, so that a client sees why instead of a reset.
var refusal = []byte("HTTP/1.1 503 Service Unavailable\r\n" +
	"Content-Type: application/json\r\n" +
	"Retry-After: 1\r\n" +
	kserve.HeaderFailureReason + ": " + RefusalReason + "\r\n" +
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
// scrapes, so that a flood of clients that fills the cap still leaves a
// liveness probe (Kubernetes dials anew for each) and a scrape their answer
// (refused, the first would restart a daemon that is only busy). With
// Checks set (plain HTTP), the listener reads the request line of each
// connection over the cap itself and hands the server only those that are
// checks, in the reserve; it refuses the others at once, so that clients
// reconnecting in a storm do not crowd the reserve. Over TLS, whose
// request line only the server reads, a connection over the cap takes a
// place of the reserve as it comes, and Guard refuses what is not a check.
// A reserved HTTP connection serves one request. The gRPC listener (Beside)
// keeps a reserve of its own, which any connection over the cap takes as it
// comes; its server refuses there what is not a health check (Reserved).
// A reserved connection lives at most ReserveLife.
type Listener struct {
	net.Listener
	c      *counts
	refuse func(net.Conn)
	res    *reserve
	// check, once Checks set it, says which requests a connection over
	// the cap may make; the accept loop (acceptLoop) runs then.
	check func(method, path string) bool

	start     sync.Once
	ready     chan accepted // from the accept loop and the reads of request lines
	done      chan struct{} // closed when the accept loop has ended, err set
	err       error
	closing   chan struct{}
	closeOnce sync.Once
	readers   readers      // request lines being read
	busy      atomic.Int64 // goroutines reading request lines or refusing
	wg        sync.WaitGroup
}

// Reserve is how many connections over the cap the HTTP listeners (one and
// those BesideHTTP it) may hold at once for health checks and scrapes, and
// the gRPC listener beside as many apart; ReserveLife bounds each. Of the
// connections over the cap, at most maxReading wait for their request line
// at once (the oldest is refused for a new one), each for at most
// readLineTimeout, and maxBusy goroutines read or refuse them; past that
// they are refused at once.
const (
	Reserve         = 16
	ReserveLife     = 5 * time.Second
	maxReading      = 512
	maxBusy         = 4 * maxReading
	readLineTimeout = time.Second
)

// counts are the connections of one or more listeners under one cap.
type counts struct {
	max     int64
	open    atomic.Int64
	spares  sync.Map // the connections in a reserve by remote address (string → *conn)
	refused atomic.Int64
}

// reserve is the places over the cap of the HTTP listeners, or of the gRPC
// one: apart, so that neither's clients crowd the other's checks out.
type reserve struct {
	max  int64         // Reserve, but in tests
	life time.Duration // ReserveLife, but in tests
	n    atomic.Int64  // places taken
}

func newReserve() *reserve { return &reserve{max: Reserve, life: ReserveLife} }

// NewListener caps ln, an HTTP listener, at max open connections (max ≥ 1)
// and Reserve more for health checks and scrapes.
func NewListener(ln net.Listener, max int) *Listener {
	return newListener(ln, &counts{max: int64(max)}, newReserve(), refuse, nil)
}

func newListener(ln net.Listener, c *counts, res *reserve, refuse func(net.Conn), check func(string, string) bool) *Listener {
	return &Listener{Listener: ln, c: c, res: res, refuse: refuse, check: check,
		ready: make(chan accepted), done: make(chan struct{}), closing: make(chan struct{})}
}

// Checks has l (a plain HTTP listener, before it serves) read the request
// line of each connection over the cap and keep the reserve for those
// check says are health checks or scrapes.
func (l *Listener) Checks(check func(method, path string) bool) { l.check = check }

// Beside caps another listener under the same count as l (the gRPC
// listener beside the HTTP one), with a reserve of its own. A connection
// over the cap there takes a place of that reserve as it comes, where the
// server answers health checks alone (Reserved says which connections are
// there); past the reserve it is closed at once, as a gRPC client cannot
// read an HTTP/1 answer.
func (l *Listener) Beside(ln net.Listener) *Listener {
	return newListener(ln, l.c, newReserve(), func(c net.Conn) { _ = c.Close() }, nil)
}

// BesideHTTP caps another HTTP listener (the metrics listener) under the
// same count and reserve as l, with its checks.
func (l *Listener) BesideHTTP(ln net.Listener) *Listener {
	return newListener(ln, l.c, l.res, refuse, l.check)
}

// Accept returns the next connection within the cap, or over it in the
// reserve; the others are refused and never reach the caller.
func (l *Listener) Accept() (net.Conn, error) {
	if l.check == nil {
		for {
			c, err := l.Listener.Accept()
			if err != nil {
				return nil, err
			}
			if lc := l.admit(c); lc != nil {
				return lc, nil
			}
		}
	}
	l.start.Do(func() {
		l.wg.Add(1)
		go l.acceptLoop()
	})
	select {
	case a := <-l.ready:
		return a.c, a.err
	case <-l.done:
		return nil, l.err
	}
}

// admit is c within the cap, or over it in the reserve; nil when it was
// refused.
func (l *Listener) admit(c net.Conn) net.Conn {
	if l.c.open.Add(1) <= l.c.max {
		return &conn{Conn: c, l: l}
	}
	l.c.open.Add(-1)
	if l.takeSpare() {
		return l.spareConn(c)
	}
	l.c.refused.Add(1)
	l.refuse(c)
	return nil
}

// takeSpare takes a place of the reserve, if one is free.
func (l *Listener) takeSpare() bool {
	if l.res.n.Add(1) <= l.res.max {
		return true
	}
	l.res.n.Add(-1)
	return false
}

// spareConn is c in a place of the reserve that takeSpare took.
func (l *Listener) spareConn(c net.Conn) *conn {
	sc := &conn{Conn: c, l: l, spare: true}
	sc.end(time.Now().Add(l.res.life))
	l.c.spares.Store(c.RemoteAddr().String(), sc)
	return sc
}

// Reserved says whether the connection from addr is in the reserve, over
// the cap: a server that cannot see its connections (gRPC's, which sees a
// call's peer address) answers it health checks alone.
func (l *Listener) Reserved(addr net.Addr) bool {
	if addr == nil {
		return false
	}
	_, ok := l.c.spares.Load(addr.String())
	return ok
}

// Close stops accepting, ends the reads of request lines under way and
// waits for the goroutines of l.
func (l *Listener) Close() error {
	var err error
	l.closeOnce.Do(func() {
		close(l.closing)
		err = l.Listener.Close()
		l.readers.endAll()
	})
	l.wg.Wait()
	return err
}

// Open is the number of connections open now, on l and the listeners
// beside it.
func (l *Listener) Open() int64 { return l.c.open.Load() }

// Refused is the number of connections refused over the cap so far, with
// the requests refused on connections in a reserve.
func (l *Listener) Refused() int64 { return l.c.refused.Load() }

// Refuse counts a call refused on the connection from addr, in the reserve,
// by a server that refuses such calls itself (gRPC's: Reserved), and ends
// the connection within refusedLinger, time for the refusal to leave: its
// place is a health check's, and the client reconnects after its backoff.
func (l *Listener) Refuse(addr net.Addr) {
	l.c.refused.Add(1)
	if addr == nil {
		return
	}
	if v, ok := l.c.spares.Load(addr.String()); ok {
		v.(*conn).end(time.Now().Add(refusedLinger))
	}
}

// refusedLinger is how long a reserved connection whose call was refused
// lives on (Refuse).
const refusedLinger = 100 * time.Millisecond

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
	// spare: accepted over the cap into the reserve, to live until (Unix
	// ns) at the latest.
	spare bool
	until atomic.Int64
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		if c.spare {
			c.l.c.spares.CompareAndDelete(c.RemoteAddr().String(), c)
			c.l.res.n.Add(-1)
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
	if !c.spare {
		return t
	}
	if until := time.Unix(0, c.until.Load()); t.IsZero() || t.After(until) {
		return until
	}
	return t
}

// end has a reserved connection end by at: its deadlines move there, and no
// later deadline is set from then on.
func (c *conn) end(at time.Time) {
	c.until.Store(at.UnixNano())
	_ = c.Conn.SetDeadline(at)
}
