package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gpulet/gpuletd/executor/onnxrt"
	"github.com/gpulet/gpuletd/executor/tensor"
)

// ortModel is one model loaded in an ONNX Runtime session. Sessions run
// concurrently safely; the lock only keeps Close from destroying the session
// under a run.
type ortModel struct {
	*layout
	engine *ORT
	sess   *onnxrt.Session
	// shapes, when set, holds sess and one more session per padded batch
	// size (ORTOptions.FixedShapes).
	shapes *shapeSessions
	// rowsChecked: a run showed that every output's first dimension is the
	// batch (checkOutputRows). Until then a batched model's outputs are
	// allocated by the runtime, not ahead in the batch's shape, which a
	// model whose outputs are not batched does not fill.
	rowsChecked atomic.Bool

	mu     sync.RWMutex
	closed bool
}

var _ Loaded = (*ortModel)(nil)

// Run implements Loaded: it validates every request, joins the requests
// that agree in their non-batch dims into one run, and splits the outputs
// back per request.
func (m *ortModel) Run(ctx context.Context, reqs [][]tensor.Tensor, outputs []string) ([][]tensor.Tensor, RunInfo, error) {
	start := time.Now()
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return nil, RunInfo{}, fmt.Errorf("run model %s: %w", m.name, ErrClosed)
	}
	outIdx, err := m.selectOutputs(outputs)
	if err != nil {
		return nil, RunInfo{}, fmt.Errorf("run model %s: %w", m.name, err)
	}
	b, err := m.validateBatch(reqs)
	if err != nil {
		return nil, RunInfo{}, err
	}
	var errs []error
	for r, ordered := range b.inputs {
		if err := m.checkStrings(ordered); err != nil {
			errs = append(errs, withRequest(err, r))
		}
	}
	if len(errs) > 0 {
		return nil, RunInfo{}, fmt.Errorf("run model %s: %w", m.name, errors.Join(errs...))
	}
	info := RunInfo{BatchSize: int(b.total), Input: time.Since(start)}
	if !m.batched() {
		info.BatchSize = len(reqs)
	}
	results := make([][]tensor.Tensor, len(reqs))
	for _, group := range m.groups(b) {
		if err := ctx.Err(); err != nil {
			return nil, info, fmt.Errorf("run model %s: %w: %w", m.name, ErrCancelled, context.Cause(ctx))
		}
		joined := time.Now()
		rows := make([]int64, len(group))
		var total int64
		for j, r := range group {
			rows[j] = b.rows[r]
			total += rows[j]
		}
		ins := make([]tensor.Tensor, len(m.inputs))
		var releases []func()
		for i, spec := range m.inputs {
			if len(group) == 1 {
				ins[i] = b.inputs[group[0]][i]
				continue
			}
			parts := make([]tensor.Tensor, len(group))
			for j, r := range group {
				parts[j] = b.inputs[r][i]
			}
			var release func()
			ins[i], release = join(spec.Name, parts)
			releases = append(releases, release)
		}
		info.Input += time.Since(joined)
		outs, t, err := m.runOnce(ctx, ins, total)
		for _, release := range releases {
			release()
		}
		info.Compute += t.compute
		info.Setup += t.setup
		info.Input += t.input
		info.Output += t.output
		info.Runs++
		if err != nil {
			return nil, info, err
		}
		split := time.Now()
		for _, k := range outIdx {
			parts := []tensor.Tensor{outs[k]}
			if m.batched() {
				if parts, err = tensor.Split(outs[k], rows); err != nil {
					return nil, info, fmt.Errorf("run model %s: %w: output %q: %w", m.name, ErrRunFailed, outs[k].Name, err)
				}
			}
			for j, r := range group {
				results[r] = append(results[r], parts[j])
			}
		}
		info.Output += time.Since(split)
	}
	info.Overhead = time.Since(start) - info.Compute - info.Setup
	return results, info, nil
}

// Validate implements Loaded: the layout's checks, and BYTES elements
// without a zero byte (ONNX Runtime takes strings NUL-terminated and would
// cut them short).
func (m *ortModel) Validate(inputs []tensor.Tensor) error {
	ordered, _, err := m.validate(inputs)
	if err != nil {
		return err
	}
	return m.checkStrings(ordered)
}

// checkStrings checks one request's BYTES inputs, in model order, for zero
// bytes.
func (m *ortModel) checkStrings(ordered []tensor.Tensor) error {
	for i, spec := range m.inputs {
		if spec.DataType != tensor.Bytes {
			continue
		}
		if _, err := onnxrt.Strings(ordered[i].Data); err != nil {
			return m.inputErr(spec.Name, err.Error())
		}
	}
	return nil
}

// runOnce runs the session once on inputs in model order whose dimension 0
// is rows (when batched) and returns every output. A cancelled ctx stops
// the run between graph nodes. With fixed shapes the inputs are padded to
// the size of the session that runs them, and the outputs cut back. It
// returns where its time went (runTimes).
func (m *ortModel) runOnce(ctx context.Context, ins []tensor.Tensor, rows int64) ([]tensor.Tensor, runTimes, error) {
	sess, size := m.sess, rows
	var t runTimes
	began := time.Now()
	if m.shapes != nil {
		size = m.shapes.pad(rows)
		var err error
		if sess, t.setup, err = m.shapes.session(size); err != nil {
			if errors.Is(err, ErrClosed) {
				return nil, t, fmt.Errorf("run model %s: %w", m.name, err)
			}
			return nil, t, fmt.Errorf("run model %s: %w: %w", m.name, ErrRunFailed, err)
		}
		if ins, err = padRows(ins, rows, size); err != nil {
			return nil, t, fmt.Errorf("run model %s: %w: %w", m.name, ErrRunFailed, err)
		}
	}
	// Outputs whose shape is known are allocated here, in Go memory the
	// runtime writes into; the runtime allocates the others and they are
	// copied out.
	outs := make([]tensor.Tensor, len(m.outputs))
	for i, s := range m.outputs {
		if slices.Contains(s.Shape, -1) || s.DataType.Size() == 0 || (m.batched() && !m.rowsChecked.Load()) {
			continue
		}
		z, err := tensor.Zeros(s.Name, s.DataType, fillShape(s.Shape, size, m.batched()))
		if err != nil || len(z.Data) == 0 {
			continue
		}
		outs[i] = z
	}
	start := time.Now()
	t.input = start.Sub(began) - t.setup
	err := sess.Run(ctx, ins, outs)
	ran := time.Now()
	t.compute = ran.Sub(start)
	switch {
	case errors.Is(err, onnxrt.ErrTerminated):
		return nil, t, fmt.Errorf("run model %s: %w: %w", m.name, ErrCancelled, context.Cause(ctx))
	case errors.Is(err, onnxrt.ErrInvalidArgument):
		return nil, t, fmt.Errorf("run model %s: %w: %w: %s", m.name, ErrRunFailed, ErrRejectedInput, reason(err))
	case err != nil:
		return nil, t, fmt.Errorf("run model %s: %w: %s", m.name, ErrRunFailed, reason(err))
	}
	for i, s := range m.outputs {
		if outs[i].DataType != s.DataType {
			return nil, t, fmt.Errorf("run model %s: %w: output %q is %s, the model declares %s", m.name, ErrRunFailed, s.Name, outs[i].DataType, s.DataType)
		}
	}
	if outs, err = trimRows(outs, rows, size); err != nil {
		return nil, t, fmt.Errorf("run model %s: %w: %w", m.name, ErrRunFailed, err)
	}
	t.output = time.Since(ran)
	return outs, t, nil
}

// PaddedBatch is the batch size a batch of n rows runs at: n, or with fixed
// shapes the size of the session that runs it.
func (m *ortModel) PaddedBatch(n int) int {
	if m.shapes == nil {
		return n
	}
	return int(m.shapes.pad(int64(n)))
}

// Warmup implements Loaded: a batch of b is b one-row requests, so that
// warm-up joins and splits tensors as serving does. It first checks that
// the model's outputs are batched (checkOutputRows).
func (m *ortModel) Warmup(ctx context.Context, batches []int) (WarmupResult, error) {
	if err := m.checkOutputRows(ctx); err != nil {
		return WarmupResult{}, err
	}
	return warmup(ctx, m.layout, batches, m.Run)
}

// checkOutputRows runs a batched model once on a request of one row and
// checks that every output has one row too: a model configured to batch
// (max_batch_size above 0) whose outputs are not batched along their first
// dimension (a count of detections, the indices of what is non-zero)
// cannot have its outputs split back per request. Once it holds, outputs
// of known shape are allocated ahead of each run.
func (m *ortModel) checkOutputRows(ctx context.Context) error {
	if !m.batched() || m.rowsChecked.Load() {
		return nil
	}
	one, err := zeroRequest(m.inputs, m.warmShapes, 1, true)
	if err != nil {
		return fmt.Errorf("check outputs of model %s: %w", m.name, err)
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return fmt.Errorf("check outputs of model %s: %w", m.name, ErrClosed)
	}
	outs, _, err := m.runOnce(ctx, one, 1)
	if err != nil {
		return fmt.Errorf("check outputs of model %s: %w", m.name, err)
	}
	for _, o := range outs {
		if len(o.Shape) == 0 || o.Shape[0] != 1 {
			return fmt.Errorf("check outputs of model %s: %w: output %q has shape %v for a batch of one row: its first dimension is not the batch, "+
				"so the answers of a batch cannot be told apart; serve the model with max_batch_size: 0 (it does not batch)", m.name, ErrInvalidSpec, o.Name, o.Shape)
		}
	}
	m.rowsChecked.Store(true)
	return nil
}

// Close implements Loaded; it waits for runs in progress.
func (m *ortModel) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	if m.shapes != nil {
		m.shapes.close()
	} else {
		m.sess.Close()
	}
	m.mu.Unlock()
	m.engine.open.forget(m)
	return nil
}

// runTimes say where a run's time went: opening a session for its size
// (setup), readying the inputs (input: padding, allocating outputs of known
// shape), running the session (compute), and checking and trimming what
// it wrote (output).
type runTimes struct{ setup, input, compute, output time.Duration }
