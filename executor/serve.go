package executor

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/internal/handoff"
	"google.golang.org/grpc"
)

// prefaceTimeout bounds how long a new connection may take to send its
// first bytes, which tell a framed connection from a gRPC one.
const prefaceTimeout = 10 * time.Second

// Serve answers on ln until ctx ends: gRPC calls, and inference on framed
// connections. Then it stops the gRPC server and closes the framed
// connections (clients see their calls fail fast) and returns once every
// connection's goroutine has ended.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	g := grpc.NewServer(grpc.MaxRecvMsgSize(maxMessage), grpc.MaxSendMsgSize(maxMessage))
	pb.RegisterExecutorServer(g, s)
	rpcs := handoff.New(ln.Addr())
	served := make(chan error, 1)
	go func() { served <- g.Serve(rpcs) }()
	conns := &connSet{open: map[net.Conn]bool{}}
	accepted := make(chan error, 1)
	go func() { accepted <- s.acceptLoop(ln, rpcs, conns) }()
	var err error
	select {
	case err = <-served:
		err = fmt.Errorf("serve executor: %w", err)
	case err = <-accepted:
		err = fmt.Errorf("serve executor: %w", err)
	case err = <-s.faults:
		err = fmt.Errorf("serve executor: %w", err)
	case <-ctx.Done():
	}
	_ = ln.Close()
	g.Stop()
	conns.closeAll()
	rpcs.Close()
	if serr := <-served; err == nil && serr != nil && !errors.Is(serr, grpc.ErrServerStopped) && !errors.Is(serr, net.ErrClosed) {
		err = fmt.Errorf("serve executor: %w", serr)
	}
	<-accepted
	return err
}

// acceptLoop takes connections until ln closes and sorts each by its
// preface; it returns after every framed connection it started has ended.
func (s *Server) acceptLoop(ln net.Listener, rpcs *handoff.Listener, conns *connSet) error {
	defer conns.wait()
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		if !conns.add(c) {
			_ = c.Close()
			return nil
		}
		go func() {
			defer conns.done(c)
			s.sortConn(c, rpcs)
		}()
	}
}

// sortConn reads a connection's preface: a framed one is served here, any
// other is handed to the gRPC server with its first bytes put back.
func (s *Server) sortConn(c net.Conn, rpcs *handoff.Listener) {
	r := bufio.NewReaderSize(c, frameReadBuffer)
	_ = c.SetReadDeadline(time.Now().Add(prefaceTimeout))
	head, err := r.Peek(len(framePreface))
	_ = c.SetReadDeadline(time.Time{})
	if err != nil {
		_ = c.Close()
		return
	}
	if !bytes.Equal(head, framePreface) {
		if pc := (&peekedConn{Conn: c, r: r}); !rpcs.Give(pc) {
			_ = pc.Close()
		}
		return
	}
	_, _ = r.Discard(len(framePreface))
	s.serveFrames(c, r)
}

// peekedConn is a connection whose first bytes were read into r.
type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *peekedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// connSet tracks the connections being sorted or served, so Serve can close
// them and wait for their goroutines. A gRPC connection leaves it when it is
// handed off (the gRPC server owns it then).
type connSet struct {
	mu     sync.Mutex
	open   map[net.Conn]bool
	closed bool
	wg     sync.WaitGroup
}

func (s *connSet) add(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.open[c] = true
	s.wg.Add(1)
	return true
}

func (s *connSet) done(c net.Conn) {
	s.mu.Lock()
	delete(s.open, c)
	s.mu.Unlock()
	s.wg.Done()
}

func (s *connSet) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for c := range s.open {
		_ = c.Close()
	}
}

func (s *connSet) wait() { s.wg.Wait() }

// ListenUnix listens on a Unix socket at path, replacing a stale socket file
// and making the socket reachable only by its owner.
func ListenUnix(path string) (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	if st, err := os.Lstat(path); err == nil {
		if st.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("listen on %s: a file that is not a socket is in the way", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("listen on %s: remove stale socket: %w", path, err)
		}
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	return ln, nil
}
