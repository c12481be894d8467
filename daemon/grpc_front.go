package daemon

import (
	"context"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/gpulet/gpuletd/internal/handoff"
	"google.golang.org/grpc"
)

// grpcFront serves the gRPC listener with one grpc.Server at a time. The
// server's message cap is an option fixed when it is built, so a reload
// that changes limits.max_request_body builds another (renew): the
// listener's new connections go to it, and the one before tells its
// connections to go away (HTTP/2 GOAWAY, as a graceful stop does), so that
// their clients' next calls open connections to the new one, and ends
// once the calls and streams it has have.
type grpcFront struct {
	ln    net.Listener
	build func() *grpc.Server

	mu      sync.Mutex
	cur     *grpc.Server
	curLn   *handoff.Listener
	leaving sync.WaitGroup // servers replaced and still finishing
	retired []*grpc.Server // the same, for stop to cut at its deadline (until they end)
	stopped bool
}

// newGRPCFront serves ln with the servers build makes, from the first.
func newGRPCFront(ln net.Listener, build func() *grpc.Server) *grpcFront {
	f := &grpcFront{ln: ln, build: build}
	f.cur, f.curLn = build(), handoff.New(ln.Addr())
	go func() { _ = f.cur.Serve(f.curLn) }()
	return f
}

// serve accepts the listener's connections and hands each to the server
// in use, until the listener fails for good or stop closes it: its error
// then (nil after stop).
func (f *grpcFront) serve() error {
	var delay time.Duration
	for {
		c, err := f.ln.Accept()
		if err != nil {
			f.mu.Lock()
			stopped := f.stopped
			f.mu.Unlock()
			if stopped {
				return nil
			}
			// Out of open files and the like: wait and accept again, as
			// net/http and gRPC's own Serve do, rather than stop serving.
			if t, ok := err.(interface{ Temporary() bool }); ok && t.Temporary() {
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				time.Sleep(delay)
				continue
			}
			return err
		}
		delay = 0
		f.handOff(c)
	}
}

// handOff gives c to the server in use, or to the one that took its place
// while it was handed; it closes c after stop.
func (f *grpcFront) handOff(c net.Conn) {
	for {
		f.mu.Lock()
		q, stopped := f.curLn, f.stopped
		f.mu.Unlock()
		if stopped {
			_ = c.Close()
			return
		}
		if q.Give(c) {
			return
		}
	}
}

// renew builds a new server for the connections to come and lets the
// one before finish what it has; nil (no gRPC listener): nothing to do.
func (f *grpcFront) renew() {
	if f == nil {
		return
	}
	s, q := f.build(), handoff.New(f.ln.Addr())
	f.mu.Lock()
	if f.stopped {
		f.mu.Unlock()
		s.Stop()
		return
	}
	old, oldQ := f.cur, f.curLn
	f.cur, f.curLn = s, q
	f.retired = append(f.retired, old)
	f.leaving.Add(1)
	f.mu.Unlock()
	go func() { _ = s.Serve(q) }()
	_ = oldQ.Close()
	go func() {
		defer f.leaving.Done()
		old.GracefulStop()
		f.mu.Lock()
		f.retired = slices.DeleteFunc(f.retired, func(s *grpc.Server) bool { return s == old })
		f.mu.Unlock()
	}()
}

// stop closes the listener and stops every server, letting their calls
// finish until ctx ends and cutting the rest then; nil: nothing to stop.
func (f *grpcFront) stop(ctx context.Context) {
	if f == nil {
		return
	}
	f.mu.Lock()
	f.stopped = true
	servers := append([]*grpc.Server{f.cur}, f.retired...)
	f.mu.Unlock()
	_ = f.ln.Close()
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Go(func() { stopGRPC(ctx, s) })
	}
	wg.Wait()
	f.leaving.Wait()
}
