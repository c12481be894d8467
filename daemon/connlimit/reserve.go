package connlimit

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/url"
	"time"
)

// acceptLoop accepts l's connections while l is open, when Checks is set:
// those within the cap go to Accept at once; of those over it, a goroutine
// each reads the request line (readers bounds how many wait) and hands a
// check to Accept in the reserve, refusing the rest.
func (l *Listener) acceptLoop() {
	defer l.wg.Done()
	defer close(l.done)
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			select {
			case <-l.closing:
				l.err = err
				return
			default:
			}
			if errors.Is(err, net.ErrClosed) {
				l.err = err
				return
			}
			// A passing error (out of file descriptors, say): the server
			// waits and accepts again, as with a plain listener.
			if !l.send(accepted{err: err}) {
				l.err = net.ErrClosed
				return
			}
			continue
		}
		if l.c.open.Add(1) <= l.c.max {
			if !l.deliver(&conn{Conn: c, l: l}) {
				l.err = net.ErrClosed
				return
			}
			continue
		}
		l.c.open.Add(-1)
		if l.busy.Add(1) > maxBusy {
			l.busy.Add(-1)
			l.c.refused.Add(1)
			l.refuse(c)
			continue
		}
		l.readers.add(c, maxReading)
		l.wg.Add(1)
		go l.readRequestLine(c)
	}
}

// accepted is what Accept returns next.
type accepted struct {
	c   net.Conn
	err error
}

// deliver hands c to Accept; false, with c closed, once l is closing.
func (l *Listener) deliver(c net.Conn) bool {
	if !l.send(accepted{c: c}) {
		_ = c.Close()
		return false
	}
	return true
}

// send hands a to Accept; false once l is closing.
func (l *Listener) send(a accepted) bool {
	select {
	case l.ready <- a:
		return true
	case <-l.closing:
		return false
	}
}

// readRequestLine reads the request line of c, a connection over the cap,
// and hands it to Accept in the reserve when it is a check and a place is
// free; it refuses it otherwise.
func (l *Listener) readRequestLine(c net.Conn) {
	defer l.wg.Done()
	defer l.busy.Add(-1)
	_ = c.SetReadDeadline(time.Now().Add(readLineTimeout))
	r := bufio.NewReaderSize(c, 1024)
	line, err := r.ReadSlice('\n')
	l.readers.remove(c)
	if err != nil || !l.check(requestLine(line)) || !l.takeSpare() {
		l.c.refused.Add(1)
		refuseRead(c)
		return
	}
	again := io.MultiReader(bytes.NewReader(bytes.Clone(line)), r)
	l.deliver(l.spareConn(&replayConn{Conn: c, r: again}))
}

// requestLine is the method and path of an HTTP/1 request line ("" when it
// is none).
func requestLine(line []byte) (method, path string) {
	f := bytes.Fields(line)
	if len(f) != 3 {
		return "", ""
	}
	u, err := url.ParseRequestURI(string(f[1]))
	if err != nil {
		return "", ""
	}
	return string(f[0]), u.Path
}

// refuseRead answers c, a connection over the cap whose request line was
// awaited, with the refusal, and reads a little of what it sends before
// closing it, so that the client reads the answer rather than a reset.
func refuseRead(c net.Conn) {
	_ = c.SetWriteDeadline(time.Now().Add(refuseWriteTimeout))
	_, _ = c.Write(refusal)
	if hc, ok := c.(interface{ CloseWrite() error }); ok {
		_ = hc.CloseWrite()
	}
	_ = c.SetReadDeadline(time.Now().Add(refuseLinger))
	_, _ = io.Copy(io.Discard, io.LimitReader(c, 64<<10))
	_ = c.Close()
}

// refuseLinger bounds how long refuseRead reads a refused request.
const refuseLinger = 100 * time.Millisecond

// replayConn is a connection whose first bytes, already read, are read
// again: r reads them, then the connection.
type replayConn struct {
	net.Conn
	r io.Reader
}

func (c *replayConn) Read(p []byte) (int, error) { return c.r.Read(p) }
