package daemon

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/kserve"
	"github.com/gpulet/gpuletd/pipeline"
)

// Serving pipelines (Triton's ensembles; repository/ensemble.go).
//
// A pipeline request runs its steps one after the other, each as a request
// of the step's model through the same path as any request (dispatch:
// routed to a gpu-let of the model and batched there with the model's other
// requests), against a deadline of its own: the pipeline's SLO split over
// the steps by pipeline.DeadlineShares, every step given half its model's
// own SLO as its budget (so the steps after it keep their models' SLOs, and
// the first step takes the rest). A step whose model cannot meet its
// deadline refuses the request there and then: the pipeline request is
// dropped early, with a 503 naming the step, rather than served late. From
// the fan-out on, the steps run once per row of the fan-out tensor,
// concurrently, and the pipeline's outputs they write hold one row per
// such request, in order.

// pipelineNotServed says why a pipeline cannot run now: a step's model is
// missing or does not fit it, or is itself not served; "" when it can.
func (n *node) pipelineNotServed(p *repository.Model) string {
	steps, err := n.catalog.steps(p)
	if err != nil {
		return err.Error()
	}
	for i, s := range steps {
		if why := n.notServedReason(s.Name); why != "" {
			return fmt.Sprintf("%s (%s) is not served: %s", p.Config.Ensemble.Steps[i].Place(), s.Name, why)
		}
	}
	return ""
}

// profileShapes are the sizes of m's dynamic inputs that gpuletd load and
// infer send by default (its configuration's profile_shapes): its own, or
// for a pipeline without them those of the steps that read its inputs.
func (n *node) profileShapes(m *repository.Model) map[string][]int64 {
	if len(m.Config.ProfileShapes) > 0 || m.Config.Ensemble == nil {
		return m.Config.ProfileShapes
	}
	steps, err := n.catalog.steps(m)
	if err != nil {
		return nil
	}
	return pipelineShapes(m, steps)
}

// pipelineShapes are pipeline p's inputs' profile_shapes taken from its
// steps (steps[i] runs step i): each input's from the first step that reads
// it and has them, with a batch dimension of 1 in front when the step
// batches and p does not (its input then carries it).
func pipelineShapes(p *repository.Model, steps []*repository.Model) map[string][]int64 {
	isInput := map[string]bool{}
	for _, t := range p.Inputs {
		isInput[t.Name] = true
	}
	out := map[string][]int64{}
	for i, st := range p.Config.Ensemble.Steps {
		for _, stepInput := range slices.Sorted(maps.Keys(st.Inputs)) { // the same choice each time
			tensor := st.Inputs[stepInput]
			dims, ok := steps[i].Config.ProfileShapes[stepInput]
			if !ok || !isInput[tensor] || out[tensor] != nil {
				continue
			}
			switch pipeBatches, stepBatches := p.Config.MaxBatchSize > 0, steps[i].Config.MaxBatchSize > 0; {
			case pipeBatches == stepBatches:
				out[tensor] = dims
			case stepBatches:
				out[tensor] = append([]int64{1}, dims...)
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// stepDeadlines are the deadlines of a pipeline request's steps: its SLO
// split by shares (pipeline.DeadlineShares, as the simulator splits it).
func stepDeadlines(shares []float64, arrival, deadline time.Time) []time.Time {
	out := make([]time.Time, len(shares))
	for i := range shares {
		out[i] = arrival.Add(pipeline.TaskDeadline(0, deadline.Sub(arrival), shares, i))
	}
	return out
}

// modelShares split a pipeline's SLO before it has a plan: each step's
// budget is half its model's SLO, split along waits (nil: a chain).
func modelShares(steps []*repository.Model, slo time.Duration, waits [][]int) []float64 {
	plan := pipeline.Plan{SLOMS: float64(slo) / float64(time.Millisecond)}
	for _, s := range steps {
		plan.Tasks = append(plan.Tasks, pipeline.TaskPlan{BudgetMS: float64(s.Config.SLO.D()) / float64(time.Millisecond) / 2})
	}
	return plan.DeadlineSharesOf(waits)
}

// pipelineRun is one pipeline request in flight.
type pipelineRun struct {
	n         *node
	p         *repository.Model
	e         *repository.Ensemble
	steps     []*repository.Model
	deadlines []time.Time
	emulated  atomic.Bool // a step ran on an emulated device
	// written is the bytes of the tensors the steps wrote, which the
	// request holds until it is answered.
	written  atomic.Int64
	degraded atomic.Bool // a step ran a variant, not its own model
	ranMu    sync.Mutex
	ran      []*repository.Model // the loads the steps ran, each once
	// fanVariant is the model that ran the step writing the fan-out tensor.
	fanVariant string
	send       stepSender // nil: node.dispatchAny
	trace      *reqTrace  // the pipeline request's trace; nil: not traced
	// seq is the request's sequence, which its stateful steps run in.
	seq kserve.SequenceRef
}

// executePipeline runs a pipeline request's steps (inputs checked against
// the pipeline) and answers the outputs named (all when none); a stateful
// step runs in the request's sequence, seq.
func (n *node) executePipeline(ctx context.Context, p *repository.Model, seq kserve.SequenceRef, inputs []tensor.Tensor, names []string, arrival, deadline time.Time) (*executed, *inferError) {
	steps, err := n.catalog.steps(p)
	if err != nil {
		return nil, &inferError{code: http.StatusServiceUnavailable, reason: reasonUnservable, msg: fmt.Sprintf("%s cannot be served: %v", p.Name, err)}
	}
	shares := n.pipes.deadlineShares(p.Name, steps, p.Config.Ensemble.Waits)
	if shares == nil {
		shares = modelShares(steps, p.Config.SLO.D(), p.Config.Ensemble.Waits)
	}
	run := &pipelineRun{n: n, p: p, e: p.Config.Ensemble, steps: steps, deadlines: stepDeadlines(shares, arrival, deadline), trace: traceOf(ctx), send: n.sendStep, seq: seq}
	if run.trace != nil { // the pipeline's trace has its start and end; its steps have theirs
		ctx = context.WithValue(ctx, traceKey{}, (*reqTrace)(nil))
	}
	pool := map[string]tensor.Tensor{}
	for _, t := range inputs {
		pool[t.Name] = t
	}
	last := len(steps)
	var fan *fanRun
	if run.e.FanoutStep >= 0 {
		last, fan = run.e.FanoutStep, &fanRun{}
	}
	// The models that ran the steps before the fan-out; the fan-out runs
	// once its writer is through, beside those its rows do not wait on.
	path, ierr := run.runSteps(ctx, 0, last, pool, fan)
	if ierr != nil {
		return nil, ierr
	}
	var rows fanoutRows
	acc := 0.0
	if fan != nil {
		if !fan.ran {
			if ierr := fan.run(ctx, run, pool[run.e.Fanout], rowInputs(run.e, pool)); ierr != nil {
				return nil, ierr
			}
		}
		rows, acc = fan.rows, fan.paths.accuracy(run, path)
	} else {
		acc = run.accuracy(path, nil)
	}
	outs, ierr := run.outputs(pool, rows, names)
	if ierr != nil {
		return nil, ierr
	}
	n.pipes.served(p.Name, acc)
	c := n.counters.of(p.Name) // one run of the pipeline, as Triton counts an ensemble's
	c.inferences.Add(int64(requestRows(p, inputs)))
	c.batches.add(1)
	return &executed{outs: outs, batch: 1, emulated: run.emulated.Load(), ran: run.ran, degraded: run.degraded.Load(),
		interim: run.interim(pool, outs)}, nil
}

// interim is what the steps wrote beside outs, the pipeline's outputs:
// all they wrote but the outputs answered from pool as a step wrote them
// (a step writes every output; those joined from the fan-out's rows are
// copies).
func (r *pipelineRun) interim(pool map[string]tensor.Tensor, outs []tensor.Tensor) int64 {
	n := r.written.Load()
	for _, t := range outs {
		if _, ok := pool[t.Name]; ok {
			n -= int64(len(t.Data))
		}
	}
	return n
}

// accuracy is the end-to-end accuracy of a request whose steps ran the
// models of path and then those of more (all steps, or those up to the
// fan-out and then a row's): the pipeline's path_accuracy entry for it,
// else the product of the models' accuracies.
func (r *pipelineRun) accuracy(path, more []*repository.Model) float64 {
	if len(r.p.Config.PathAccuracy) > 0 {
		names := make([]string, 0, len(path)+len(more))
		for _, m := range slices.Concat(path, more) {
			names = append(names, m.Name)
		}
		if a, ok := r.p.Config.PathAccuracy[pipeline.PathKey(names...)]; ok {
			return a
		}
	}
	acc := 1.0
	for _, ms := range [][]*repository.Model{path, more} {
		for _, m := range ms {
			acc *= m.Config.ModelAccuracy()
		}
	}
	return acc
}

// step runs step i on the tensors of pool, adds what it writes and returns
// the model that ran it. The request is routed over the gpu-lets of every
// model the pipeline's plan gives the step at once (router.routeAny), so
// each variant takes its planned share as in the simulator, and rerouted
// once if refused (dispatch); a request still refused is dropped early,
// and its pipeline request with it.
func (r *pipelineRun) step(ctx context.Context, i int, pool map[string]tensor.Tensor) (*repository.Model, *inferError) {
	s := r.e.Steps[i]
	var ins []tensor.Tensor
	// Every variant takes the same inputs (FitsStep); a stateful step's
	// control and state inputs are filled in its sequence (dispatch).
	for _, spec := range repository.RequestTensors(r.steps[i].Inputs) {
		t := pool[s.Inputs[spec.Name]]
		t.Name = spec.Name
		ins = append(ins, t)
	}
	outNames := make([]string, 0, len(s.Outputs))
	for k := range s.Outputs {
		outNames = append(outNames, k)
	}
	slices.Sort(outNames)
	res, m, ierr := r.dispatch(ctx, i, ins, outNames)
	if ierr != nil {
		at := r.steps[i].Name
		if m != nil {
			at = m.Name
		}
		return nil, &inferError{code: ierr.code, reason: reasonDroppedEarly,
			msg: fmt.Sprintf("%s: dropped at %s (%s): %s", r.p.Name, s.Place(), at, ierr.msg)}
	}
	if i == r.e.FanoutWriter {
		r.fanVariant = m.Name
	}
	if res.emulated {
		r.emulated.Store(true)
	}
	r.noteRan(i, m)
	for _, t := range res.outs {
		if to, ok := s.Outputs[t.Name]; ok {
			t.Name = to
			pool[to] = t
			r.written.Add(int64(len(t.Data)))
		}
	}
	return m, nil
}

// noteRan books that step i ran model m (rows of a fan-out run
// concurrently).
func (r *pipelineRun) noteRan(i int, m *repository.Model) {
	if m.Name != r.steps[i].Name {
		r.degraded.Store(true)
	}
	r.ranMu.Lock()
	defer r.ranMu.Unlock()
	if !slices.Contains(r.ran, m) {
		r.ran = append(r.ran, m)
	}
}

// planned lists the models that run step i: the plan's variants for it that
// are served and fit the step, else the step's own model.
func (r *pipelineRun) planned(i int) []*repository.Model {
	var out []*repository.Model
	for _, name := range r.n.pipes.variants(r.p.Name, i, r.steps[i].Name) {
		if name == r.steps[i].Name {
			out = append(out, r.steps[i])
		} else if v, ok := r.n.catalog.get(name); ok && v.FitsStep(r.e.Steps[i], r.steps[i]) {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		return []*repository.Model{r.steps[i]}
	}
	return out
}

// stepSender sends one step request to a gpu-let of one of models, not
// excepted (node.dispatchAny, a test's fake).
type stepSender func(ctx context.Context, models []*repository.Model, not *gpuletRun, ins []tensor.Tensor, outNames []string, deadline time.Time) (*executed, *repository.Model, *gpuletRun, *inferError)

// dispatch sends step i's request over the gpu-lets of the models the plan
// gives the step and returns its answer and the model that ran it. A
// request refused for its deadline or load is rerouted once over the
// gpu-lets of all the step's variants but the one that refused it, to one
// where it can still finish (Loki's opportunistic rerouting). The request
// counts once, as the simulator counts it: in the rate and step rate
// (planPipelines) of the model first chosen (the first planned when none
// could be), and in the statistics, window and metrics of the model whose
// answer or refusal stands (node.finishStep), against the step's deadline;
// the pipeline's own request is booked under the pipeline's name at the
// door. A traced pipeline request's step request is traced under that
// model too, naming the pipeline's trace. A step whose own model enables
// the response cache is answered from it when it holds the answer (routed
// nowhere, counted in no rate), and keeps that model's answers, as
// Triton's composing models keep theirs.
func (r *pipelineRun) dispatch(ctx context.Context, i int, ins []tensor.Tensor, outNames []string) (*executed, *repository.Model, *inferError) {
	own := r.steps[i]
	if own.Config.Sequence == nil {
		return r.dispatchStep(ctx, i, ins, outNames)
	}
	// A stateful step (no variant runs it) runs in the request's sequence.
	var ran *repository.Model
	res, ierr := r.n.executeInSequence(ctx, own, r.seq, ins, outNames, r.deadlines[i], func(all []tensor.Tensor, names []string) (*executed, *inferError) {
		res, m, ierr := r.dispatchStep(ctx, i, all, names)
		ran = m
		return res, ierr
	})
	return res, ran, ierr
}

// dispatchStep is dispatch with the step's inputs as its model takes them.
func (r *pipelineRun) dispatchStep(ctx context.Context, i int, ins []tensor.Tensor, outNames []string) (*executed, *repository.Model, *inferError) {
	send := r.send
	if send == nil {
		send = r.n.dispatchAny
	}
	deadline := r.deadlines[i]
	own := r.steps[i]
	sent := time.Now()
	child := r.n.traces.child(r.trace, sent)
	child.tensors(activityQueueInput, ins)
	var miss *cacheMiss
	if own.Config.ResponseCache && r.n.cache.on() {
		var hit *executed
		if hit, miss = r.n.lookUp(own, ins, outNames); hit != nil {
			r.n.finishStep(own, sent, deadline, 0, nil)
			r.traceStep(child, own, hit, nil)
			return hit, own, nil
		}
	}
	planned := r.planned(i)
	ctx = withTrace(ctx, child)
	res, m, g, ierr := send(ctx, planned, nil, ins, outNames, deadline)
	offered := cmp.Or(m, planned[0]) // routed nowhere: still load offered to the step
	r.n.rates.hit(offered.Name, sent)
	r.n.stepRates.hit(offered.Name, sent)
	if ierr != nil && reroutable(ierr) && time.Now().Before(deadline) {
		if v := r.n.catalog.variantsOf(r.e.Steps[i], r.steps[i]); g != nil || len(v) > 1 {
			again, used, _, aerr := send(ctx, v, g, ins, outNames, deadline)
			if used != nil {
				r.n.pipes.rerouted(r.p.Name)
				res, m, ierr = again, used, aerr
			}
		}
	}
	var batch int32
	if res != nil {
		batch = res.batch
	}
	booked := cmp.Or(m, offered)
	r.n.finishStep(booked, sent, deadline, batch, ierr)
	r.traceStep(child, booked, res, ierr)
	if miss != nil {
		var keep *executed
		if ierr == nil && m == own {
			keep = res
		}
		miss.done(keep)
	}
	return res, m, ierr
}

// traceStep ends a step request's trace (nil: not traced) under the model
// booked with it, with its answer's tensors at level TENSORS.
func (r *pipelineRun) traceStep(child *reqTrace, booked *repository.Model, res *executed, ierr *inferError) {
	if child == nil {
		return
	}
	if ierr == nil {
		child.tensors(activityBackendOutput, res.outs)
	}
	child.entry.Model, child.entry.Version = booked.Family, booked.Version
	r.n.traces.done(child, time.Now(), ierr.message())
}

// reroutable reports whether a step request was refused for its deadline or
// the model's load, which another gpu-let of the step may still meet, or
// answered by an executor that did not run it.
func reroutable(e *inferError) bool {
	if e.notRun {
		return true
	}
	switch e.reason {
	case reasonDeadline, reasonDropped, reasonQueueFull, reasonUnroutable:
		return true
	}
	return false
}

// fanoutRows are a fan-out's rows' tensors that the pipeline's outputs
// join, by name: row j's at [j] (a zero Tensor where no step wrote it).
// Each row keeps only those, not every tensor its steps read and wrote.
type fanoutRows map[string][]tensor.Tensor

// fanRows runs the steps from the fan-out on once per row of the fan-out
// tensor t, concurrently, each row also reading the tensors of given
// whole (Ensemble.RowReads), and returns the rows' tensors that the
// pipeline's outputs written from the fan-out on join (fanoutRows) and the
// models each row ran (rowPaths). At most fanoutInFlight rows are in
// flight at once, each worker taking the next row when its last is
// through, so that a fan-out of many rows (a detector that finds
// thousands of objects) costs the daemon a bounded number of requests in
// flight rather than one for every row at once, while the step's gpu-lets
// still find full batches queued.
func (r *pipelineRun) fanRows(ctx context.Context, t tensor.Tensor, given map[string]tensor.Tensor) (fanoutRows, *rowPaths, *inferError) {
	rows, err := splitRows(t, r.p.Config.MaxBatchSize > 0, r.steps[r.e.FanoutStep].Config.MaxBatchSize > 0)
	if err != nil {
		return nil, nil, &inferError{code: http.StatusInternalServerError, reason: reasonInternal, msg: fmt.Sprintf("%s: fan-out %q: %v", r.p.Name, r.e.Fanout, err)}
	}
	r.n.pipes.rows(r.p.Name, r.fanVariant, len(rows))
	out := fanoutRows{}
	for _, spec := range r.p.Outputs {
		if r.writtenFromFanout(spec.Name) {
			out[spec.Name] = make([]tensor.Tensor, len(rows))
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		stop  = firstFailure{cancel: cancel} // the first row to fail; the others are cancelled
		next  atomic.Int64                   // the next row to run
		paths = newRowPaths(r)
	)
	run := func(j int) bool {
		row := map[string]tensor.Tensor{r.e.Fanout: rows[j]}
		for v, t := range given {
			row[v] = t
		}
		path, ierr := r.runSteps(ctx, r.e.FanoutStep, len(r.steps), row, nil)
		if ierr != nil {
			stop.fail(ierr)
			return false
		}
		paths.add(path)
		for name, col := range out { // distinct rows: no two workers write one place
			col[j] = row[name]
		}
		return true
	}
	for range r.fanoutInFlight(len(rows)) {
		wg.Go(func() {
			for ctx.Err() == nil {
				j := int(next.Add(1) - 1)
				if j >= len(rows) || !run(j) {
					return
				}
			}
		})
	}
	wg.Wait()
	if first := stop.first(); first != nil {
		return nil, nil, first
	}
	if ctx.Err() != nil && int(next.Load()) < len(rows) {
		// The client went away before every row ran.
		return nil, nil, &inferError{code: http.StatusServiceUnavailable, reason: reasonCancelled, msg: fmt.Sprintf("%s: %v", r.p.Name, context.Cause(ctx))}
	}
	return out, paths, nil
}

// writtenFromFanout reports whether a step from the fan-out on writes the
// pipeline's tensor name: a tensor joined from the rows.
func (r *pipelineRun) writtenFromFanout(name string) bool {
	for _, s := range r.e.Steps[r.e.FanoutStep:] {
		for _, v := range s.Outputs {
			if v == name {
				return true
			}
		}
	}
	return false
}

// fanoutMinInFlight is the fewest rows of a fan-out in flight at once (all
// of them when there are fewer).
const fanoutMinInFlight = 64

// fanoutInFlight is how many of a fan-out's n rows run at once: twice what
// the gpu-lets of the fan-out step's models take in one batch each, so that
// each finds a batch queued behind the one it runs, and at least
// fanoutMinInFlight.
func (r *pipelineRun) fanoutInFlight(n int) int {
	var names []string
	for _, m := range r.planned(r.e.FanoutStep) {
		names = append(names, m.Name)
	}
	return min(n, max(2*r.n.router.batchRows(names), fanoutMinInFlight))
}

// splitRows cuts the fan-out tensor into one tensor per row: along the
// dimension after the batch (of 1) when the pipeline batches, along the
// first otherwise; each row has a batch dimension of 1 when the model that
// reads it batches.
func splitRows(t tensor.Tensor, pipelineBatches, modelBatches bool) ([]tensor.Tensor, error) {
	shape := t.Shape
	if pipelineBatches {
		if len(shape) < 2 || shape[0] != 1 {
			return nil, fmt.Errorf("shape %v: want [1, rows, …]", shape)
		}
		shape = shape[1:]
	}
	if len(shape) == 0 {
		return nil, fmt.Errorf("a scalar has no rows")
	}
	flat := tensor.Tensor{Name: t.Name, DataType: t.DataType, Shape: slices.Clone(shape), Data: t.Data}
	n := int(shape[0])
	ones := make([]int64, n)
	for i := range ones {
		ones[i] = 1
	}
	rows, err := tensor.Split(flat, ones)
	if err != nil {
		return nil, err
	}
	if !modelBatches {
		for i := range rows {
			rows[i].Shape = rows[i].Shape[1:]
		}
	}
	return rows, nil
}

// outputs gathers the pipeline's outputs: from pool when written before the
// fan-out, else one row per fan-out request, joined in order (batch 1 in
// front when the pipeline batches).
func (r *pipelineRun) outputs(pool map[string]tensor.Tensor, rows fanoutRows, names []string) ([]tensor.Tensor, *inferError) {
	var out []tensor.Tensor
	for _, spec := range r.p.Outputs {
		if len(names) > 0 && !slices.Contains(names, spec.Name) {
			continue
		}
		if t, ok := pool[spec.Name]; ok {
			out = append(out, t)
			continue
		}
		t, err := r.joinRows(spec, rows)
		if err != nil {
			return nil, &inferError{code: http.StatusInternalServerError, reason: reasonInternal, msg: fmt.Sprintf("%s: output %q: %v", r.p.Name, spec.Name, err)}
		}
		out = append(out, t)
	}
	return out, nil
}

// joinRows joins the rows' tensors of one output of the pipeline.
func (r *pipelineRun) joinRows(spec repository.TensorSpec, rows fanoutRows) (tensor.Tensor, error) {
	var parts []tensor.Tensor
	for _, t := range rows[spec.Name] {
		if t.Name == "" {
			return tensor.Tensor{}, fmt.Errorf("no step wrote it")
		}
		if r.steps[len(r.steps)-1].Config.MaxBatchSize == 0 { // a row without its batch dimension
			t.Shape = append([]int64{1}, t.Shape...)
		}
		parts = append(parts, t)
	}
	var t tensor.Tensor
	var err error
	if len(parts) == 0 {
		// No rows: an empty tensor of the declared per-row dims.
		dims := spec.Dims
		if len(dims) > 0 {
			dims = dims[1:]
		}
		shape := append([]int64{0}, dims...)
		for i, d := range shape {
			shape[i] = max(d, 0)
		}
		t, err = tensor.New(spec.Name, spec.DataType, shape, nil)
	} else {
		t, err = tensor.Concat(spec.Name, parts)
	}
	if err != nil {
		return tensor.Tensor{}, err
	}
	if r.p.Config.MaxBatchSize > 0 {
		t.Shape = append([]int64{1}, t.Shape...)
	}
	return t, nil
}

// statusPipeline is one pipeline in the admin status.
type statusPipeline struct {
	Name  string   `json:"name"`
	SLOMS float64  `json:"slo_ms"`
	Steps []string `json:"steps"`
	// Places are the steps' places as written ("step[2]", or
	// "step[0].step[1]" within a nested pipeline), in the order of Steps.
	Places []string `json:"places"`
	// Beside marks, by step, those that run at once with the step before
	// them (a branch); absent for a chain.
	Beside []bool `json:"beside,omitempty"`
	// Fanout is the tensor whose rows run the later steps once each;
	// FanoutRows the mean number of rows it held in the pipeline's recent
	// requests (0 before one).
	Fanout     string  `json:"fanout,omitempty"`
	FanoutRows float64 `json:"fanout_rows,omitempty"`
	Ready      bool    `json:"ready"`
	Reason     string  `json:"reason,omitempty"`
	// Warnings say what keeps a served pipeline from serving its requests
	// (a smallest request above limits.max_request_body).
	Warnings []string `json:"warnings,omitempty"`
	// ConfigNotes say which configured fields took no effect and why, and
	// which steps run a pipeline of their own.
	ConfigNotes []string `json:"config_notes,omitempty"`
	// Rate is the pipeline's requests per second over the last second;
	// Window its recent end-to-end latency and SLO attainment.
	Rate   float64     `json:"rate"`
	Window windowStats `json:"recent"`
	// Scaling is the pipeline's accuracy scaling: its plan, variant mix and
	// the accuracy it serves at.
	Scaling pipelineScaling `json:"scaling"`
	// Cache is its use of the response cache; nil when it does not enable it.
	Cache *statusCache `json:"response_cache,omitempty"`
}

// pipelineStatus lists the served pipelines for the admin status.
func (n *node) pipelineStatus() []statusPipeline {
	out := []statusPipeline{}
	now := n.rates.current()
	for _, p := range n.catalog.allPipelines() {
		sp := statusPipeline{Name: p.Name, SLOMS: ms(p.Config.SLO.D()), Fanout: p.Config.Ensemble.Fanout, FanoutRows: n.pipes.fanoutRows(p.Name),
			Ready: n.modelReady(p.Name), Rate: now[p.Name], Window: n.windows.of(p.Name).stats(),
			Cache: n.cacheStatus(p), ConfigNotes: p.Notes}
		steps, err := n.catalog.steps(p) // nil where it cannot run
		sp.Scaling = n.pipes.snapshotOf(p.Name, steps)
		sp.Warnings = n.modelWarnings(p, sp.Window)
		if len(p.Config.PathAccuracy) > 0 && err == nil {
			sp.Warnings = append(sp.Warnings, p.PathsNotRun(steps, n.catalog.all())...)
		}
		branches := p.Config.Ensemble.Branches()
		for _, st := range p.Config.Ensemble.Steps {
			sp.Steps = append(sp.Steps, st.StepKey())
			sp.Places = append(sp.Places, st.Place())
			if branches {
				sp.Beside = append(sp.Beside, st.Beside)
			}
		}
		if !sp.Ready {
			sp.Reason = n.notReadyReason(p.Name)
		}
		out = append(out, sp)
	}
	return out
}
