package executor

import (
	"bufio"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"go.uber.org/zap"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/executor/tensor"
)

// inferStream is one client's framed connection: responses are written to
// it by whoever answers (the loop, or the reader for a refused request),
// one frame at a time.
type inferStream struct {
	out    *frameWriter
	active map[uint64]*request // loop-owned: requests not yet answered
	// Loop-owned, for a connection that watches the state: when its
	// last state frame was written (watch writes the first at once).
	published time.Duration
	// pending are answers the loop wrote during its current iteration
	// (loop-owned); it flushes them with one write at the iteration's end,
	// the state attached to the last when it changed.
	pending []*pb.InferResponse
	// pendingRead is, for each pending answer, when its request's frame
	// was read (zero: not known); flush turns it into the answer's HeldUs.
	pendingRead []time.Time
}

// serveFrames serves one framed connection until it closes or breaks. Each
// request is checked here, on the connection's goroutine, and bad ones are
// answered at once; good ones go to the scheduling loop.
func (s *Server) serveFrames(conn net.Conn, r *bufio.Reader) {
	st := &inferStream{out: &frameWriter{conn: conn}, active: map[uint64]*request{}}
	defer func() {
		s.loop.post(func() { s.loop.streamGone(st) })
		st.out.close()
	}()
	for {
		req := &pb.InferRequest{}
		if err := readFrame(r, req); err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				s.log.Warn("infer connection closed", zap.Error(err))
			}
			return // the client closed the connection or broke the framing
		}
		if req.Cancel {
			id := req.Id
			s.loop.post(func() { s.loop.cancel(st, id) })
			continue
		}
		if req.WatchStateUs > 0 {
			every := time.Duration(req.WatchStateUs) * time.Microsecond
			s.loop.post(func() { s.loop.watch(st, every) })
			continue
		}
		s.accept(st, req, time.Now())
	}
}

// accept checks one request, whose frame was read at read, and submits it,
// or answers it with its error.
func (s *Server) accept(st *inferStream, req *pb.InferRequest, read time.Time) {
	m, ok := s.model(req.Model)
	if !ok {
		st.out.push(errorf(req.Id, pb.Code_NOT_FOUND, "model %q is not loaded on this executor", req.Model))
		return
	}
	inputs, err := fromProto(req.Inputs)
	if err != nil {
		st.out.push(errorf(req.Id, pb.Code_INVALID_ARGUMENT, "%s: %v", req.Model, err))
		return
	}
	for _, o := range req.Outputs {
		if !m.outputs[o] {
			st.out.push(errorf(req.Id, pb.Code_INVALID_ARGUMENT, "%s has no output %q", req.Model, o))
			return
		}
	}
	if err := m.rt.Validate(inputs); err != nil {
		st.out.push(errorf(req.Id, pb.Code_INVALID_ARGUMENT, "%s: %v", req.Model, err))
		return
	}
	rows := [][]tensor.Tensor{inputs}
	if m.maxBatch > 0 {
		n, err := rowsOf(inputs)
		if err == nil && n > int64(m.maxBatch) {
			st.out.push(errorf(req.Id, pb.Code_INVALID_ARGUMENT, "%s: %d rows exceed max_batch_size %d", req.Model, n, m.maxBatch))
			return
		}
		if err == nil && n > 1 {
			rows, err = splitRows(inputs, n)
		}
		if err != nil {
			st.out.push(errorf(req.Id, pb.Code_INVALID_ARGUMENT, "%s: %v", req.Model, err))
			return
		}
	}
	// The daemon's deadline stands, even past the model's SLO: a pipeline's
	// step is due when the pipeline's SLO leaves it (pipeline.TaskDeadline),
	// which may be later than its model's own SLO allows a request from the
	// door, as the simulator serves it. Without one, the model's SLO.
	var deadline time.Duration
	if req.DeadlineMonoNs != 0 {
		deadline = s.toClock(req.DeadlineMonoNs)
	} else {
		deadline = s.clock.Now() + m.slo
	}
	r := &request{stream: st, id: req.Id, model: m, outputs: req.Outputs, read: read, alone: req.Alone}
	if !s.loop.post(func() { s.loop.submit(r, rows, deadline) }) {
		resp := errorf(req.Id, pb.Code_UNAVAILABLE, "%v", errStopping)
		resp.NotRun = true
		st.out.push(resp)
	}
}

// frameWriteTimeout bounds one response's write: a daemon that has not
// read for this long is stuck, and its connection is closed rather than let
// it hold the loop.
const frameWriteTimeout = 10 * time.Second

// frameWriter writes responses to a framed connection, one writer at a time.
// After a failed write the connection is closed (the daemon sees the
// executor gone and its reader here ends) and later responses are dropped.
type frameWriter struct {
	mu     sync.Mutex
	conn   net.Conn
	failed bool
}

func (w *frameWriter) push(r *pb.InferResponse) { w.pushAll([]*pb.InferResponse{r}) }

// pushAll writes responses with one vectored write. One that cannot be
// framed (too large) is answered with its error instead.
func (w *frameWriter) pushAll(rs []*pb.InferResponse) {
	var bufs net.Buffers
	for _, r := range rs {
		var err error
		if bufs, err = appendFrame(bufs, r); err != nil {
			e := errorf(r.Id, pb.Code_INTERNAL, "%v", err)
			e.State = r.State
			bufs, _ = appendFrame(bufs, e)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.failed {
		return
	}
	_ = w.conn.SetWriteDeadline(time.Now().Add(frameWriteTimeout))
	if _, err := bufs.WriteTo(w.conn); err != nil {
		w.failed = true
		_ = w.conn.Close()
	}
}

func (w *frameWriter) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.failed = true
	_ = w.conn.Close()
}
