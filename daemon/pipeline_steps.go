package daemon

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sync"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor/tensor"
)

// runSteps runs steps [from, to) of the pipeline on pool, adding what they
// write to it, and returns the models that ran them, in step order. Steps
// without branches among them run one after the other; with branches each
// runs as soon as the steps it reads are through, beside any others that
// may run then (runBranches), as Triton runs an ensemble's steps. fan,
// unless nil, is the fan-out after them: where steps follow its writer
// among them, the writer's goroutine runs it once the writer is through,
// beside them (runBranches); else the caller runs it after them.
func (r *pipelineRun) runSteps(ctx context.Context, from, to int, pool map[string]tensor.Tensor, fan *fanRun) ([]*repository.Model, *inferError) {
	branches := from+1 < to && slices.ContainsFunc(r.e.Steps[from+1:to], func(s repository.EnsembleStep) bool { return s.Beside })
	if branches || (fan != nil && r.e.FanoutWriter >= from && r.e.FanoutWriter < to-1) {
		return r.runBranches(ctx, from, to, pool, fan)
	}
	path := make([]*repository.Model, 0, to-from)
	for i := from; i < to; i++ {
		m, ierr := r.step(ctx, i, pool)
		if ierr != nil {
			return nil, ierr
		}
		path = append(path, m)
	}
	return path, nil
}

// runBranches is runSteps for a pipeline with branches: a goroutine per
// step, each waiting for the steps it needs (EnsembleStep.Needs) and then
// running its own on what they and pool hold; the first step to fail
// cancels the others, and its error is the answer. Each step keeps the
// deadline the pipeline's split gives it along what waits on it
// (Ensemble.Waits). The step that writes the fan-out runs fan (unless
// nil) once it is through.
func (r *pipelineRun) runBranches(ctx context.Context, from, to int, pool map[string]tensor.Tensor, fan *fanRun) ([]*repository.Model, *inferError) {
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	n := to - from
	done := make([]chan struct{}, n) // closed when a step is through or gave up
	for k := range done {
		done[k] = make(chan struct{})
	}
	own := make([]map[string]tensor.Tensor, n) // each step's tensors: what it read and wrote
	for k := range n {
		// What it reads of pool, taken here: the goroutines do not touch
		// pool, which may then stay on its caller's stack (a fan-out's row).
		own[k] = map[string]tensor.Tensor{}
		for _, v := range r.e.Steps[from+k].Inputs {
			if t, ok := pool[v]; ok {
				own[k][v] = t
			}
		}
	}
	var given map[string]tensor.Tensor // what the fan-out's rows read of pool
	if fan != nil {
		given = rowInputs(r.e, pool)
	}
	path := make([]*repository.Model, n)
	var (
		wg   sync.WaitGroup
		stop = firstFailure{cancel: cancel}
	)
	for k := range n {
		i := from + k
		wg.Go(func() {
			closed := false // done[k]: closed early by the fan-out's writer
			defer func() {
				if !closed {
					close(done[k])
				}
			}()
			s := r.e.Steps[i]
			for _, need := range s.Needs {
				if need < from {
					continue // written before these steps: in pool
				}
				select {
				case <-done[need-from]:
				case <-ctx.Done():
				}
			}
			if ctx.Err() != nil {
				return // a step it needs failed, or the client went away
			}
			mine := own[k]
			for _, v := range s.Inputs {
				if _, ok := mine[v]; ok {
					continue
				}
				for _, need := range s.Needs {
					if need < from {
						continue
					}
					if t, ok := own[need-from][v]; ok {
						mine[v] = t
					}
				}
			}
			m, ierr := r.step(ctx, i, mine)
			if ierr == nil && fan != nil && i == r.e.FanoutWriter {
				close(done[k]) // the steps that read its other outputs need not wait for the rows
				closed = true
				rowIn, ok := r.rowsRead(ctx, from, to, done, own, given)
				if !ok {
					return // a step the rows read failed, or the client went away
				}
				ierr = fan.run(ctx, r, mine[r.e.Fanout], rowIn)
			}
			if ierr != nil {
				stop.fail(ierr)
				return
			}
			path[k] = m
		})
	}
	wg.Wait()
	if first := stop.first(); first != nil {
		return nil, first
	}
	for k, m := range path {
		if m == nil {
			return nil, &inferError{code: http.StatusServiceUnavailable, reason: reasonCancelled, msg: fmt.Sprintf("%s: %s (%s) not run: %v", r.p.Name, r.e.Steps[from+k].Place(), r.steps[from+k].Name, context.Cause(parent))}
		}
	}
	for k := range n {
		for _, v := range r.e.Steps[from+k].Outputs {
			pool[v] = own[k][v]
		}
	}
	return path, nil
}

// rowsRead is what the rows of the fan-out read besides their row, for
// runBranches running steps [from, to) once the fan-out's writer is
// through: given (what they read of pool), what the writer wrote and,
// once the steps of RowNeeds among them are through (done), what those
// wrote (own: each step's tensors); false if ctx ends first.
func (r *pipelineRun) rowsRead(ctx context.Context, from, to int, done []chan struct{}, own []map[string]tensor.Tensor, given map[string]tensor.Tensor) (map[string]tensor.Tensor, bool) {
	in := maps.Clone(given)
	take := func(w int) {
		for _, v := range r.e.RowReads {
			if t, ok := own[w-from][v]; ok {
				in[v] = t
			}
		}
	}
	take(r.e.FanoutWriter)
	for _, w := range r.e.RowNeeds {
		if w < from || w >= to {
			continue // in pool: given
		}
		select {
		case <-done[w-from]:
		case <-ctx.Done():
			return nil, false
		}
		take(w)
	}
	return in, true
}

// firstFailure keeps the first error of a pipeline request's parts that run
// at once (a fan-out's rows, branches) and cancels the others.
type firstFailure struct {
	mu     sync.Mutex
	err    *inferError
	cancel context.CancelFunc
}

// fail keeps err if it is the first and cancels the other parts.
func (f *firstFailure) fail(err *inferError) {
	f.mu.Lock()
	if f.err == nil {
		f.err = err
	}
	f.mu.Unlock()
	f.cancel()
}

// first is the first error kept, nil for none.
func (f *firstFailure) first() *inferError {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// rowInputs is what the rows of e's fan-out read of pool, tensors the
// request gave or steps before the fan-out wrote (Ensemble.RowReads):
// every row's request gets each whole.
func rowInputs(e *repository.Ensemble, pool map[string]tensor.Tensor) map[string]tensor.Tensor {
	in := make(map[string]tensor.Tensor, len(e.RowReads))
	for _, v := range e.RowReads {
		if t, ok := pool[v]; ok {
			in[v] = t
		}
	}
	return in
}
