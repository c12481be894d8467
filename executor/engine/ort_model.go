package engine

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/gpulet/gpuletd/executor/tensor"
)

// ortModel is one model loaded in an ONNX Runtime session. Sessions run
// concurrently safely; the lock only keeps Close from destroying the session
// under a run.
type ortModel struct {
	*layout
	engine *ORT
	sess   *ort.DynamicAdvancedSession

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
	info := RunInfo{BatchSize: int(b.total)}
	if !m.batched() {
		info.BatchSize = len(reqs)
	}
	results := make([][]tensor.Tensor, len(reqs))
	for _, group := range m.groups(b) {
		if err := ctx.Err(); err != nil {
			return nil, info, fmt.Errorf("run model %s: %w: %w", m.name, ErrCancelled, context.Cause(ctx))
		}
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
		outs, compute, err := m.runOnce(ctx, ins, total)
		for _, release := range releases {
			release()
		}
		info.Compute += compute
		info.Runs++
		if err != nil {
			return nil, info, err
		}
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
	}
	info.Overhead = time.Since(start) - info.Compute
	return results, info, nil
}

// runOnce runs the session once on inputs in model order whose dimension 0
// is rows (when batched) and returns every output. A cancelled ctx sets the
// run's terminate flag, which ONNX Runtime checks between graph nodes.
func (m *ortModel) runOnce(ctx context.Context, ins []tensor.Tensor, rows int64) ([]tensor.Tensor, time.Duration, error) {
	inVals := make([]ort.Value, len(ins))
	defer destroyAll(inVals)
	for i, t := range ins {
		v, err := newValue(t)
		if err != nil {
			return nil, 0, fmt.Errorf("run model %s: %w: input %w", m.name, ErrRunFailed, err)
		}
		inVals[i] = v
	}
	// Outputs whose shape is known are allocated here, in Go memory the
	// runtime writes into; the others the runtime allocates and
	// onnxruntime_go copies out.
	outs := make([]tensor.Tensor, len(m.outputs))
	outVals := make([]ort.Value, len(m.outputs))
	defer destroyAll(outVals)
	allocated := make([]bool, len(m.outputs))
	for i, s := range m.outputs {
		if slices.Contains(s.Shape, -1) {
			continue
		}
		t, err := tensor.Zeros(s.Name, s.DataType, fillShape(s.Shape, rows, m.batched()))
		if err != nil || len(t.Data) == 0 {
			continue
		}
		v, err := newValue(t)
		if err != nil {
			return nil, 0, fmt.Errorf("run model %s: %w: output %w", m.name, ErrRunFailed, err)
		}
		outs[i], outVals[i], allocated[i] = t, v, true
	}

	ro, err := ort.NewRunOptions()
	if err != nil {
		return nil, 0, fmt.Errorf("run model %s: %w: %s", m.name, ErrRunFailed, oneLine(err))
	}
	defer func() { _ = ro.Destroy() }()
	terminated := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		_ = ro.Terminate()
		close(terminated)
	})
	start := time.Now()
	err = m.sess.RunWithOptions(inVals, outVals, ro)
	compute := time.Since(start)
	if !stop() {
		<-terminated // the flag is set: wait before the options go
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, compute, fmt.Errorf("run model %s: %w: %w", m.name, ErrCancelled, context.Cause(ctx))
		}
		return nil, compute, fmt.Errorf("run model %s: %w: %s", m.name, ErrRunFailed, reason(err))
	}
	for i, s := range m.outputs {
		if allocated[i] {
			continue
		}
		shape, data, err := valueBytes(outVals[i])
		if err != nil {
			return nil, compute, fmt.Errorf("run model %s: %w: output %q: %w", m.name, ErrRunFailed, s.Name, err)
		}
		t, err := tensor.New(s.Name, s.DataType, shape, data)
		if err != nil {
			return nil, compute, fmt.Errorf("run model %s: %w: output %q: %w", m.name, ErrRunFailed, s.Name, err)
		}
		outs[i] = t
	}
	return outs, compute, nil
}

// Warmup implements Loaded: a batch of b is b one-row requests, so that
// warm-up joins and splits tensors as serving does.
func (m *ortModel) Warmup(ctx context.Context, batches []int) (WarmupResult, error) {
	return warmup(ctx, m.layout, batches, m.Run)
}

// Close implements Loaded; it waits for runs in progress.
func (m *ortModel) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	err := m.sess.Destroy()
	m.mu.Unlock()
	m.engine.open.forget(m)
	if err != nil {
		return fmt.Errorf("close model %s: %s", m.name, oneLine(err))
	}
	return nil
}
