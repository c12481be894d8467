package executor

import (
	"sync"
	"time"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/executor/tensor"
)

// inferStream is one client's Infer stream: responses go out through an
// unbounded mailbox drained by one sender goroutine, so the loop never waits
// on a slow client.
type inferStream struct {
	out    *mailbox
	active map[uint64]*request // loop-owned: requests not yet answered
}

// Infer serves one stream of requests. Each request is checked here, on the
// stream's goroutine, and bad ones are answered at once; good ones go to the
// scheduling loop.
func (s *Server) Infer(stream pb.Executor_InferServer) error {
	st := &inferStream{out: newMailbox(), active: map[uint64]*request{}}
	sendErr := make(chan error, 1)
	go func() { sendErr <- st.out.drain(stream.Send) }()
	defer func() {
		s.loop.post(func() { s.loop.streamGone(st) })
		st.out.close()
		<-sendErr
	}()
	for {
		req, err := stream.Recv()
		if err != nil {
			return nil // the client closed the stream or went away
		}
		if req.Cancel {
			id := req.Id
			s.loop.post(func() { s.loop.cancel(st, id) })
			continue
		}
		s.accept(st, req)
	}
}

// accept checks one request and submits it, or answers it with its error.
func (s *Server) accept(st *inferStream, req *pb.InferRequest) {
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
	deadline := s.clock.Now() + m.slo
	if req.DeadlineUnixNs != 0 {
		deadline = min(deadline, s.toClock(req.DeadlineUnixNs))
	}
	r := &request{stream: st, id: req.Id, model: m, outputs: req.Outputs}
	if !s.loop.post(func() { s.loop.submit(r, rows, deadline) }) {
		st.out.push(errorf(req.Id, pb.Code_UNAVAILABLE, "%v", errStopping))
	}
}

// mailbox is an unbounded FIFO of responses with one consumer.
type mailbox struct {
	mu     sync.Mutex
	items  []*pb.InferResponse
	wake   chan struct{}
	closed bool
}

func newMailbox() *mailbox { return &mailbox{wake: make(chan struct{}, 1)} }

func (m *mailbox) push(r *pb.InferResponse) {
	m.mu.Lock()
	if !m.closed {
		m.items = append(m.items, r)
	}
	m.mu.Unlock()
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

func (m *mailbox) close() {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// drain sends items until the mailbox is closed and empty, or send fails.
// After a failure it keeps discarding items until close, so pushers never
// block.
func (m *mailbox) drain(send func(*pb.InferResponse) error) error {
	var failed error
	for {
		m.mu.Lock()
		items, closed := m.items, m.closed
		m.items = nil
		m.mu.Unlock()
		for _, it := range items {
			if failed == nil {
				failed = send(it)
			}
		}
		if closed {
			return failed
		}
		if len(items) == 0 {
			select {
			case <-m.wake:
			case <-time.After(time.Second):
			}
		}
	}
}
