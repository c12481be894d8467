package daemon

import (
	"context"
	"net"
	"sync"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/peer"

	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
)

// gRPC answers until they are sent. A gRPC call's answer is sent by the
// gRPC library after the call has returned, as fast as its client reads
// it: a client that opens many calls and reads none of their answers would
// otherwise have the daemon hold them all, outside every budget (64 unread
// answers of 16 MB held 1.7 GB here), for as long as it keeps its
// connection. So what an answer of heldAnswerMin or more raw output bytes
// holds beside its request stays in the budget of what requests hold
// beside their bodies until the library has sent it, or its connection
// has ended; and a connection that takes none of its answers' bytes for
// limits.body_timeout is closed, as a REST client that stops reading its
// answer is disconnected. Smaller answers are given back as the call
// returns: a connection's 1 024 calls hold at most 1 MiB of them.

// heldAnswerMin is the least raw output bytes of an answer held until
// sent: its message is then more than 1 KiB, and the gRPC library tells
// when a buffer of more than 1 KiB is free (mem.IsBelowBufferPoolingThreshold).
const heldAnswerMin = 1 << 10

// answerStep is how much of an answer's raw outputs goes to the gRPC
// library as one buffer, so that the daemon sees a slow client take its
// answers piece by piece.
const answerStep = 1 << 20

// grpcAnswers holds the answers of the gRPC listener's connections until
// they are sent.
type grpcAnswers struct {
	// stall is how long a connection may take none of its answers' bytes
	// (limits.body_timeout); 0: for ever.
	stall func() time.Duration
	// abandoned counts an answer of model whose connection ended before
	// it was sent whole.
	abandoned func(model string)
	log       *zap.Logger

	mu      sync.Mutex
	conns   map[string]*answerConn                 // by the client's address
	pending map[*pb.ModelInferResponse]*heldAnswer // kept and not yet encoded
}

// newGRPCAnswers holds answers for n's gRPC connections.
func newGRPCAnswers(n *node) *grpcAnswers {
	return &grpcAnswers{
		stall:     func() time.Duration { return n.conf().Limits.BodyTimeout.D() },
		abandoned: func(model string) { n.metrics.grpcAbandoned.WithLabelValues(model).Inc() },
		log:       n.log.Named("grpc"),
		conns:     map[string]*answerConn{},
		pending:   map[*pb.ModelInferResponse]*heldAnswer{},
	}
}

// heldAnswer is one answer of a model, and what gives back what it holds
// (the room settled once it ran, and the estimate held before: runGRPC).
type heldAnswer struct {
	model   string
	settled func()
	held    func()
	c       *answerConn // nil until kept
	stop    func() bool // stops giving it back when its call ends (unsent)
	left    int         // its outputs' buffers not yet sent (guarded by the grpcAnswers' mu)
}

// answerConn is a gRPC connection whose answers are held until sent.
type answerConn struct {
	net.Conn
	a    *grpcAnswers
	addr string
	once sync.Once
	// Guarded by a.mu.
	held     map[*heldAnswer]struct{}
	progress time.Time // when it last took a piece of an answer, or began to hold one
	timer    *time.Timer
	closed   bool
}

// release gives back what h holds.
func (h *heldAnswer) release() {
	h.settled()
	h.held()
}

// listener has a's connections' answers held until sent.
func (a *grpcAnswers) listener(ln net.Listener) net.Listener {
	if a == nil {
		return ln
	}
	return &answerListener{Listener: ln, a: a}
}

// answerListener is a listener whose connections' answers are held.
type answerListener struct {
	net.Listener
	a *grpcAnswers
}

func (l *answerListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	ac := &answerConn{Conn: c, a: l.a, addr: c.RemoteAddr().String(), held: map[*heldAnswer]struct{}{}}
	l.a.mu.Lock()
	l.a.conns[ac.addr] = ac
	l.a.mu.Unlock()
	return ac, nil
}

// Close closes the connection and gives back the answers it has not sent.
func (c *answerConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.a.ended(c) })
	return err
}

// ended gives back what the answers of c, a connection that has ended,
// hold, counting them abandoned.
func (a *grpcAnswers) ended(c *answerConn) {
	a.mu.Lock()
	c.closed = true
	if a.conns[c.addr] == c {
		delete(a.conns, c.addr)
	}
	if c.timer != nil {
		c.timer.Stop()
	}
	left := make([]*heldAnswer, 0, len(c.held))
	for h := range c.held {
		left = append(left, h)
	}
	clear(c.held)
	for res, h := range a.pending {
		if h.c == c {
			delete(a.pending, res)
		}
	}
	a.mu.Unlock()
	for _, h := range left {
		a.abandoned(h.model)
		h.release()
	}
}

// keep holds what h, the answer res to a call of ctx, holds until the gRPC
// library has sent it (the codec hands it over: take) or the call has
// ended without sending it, or gives it back at once: a small answer, or
// one whose connection is not held (nil h: none).
func (a *grpcAnswers) keep(ctx context.Context, res *pb.ModelInferResponse, h *heldAnswer) {
	if h == nil {
		return
	}
	if a == nil || rawBytes(res) < heldAnswerMin {
		h.release()
		return
	}
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		h.release()
		return
	}
	a.mu.Lock()
	c := a.conns[p.Addr.String()]
	if c == nil || c.closed {
		a.mu.Unlock()
		h.release()
		return
	}
	h.c = c
	a.pending[res] = h
	if len(c.held) == 0 {
		c.progress = time.Now()
		a.watch(c)
	}
	c.held[h] = struct{}{}
	// A call that ends without sending its answer (an interceptor's
	// error) gives it back then.
	h.stop = context.AfterFunc(ctx, func() { a.unsent(res) })
	a.mu.Unlock()
}

// unsent gives back what res holds if the codec has not taken it.
func (a *grpcAnswers) unsent(res *pb.ModelInferResponse) {
	a.mu.Lock()
	h := a.pending[res]
	if h != nil {
		delete(a.pending, res)
		delete(h.c.held, h)
	}
	a.mu.Unlock()
	if h != nil {
		h.release()
	}
}

// watch has c closed once it has taken none of its answers' bytes for the
// stall allowed (a.mu held).
func (a *grpcAnswers) watch(c *answerConn) {
	stall := a.stall()
	if stall <= 0 {
		return
	}
	if c.timer == nil {
		c.timer = time.AfterFunc(stall, func() { a.check(c) })
		return
	}
	c.timer.Reset(stall - time.Since(c.progress))
}

// check closes c if it holds answers and has taken none of their bytes
// for the stall allowed; else it looks again when it might have.
func (a *grpcAnswers) check(c *answerConn) {
	a.mu.Lock()
	if c.closed || len(c.held) == 0 {
		a.mu.Unlock()
		return
	}
	stall, idle := a.stall(), time.Since(c.progress)
	if stall <= 0 || idle < stall {
		if stall > 0 {
			c.timer.Reset(stall - idle)
		}
		a.mu.Unlock()
		return
	}
	held := len(c.held)
	a.mu.Unlock()
	a.log.Warn("closing a gRPC connection that took none of its answers' bytes for limits.body_timeout",
		zap.String("client", c.addr), zap.Int("answers", held), zap.Duration("body_timeout", stall))
	_ = c.Close()
}

// take hands the codec the answer res holds, to be given back once its
// outputs are sent (sent); nil: res holds nothing (or a is nil).
func (a *grpcAnswers) take(res *pb.ModelInferResponse) *heldAnswer {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	h := a.pending[res]
	delete(a.pending, res)
	a.mu.Unlock()
	if h != nil {
		h.stop()
	}
	return h
}

// buffer is a piece of h's outputs for the gRPC library to send: one
// that tells h when it is sent where it is large enough for the library
// to say (mem.IsBelowBufferPoolingThreshold), counted in h.left.
func (h *heldAnswer) buffer(piece []byte) mem.Buffer {
	if mem.IsBelowBufferPoolingThreshold(len(piece)) {
		return mem.SliceBuffer(piece)
	}
	piece = piece[:len(piece):len(piece)]
	return h.pooled(&piece, nil)
}

// pooled is buf, a whole piece of h's answer (more than
// mem.BufferPoolingThreshold bytes), for the gRPC library to send: it
// tells h when it is sent, and goes back to pool then (nil: a view of the
// outputs, kept by nobody).
func (h *heldAnswer) pooled(buf *[]byte, pool mem.BufferPool) mem.Buffer {
	h.left++
	return mem.NewBuffer(buf, pieceSent{h, pool})
}

// pieceSent is told by the gRPC library that a piece of an answer has
// been sent (Put: its buffer is free).
type pieceSent struct {
	h    *heldAnswer
	pool mem.BufferPool // where the piece's bytes go back; nil: nowhere
}

// Get is never called: the library only puts the piece back.
func (p pieceSent) Get(length int) *[]byte {
	b := make([]byte, length)
	return &b
}

// Put books that the piece has been sent: the connection took bytes, and
// the answer is given back once every piece of it is.
func (p pieceSent) Put(buf *[]byte) {
	if p.pool != nil {
		p.pool.Put(buf)
	}
	p.h.c.a.sent(p.h, 1)
}

// sent books that n of h's pieces have been sent (0: h has no piece that
// says so, or could not be encoded) and gives back what h holds once none
// is left, unless its connection has ended and gave it back.
func (a *grpcAnswers) sent(h *heldAnswer, n int) {
	a.mu.Lock()
	h.left -= n
	c := h.c
	_, held := c.held[h]
	done := held && h.left <= 0
	if n > 0 {
		c.progress = time.Now()
	}
	if done {
		delete(c.held, h)
	}
	a.mu.Unlock()
	if done {
		h.release()
	}
}
