package engine

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/executor/tensor"
)

// emuModel is one model on the emulated engine.
type emuModel struct {
	*layout
	engine     *Emulated
	sleeper    Sleeper
	latency    LatencyFunc
	contention float64
	jitter     *jitter
	memory     string // the key of the device memory it holds; "": none

	mu     sync.RWMutex
	closed bool
}

var _ Loaded = (*emuModel)(nil)

// Run implements Loaded. A batch of rows takes ℓ(rows) × contention ×
// jitter; a model that does not batch takes ℓ(1) × … per request, in one
// sleep. Each output is zero-filled with dimension 0 = the request's rows
// (when batched) and 1 for every other dim the spec leaves open (-1).
func (m *emuModel) Run(ctx context.Context, reqs [][]tensor.Tensor, outputs []string) ([][]tensor.Tensor, RunInfo, error) {
	return m.run(ctx, reqs, outputs, true)
}

// Warmup implements Loaded without sleeping: an emulated model has nothing
// to warm. Compute reports the emulated time each batch would take.
func (m *emuModel) Warmup(ctx context.Context, batches []int) (WarmupResult, error) {
	return warmup(ctx, m.layout, batches, func(ctx context.Context, reqs [][]tensor.Tensor, outputs []string) ([][]tensor.Tensor, RunInfo, error) {
		return m.run(ctx, reqs, outputs, false)
	})
}

func (m *emuModel) run(ctx context.Context, reqs [][]tensor.Tensor, outputs []string, sleep bool) ([][]tensor.Tensor, RunInfo, error) {
	start := time.Now()
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return nil, RunInfo{}, fmt.Errorf("run model %s: %w", m.name, ErrClosed)
	}
	if err := m.engine.fault.check(); err != nil && sleep {
		return nil, RunInfo{}, fmt.Errorf("run model %s: %w: %w", m.name, ErrRunFailed, err)
	}
	outIdx, err := m.selectOutputs(outputs)
	if err != nil {
		return nil, RunInfo{}, fmt.Errorf("run model %s: %w", m.name, err)
	}
	b, err := m.validateBatch(reqs)
	if err != nil {
		return nil, RunInfo{}, err
	}
	info := RunInfo{BatchSize: int(b.total), Runs: 1, Emulated: true, Input: time.Since(start)}
	if !m.batched() {
		info.BatchSize, info.Runs = len(reqs), len(reqs)
	}
	if len(reqs) == 0 {
		return [][]tensor.Tensor{}, RunInfo{Emulated: true}, nil
	}
	if m.batched() {
		info.Compute = m.duration(int(b.total))
	} else {
		for range reqs {
			info.Compute += m.duration(1)
		}
	}
	filled := time.Now()
	results := make([][]tensor.Tensor, len(reqs))
	for r := range reqs {
		results[r] = make([]tensor.Tensor, len(outIdx))
		for j, k := range outIdx {
			s := m.outputs[k]
			if results[r][j], err = tensor.Zeros(s.Name, s.DataType, fillShape(s.Shape, b.rows[r], m.batched())); err != nil {
				return nil, info, fmt.Errorf("run model %s: %w: output %w", m.name, ErrRunFailed, err)
			}
		}
	}
	info.Output = time.Since(filled) // the outputs, zero-filled before the run's time is slept
	var slept time.Duration
	if sleep {
		t0 := time.Now()
		err := m.sleeper.Sleep(ctx, info.Compute)
		slept = time.Since(t0)
		if err != nil {
			return nil, info, fmt.Errorf("run model %s: %w: %w", m.name, ErrCancelled, err)
		}
	}
	info.Overhead = time.Since(start) - slept
	return results, info, nil
}

// duration is ℓ(b) × contention × a jitter draw.
func (m *emuModel) duration(b int) time.Duration {
	l := m.latency(b)
	if l <= 0 {
		return 0
	}
	return time.Duration(float64(l) * m.contention * m.jitter.factor())
}

// Close implements Loaded; it waits for runs in progress.
func (m *emuModel) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	m.mu.Unlock()
	m.engine.open.forget(m)
	m.giveMemory()
	return nil
}

// giveMemory gives back the device memory the model holds, if any.
func (m *emuModel) giveMemory() {
	if m.memory == "" {
		return
	}
	if err := m.engine.opts.Memory.Give(m.memory); err != nil {
		m.engine.log.Warn("give back device memory", zap.Error(err))
	}
}
