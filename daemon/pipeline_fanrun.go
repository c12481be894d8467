package daemon

import (
	"context"
	"strings"
	"sync"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor/tensor"
)

// fanRun is a pipeline request's fan-out: run by the step that writes the
// fan-out once that step is through, beside the steps before the fan-out
// that its rows do not wait on (those whose outputs only the answer
// reads), as Triton starts each step of an ensemble once what it reads is
// written; or after the steps before it where none runs beside it.
type fanRun struct {
	ran   bool
	rows  fanoutRows
	paths *rowPaths
}

// run runs the fan-out on t, the fan-out tensor, each row also reading
// given (pipelineRun.fanRows).
func (f *fanRun) run(ctx context.Context, r *pipelineRun, t tensor.Tensor, given map[string]tensor.Tensor) *inferError {
	f.ran = true
	rows, paths, ierr := r.fanRows(ctx, t, given)
	if ierr != nil {
		return ierr
	}
	f.rows, f.paths = rows, paths
	return nil
}

// rowPaths gathers the models a fan-out's rows ran, for the request's
// accuracy once the steps before the fan-out are through too: the sum of
// the rows' products of their models' accuracies, and with a path_accuracy
// table the rows by path (few: one a mix of the steps' variants).
type rowPaths struct {
	mu      sync.Mutex
	n       int
	product float64
	byPath  map[string]*rowPath // nil without a path_accuracy table
}

// rowPath is the rows that ran one path's models.
type rowPath struct {
	models []*repository.Model
	n      int
}

// newRowPaths gathers the rows of a request of r's pipeline.
func newRowPaths(r *pipelineRun) *rowPaths {
	p := &rowPaths{}
	if len(r.p.Config.PathAccuracy) > 0 {
		p.byPath = map[string]*rowPath{}
	}
	return p
}

// add counts a row that ran path.
func (p *rowPaths) add(path []*repository.Model) {
	acc := 1.0
	for _, m := range path {
		acc *= m.Config.ModelAccuracy()
	}
	var key string
	if p.byPath != nil {
		var b strings.Builder
		for _, m := range path {
			b.WriteString(m.Name)
			b.WriteByte('/')
		}
		key = b.String()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	p.product += acc
	if p.byPath != nil {
		if rp, ok := p.byPath[key]; ok {
			rp.n++
		} else {
			p.byPath[key] = &rowPath{models: path, n: 1}
		}
	}
}

// accuracy is the request's accuracy after before, the models that ran
// the steps before the fan-out: the mean of its rows' (before's alone
// without rows), each its pipeline's path_accuracy entry where it has one,
// else the product of its models' accuracies.
func (p *rowPaths) accuracy(r *pipelineRun, before []*repository.Model) float64 {
	if p.n == 0 {
		return r.accuracy(before, nil)
	}
	if p.byPath != nil {
		sum := 0.0
		for _, rp := range p.byPath {
			sum += float64(rp.n) * r.accuracy(before, rp.models)
		}
		return sum / float64(p.n)
	}
	return r.accuracy(before, nil) * p.product / float64(p.n)
}
