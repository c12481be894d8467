// Package handoff is a net.Listener whose connections another accept loop
// hands to it: the gRPC server's share of a socket whose connections are
// sorted first (the executor's), or one server's turn on a listener that
// several serve in turn (the daemon's gRPC front).
package handoff

import (
	"net"
	"sync"
)

// Listener is a net.Listener fed by Give.
type Listener struct {
	addr   net.Addr
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

// New makes a Listener that gives addr as its address.
func New(addr net.Addr) *Listener {
	return &Listener{addr: addr, conns: make(chan net.Conn), closed: make(chan struct{})}
}

// Give hands c to Accept, waiting for it; false when the listener is
// closed first (c is then the caller's to close or give elsewhere).
func (l *Listener) Give(c net.Conn) bool {
	select {
	case l.conns <- c:
		return true
	case <-l.closed:
		return false
	}
}

// Accept returns the next connection given, or net.ErrClosed once the
// listener is closed.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

// Close stops Accept and Give; the socket the connections come from stays
// open.
func (l *Listener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

// Addr is the address given to New.
func (l *Listener) Addr() net.Addr { return l.addr }
