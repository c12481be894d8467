package executor

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/internal/ctxsleep"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
)

// ErrExecutorGone is returned for every call in flight, and every later
// call, once the executor's connections have broken (the process
// died or was stopped).
var ErrExecutorGone = errors.New("executor is gone")

// ErrNotSent is wrapped, beside ErrExecutorGone, by an Infer whose request
// never reached the executor (the connection was broken before, or broke
// while it was written): the executor did not run it.
var ErrNotSent = errors.New("request not sent")

// Client talks to one executor process over its Unix socket: gRPC for
// control, one framed connection (see frame.go) for every Infer call; each
// call waits only for its own response. A framed connection that breaks
// fails the calls waiting on it, and the next call opens another (with the
// state watch, if one was asked for): an executor that closed it runs on,
// and one that died refuses it. A Client is safe for concurrent use.
type Client struct {
	socket string
	conn   *grpc.ClientConn
	rpc    pb.ExecutorClient

	mu     sync.Mutex
	frames net.Conn // the framed connection, opened by the first call that needs it, and again after it broke
	// sending is held while one frame is written (a semaphore, so that a
	// caller waiting behind a write the executor does not read, a stopped
	// executor's, gives up at its context's end).
	sending chan struct{}
	nextID  uint64
	waiting map[uint64]chan *pb.InferResponse
	onState func(*pb.ExecutorState) // set by WatchState
	watchUs int64                   // WatchState's interval, µs: asked for again on a new connection
	broken  error                   // set once the client is closed
	lostErr error                   // why the last framed connection broke
	recvWG  sync.WaitGroup
	heard   atomic.Uint64 // frames read from the executor (answers and states)
}

// Dial connects to the executor listening on socket. It does not wait for
// the executor to be up: use WaitReady.
func Dial(socket string) (*Client, error) {
	conn, err := grpc.NewClient("passthrough:///"+socket,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", addr)
		}),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessage), grpc.MaxCallSendMsgSize(maxMessage)),
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: dialBackoff, MinConnectTimeout: 5 * time.Second}),
	)
	if err != nil {
		return nil, fmt.Errorf("dial executor %s: %w", socket, err)
	}
	return &Client{socket: socket, conn: conn, rpc: pb.NewExecutorClient(conn), waiting: map[uint64]chan *pb.InferResponse{}, sending: make(chan struct{}, 1)}, nil
}

// dialBackoff paces reconnection to an executor's socket. gRPC's default
// waits a full second after the first failed attempt, and the first attempt
// always fails while a new executor is still starting (its socket does not
// exist yet): every executor start took at least one second, seen on an H100
// where start to first health answer was 1003 ms for every executor.
var dialBackoff = backoff.Config{BaseDelay: 10 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second}

// maxMessage bounds one gRPC message between daemon and executor: a whole
// batch of outputs of a large model fits.
const maxMessage = 1 << 30

// Heard counts the frames read from the executor so far, answers and
// states alike: a caller that saw it unchanged over a while knows the
// executor said nothing in it.
func (c *Client) Heard() uint64 { return c.heard.Load() }

// WaitReady polls Health until the executor answers or ctx ends.
func (c *Client) WaitReady(ctx context.Context) (*pb.HealthResponse, error) {
	for {
		h, err := c.rpc.Health(ctx, &pb.HealthRequest{}, grpc.WaitForReady(true))
		if err == nil {
			return h, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("wait for executor: %w", err)
		}
		if err := ctxsleep.Sleep(ctx, 20*time.Millisecond); err != nil {
			return nil, fmt.Errorf("wait for executor: %w", err)
		}
	}
}

// Health asks the executor how it is.
func (c *Client) Health(ctx context.Context) (*pb.HealthResponse, error) {
	return c.rpc.Health(ctx, &pb.HealthRequest{})
}

// LoadModel loads and warms up a model.
func (c *Client) LoadModel(ctx context.Context, req *pb.LoadModelRequest) (*pb.LoadModelResponse, error) {
	return c.rpc.LoadModel(ctx, req)
}

// UnloadModel removes a model.
func (c *Client) UnloadModel(ctx context.Context, name string) error {
	_, err := c.rpc.UnloadModel(ctx, &pb.UnloadModelRequest{Name: name})
	return err
}

// Drain stops the executor taking requests and waits for the queued ones.
func (c *Client) Drain(ctx context.Context) (*pb.DrainResponse, error) {
	return c.rpc.Drain(ctx, &pb.DrainRequest{})
}

// SetPolicy switches the executor's batch scheduling policy (a policy as
// its --policy flag takes it).
func (c *Client) SetPolicy(ctx context.Context, policy string) error {
	_, err := c.rpc.SetPolicy(ctx, &pb.SetPolicyRequest{Policy: policy})
	return err
}

// Stats returns the executor's counters.
func (c *Client) Stats(ctx context.Context) (*pb.StatsResponse, error) {
	return c.rpc.Stats(ctx, &pb.StatsRequest{})
}

// WatchState asks the executor for its scheduler state whenever it
// changes, at most once every every, and hands each to fn, which runs on
// the goroutine that reads the answers: it must not block. The first comes
// at once; they pause while the framed connection is broken, resume on the
// next one (a call opens it), and stop when the client closes.
func (c *Client) WatchState(every time.Duration, fn func(*pb.ExecutorState)) error {
	if every <= 0 {
		return fmt.Errorf("watch executor state: interval %s: must be positive", every)
	}
	us := max(every.Microseconds(), 1)
	// A connection opened from now on asks for the watch itself (asking
	// twice only sets the interval again).
	if err := c.open(func() { c.onState, c.watchUs = fn, us }); err != nil {
		return err
	}
	return c.send(context.Background(), &pb.InferRequest{WatchStateUs: us})
}

// Infer sends one request and waits for its response, ctx's end, or the
// executor's loss. The request's Id is assigned here. When ctx ends first the
// executor is told to withdraw the request and ctx's error is returned.
func (c *Client) Infer(ctx context.Context, req *pb.InferRequest) (*pb.InferResponse, error) {
	ch := make(chan *pb.InferResponse, 1)
	id, err := c.register(ch)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotSent, err)
	}
	req.Id = id
	if err := c.send(ctx, req); err != nil {
		c.unregister(id)
		return nil, fmt.Errorf("%w: %w", ErrNotSent, err)
	}
	select {
	case resp, ok := <-ch:
		if !ok {
			return nil, c.brokenErr()
		}
		return resp, nil
	case <-ctx.Done():
		c.unregister(id)
		// The withdrawal is a courtesy (the executor drops an expired
		// request itself): it does not wait long behind another write.
		wctx, cancel := context.WithTimeout(context.Background(), withdrawWait)
		_ = c.send(wctx, &pb.InferRequest{Id: id, Cancel: true})
		cancel()
		return nil, ctx.Err()
	}
}

// withdrawWait bounds how long a call that gave up waits to write its
// withdrawal behind another frame.
const withdrawWait = 20 * time.Millisecond

// dialFramesTimeout bounds opening the framed connection; the executor is
// up by then (its Health answered), so the socket accepts at once.
const dialFramesTimeout = 5 * time.Second

// register opens the framed connection if needed and reserves a request id.
func (c *Client) register(ch chan *pb.InferResponse) (uint64, error) {
	var id uint64
	err := c.open(func() {
		c.nextID++
		c.waiting[c.nextID] = ch
		id = c.nextID
	})
	return id, err
}

// open opens the framed connection if it is not, then runs then, both
// under c.mu.
func (c *Client) open(then func()) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken != nil {
		return c.broken
	}
	if c.frames == nil {
		conn, err := net.DialTimeout("unix", c.socket, dialFramesTimeout)
		if err != nil {
			return fmt.Errorf("open infer connection: %w: %w", ErrExecutorGone, err)
		}
		if _, err := conn.Write(framePreface); err != nil {
			_ = conn.Close()
			return fmt.Errorf("open infer connection: %w: %w", ErrExecutorGone, err)
		}
		if c.watchUs > 0 { // a connection after one that broke: watch the state again
			if err := writeFrame(conn, &pb.InferRequest{WatchStateUs: c.watchUs}); err != nil {
				_ = conn.Close()
				return fmt.Errorf("open infer connection: %w: %w", ErrExecutorGone, err)
			}
		}
		c.frames = conn
		c.recvWG.Add(1)
		go c.receive(conn)
	}
	then()
	return nil
}

func (c *Client) unregister(id uint64) {
	c.mu.Lock()
	delete(c.waiting, id)
	c.mu.Unlock()
}

// send writes one frame, after the frames before it; a caller whose ctx
// ends while it waits for its turn gives up with ctx's error, the frame not
// written.
func (c *Client) send(ctx context.Context, req *pb.InferRequest) error {
	c.mu.Lock()
	conn, broken, lost := c.frames, c.broken, c.lostErr
	c.mu.Unlock()
	if broken != nil {
		return broken
	}
	if conn == nil { // it broke since the caller opened it
		return fmt.Errorf("send request: %w", lost)
	}
	select {
	case c.sending <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("send request: waited behind another write: %w", ctx.Err())
	}
	err := writeFrame(conn, req)
	<-c.sending
	if err != nil {
		// The receive loop sees the same failure and fails every waiter.
		return fmt.Errorf("send request: %w: %w", ErrExecutorGone, err)
	}
	return nil
}

// receive delivers responses to their callers until the connection ends,
// then fails every caller still waiting.
func (c *Client) receive(conn net.Conn) {
	defer c.recvWG.Done()
	r := bufio.NewReaderSize(conn, frameReadBuffer)
	for {
		resp := &pb.InferResponse{}
		if err := readFrame(r, resp); err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("connection closed")
			}
			c.lost(conn, fmt.Errorf("%w: %w", ErrExecutorGone, err))
			return
		}
		c.heard.Add(1)
		// The answer first, then the state it may carry (a state frame
		// has id 0 and no answer).
		state := resp.State
		c.mu.Lock()
		ch, ok := c.waiting[resp.Id]
		delete(c.waiting, resp.Id)
		onState := c.onState
		c.mu.Unlock()
		if ok { // ids start at 1: a state frame has no caller
			ch <- resp
		}
		if state != nil && onState != nil {
			onState(state)
		}
	}
}

// lost ends the framed connection conn, broken by err (which wraps
// ErrExecutorGone): the calls waiting on it fail, since whether the
// executor ran their requests is unknown, and the next call opens another.
func (c *Client) lost(conn net.Conn, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.frames != conn {
		return
	}
	_ = conn.Close()
	c.frames, c.lostErr = nil, err
	c.failWaitingLocked()
}

// failWaitingLocked fails every call waiting for an answer; c.mu is held.
func (c *Client) failWaitingLocked() {
	for id, ch := range c.waiting {
		close(ch)
		delete(c.waiting, id)
	}
}

// brokenErr is why a waiting call failed: the client closed, or its
// connection broke.
func (c *Client) brokenErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken != nil {
		return c.broken
	}
	if c.lostErr != nil {
		return c.lostErr
	}
	return ErrExecutorGone
}

// Close closes the connections; calls in flight fail with
// ErrExecutorGone.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.broken == nil {
		c.broken = fmt.Errorf("%w: client closed", ErrExecutorGone)
	}
	frames := c.frames
	c.mu.Unlock()
	if frames != nil {
		_ = frames.Close()
	}
	err := c.conn.Close()
	c.recvWG.Wait()
	c.mu.Lock()
	c.failWaitingLocked()
	c.mu.Unlock()
	return err
}
