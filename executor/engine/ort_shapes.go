package engine

import (
	"fmt"
	"sync"
	"time"

	"github.com/gpulet/gpuletd/executor/onnxrt"
	"github.com/gpulet/gpuletd/executor/tensor"
)

// shapeSessions keeps one ONNX Runtime session per batch size a batch is
// padded up to: the powers of two below the model's largest batch, and the
// largest batch itself. Each session then only ever sees one input shape.
// On the CUDA provider a session whose batch size changes from one run to
// the next redoes its convolutions' set-up every time: measured on an H200
// with ONNX Runtime 1.29.0, lenet5's runs took 2.8–19 ms and resnet18's
// 31–60 ms when the batch size cycled through 1–5, against 0.13 and 0.97 ms
// with one session per size (BenchmarkGPURunGaps). The price is a copy of
// the weights per session and padded rows computed for nothing.
type shapeSessions struct {
	open  func() (*onnxrt.Session, error)
	sizes []int64 // ascending

	mu     sync.Mutex
	bySize map[int64]*onnxrt.Session
	closed bool
}

// PaddedSizes are the batch sizes a batching model whose largest batch is
// maxBatch runs at with fixed shapes, one session each: the powers of two
// below maxBatch, and maxBatch.
func PaddedSizes(maxBatch int) []int64 {
	var sizes []int64
	for n := int64(1); n < int64(maxBatch); n *= 2 {
		sizes = append(sizes, n)
	}
	return append(sizes, int64(max(maxBatch, 1)))
}

// PaddedBatch is the batch size a batch of n rows runs at with fixed shapes
// (the smallest of PaddedSizes(maxBatch) not below n).
func PaddedBatch(maxBatch, n int) int {
	return int(padTo(PaddedSizes(maxBatch), int64(n)))
}

// newShapeSessions pads batches of a model whose largest batch is
// maxBatch; first is a session already open, kept for size 1. open opens
// another session of the same model.
func newShapeSessions(maxBatch int, first *onnxrt.Session, open func() (*onnxrt.Session, error)) *shapeSessions {
	return &shapeSessions{open: open, sizes: PaddedSizes(maxBatch), bySize: map[int64]*onnxrt.Session{1: first}}
}

// pad is the batch size a batch of rows runs at.
func (s *shapeSessions) pad(rows int64) int64 { return padTo(s.sizes, rows) }

// padTo is the smallest of sizes (ascending) not below rows, or rows.
func padTo(sizes []int64, rows int64) int64 {
	for _, n := range sizes {
		if n >= rows {
			return n
		}
	}
	return rows
}

// session returns the session for batches of size, opening it on first use
// (a model's warm-up runs every size, so serving finds them open). A session
// opens outside the lock: on an H200 that took 25–200 ms per model at a
// retune, and a retuned model's new sizes open while its open sizes go on
// serving; under the lock every batch of the model waited for the open.
// Two first uses of one size may both open it; the later closes its own. It
// also returns how long opening took, 0 when the session was open.
func (s *shapeSessions) session(size int64) (*onnxrt.Session, time.Duration, error) {
	s.mu.Lock()
	sess, ok := s.bySize[size]
	closed := s.closed
	s.mu.Unlock()
	switch {
	case closed:
		return nil, 0, ErrClosed
	case ok:
		return sess, 0, nil
	}
	start := time.Now()
	sess, err := s.open()
	took := time.Since(start)
	if err != nil {
		return nil, took, fmt.Errorf("open a session for batches of %d: %w", size, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		sess.Close()
		return nil, took, ErrClosed
	}
	if have, ok := s.bySize[size]; ok {
		sess.Close()
		return have, took, nil
	}
	s.bySize[size] = sess
	return sess, took, nil
}

// count says how many sessions are open.
func (s *shapeSessions) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.bySize)
}

// close closes every session.
func (s *shapeSessions) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sess := range s.bySize {
		sess.Close()
	}
	s.bySize, s.closed = nil, true
}

// padRows returns ins, whose dimension 0 is rows, with zero rows appended up
// to size.
func padRows(ins []tensor.Tensor, rows, size int64) ([]tensor.Tensor, error) {
	if size == rows {
		return ins, nil
	}
	out := make([]tensor.Tensor, len(ins))
	for i, t := range ins {
		shape := append([]int64{size - rows}, t.Shape[1:]...)
		zeros, err := tensor.Zeros(t.Name, t.DataType, shape)
		if err != nil {
			return nil, fmt.Errorf("pad input %q: %w", t.Name, err)
		}
		if out[i], err = tensor.Concat(t.Name, []tensor.Tensor{t, zeros}); err != nil {
			return nil, fmt.Errorf("pad input %q: %w", t.Name, err)
		}
	}
	return out, nil
}

// trimRows cuts outputs, whose dimension 0 is size, back to their first
// rows.
func trimRows(outs []tensor.Tensor, rows, size int64) ([]tensor.Tensor, error) {
	if size == rows {
		return outs, nil
	}
	for i, t := range outs {
		parts, err := tensor.Split(t, []int64{rows, size - rows})
		if err != nil {
			return nil, fmt.Errorf("trim padded output %q: %w", t.Name, err)
		}
		outs[i] = parts[0]
	}
	return outs, nil
}
