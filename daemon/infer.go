package daemon

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor"
	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/internal/monoclock"
	"github.com/gpulet/gpuletd/kserve"
)

// retryDelay is how long a refused client is told to wait when a retry may
// cure its refusal (inferError.retryable): REST's Retry-After, gRPC's
// RetryInfo.
const retryDelay = time.Second

// retryAfter is retryDelay as the Retry-After header, in seconds.
var retryAfter = strconv.Itoa(int(retryDelay / time.Second))

// inferError is an HTTP answer to a failed inference with the reason it is
// counted under.
type inferError struct {
	code   int
	reason string
	msg    string
	// ownLimit: the request's timeout (its own or its queue policy's) set
	// its deadline before its model's SLO, or its priority level's queue
	// policy bounds it: a limit asked for, not the plan's room (missCounts).
	ownLimit bool
	// notRun: the executor answered without running the request
	// (draining, stopping, its device failed): another gpu-let may take
	// it (sendAgainIfNotRun).
	notRun bool
	// silent: no answer came by the deadline and its grace, and the
	// executor sent nothing at all since the request went to it: it may
	// have stalled (stall.go).
	silent bool
	// heard is the executor's frames heard before the request went to it
	// (set with silent): a frame since says it runs.
	heard uint64
	// unanswered: no answer came by the deadline and its grace, though an
	// executor answers every request by its deadline: where its run is
	// still going (gpuletRun.runs), one that may never end
	// (crash_suspects.go).
	unanswered bool
	// sent is the request's id on its executor's stream when it got no
	// answer there (the executor failed, or the deadline passed first),
	// or its run found the device failed for good: whether the executor
	// ran it when it ended (crash_suspects.go).
	sent uint64
}

// message is the error's message; "" for none.
func (e *inferError) message() string {
	if e == nil {
		return ""
	}
	return e.msg
}

// clientFault tells whether the request itself was at fault (it is then no
// SLO violation).
func (e *inferError) clientFault() bool {
	switch e.code {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusRequestTimeout, http.StatusUnsupportedMediaType:
		return true
	}
	return false
}

func (n *node) handleInfer(w http.ResponseWriter, r *http.Request) {
	arrival := time.Now()
	m, ok := n.servedModel(w, r)
	if !ok {
		return
	}
	r, tr, body, release, ierr := n.restArrival(r, m, arrival)
	defer release()
	var resp *inferAnswer
	if ierr == nil {
		resp, ierr = n.inferREST(r, body, m, arrival)
	}
	var batch int32
	var whole []byte
	if resp != nil {
		defer resp.release()
		batch = resp.batch
		whole = formatAnswer(resp.body)
	}
	if !n.restOutcome(w, m, arrival, batch, tr, ierr) {
		return
	}
	if !writeAnswer(w, r.Header.Get("Accept-Encoding"), resp.body, whole, n.conf().Limits.BodyTimeout.D()) {
		n.metrics.abandoned.WithLabelValues(m.Name).Inc()
	}
}

// restArrival takes a REST inference request of m at the door (REST's
// /infer and the generate extension): it samples its trace (the request
// returned carries it), counts it (begin) and reads its body, which release
// gives back.
func (n *node) restArrival(r *http.Request, m *repository.Model, arrival time.Time) (*http.Request, *reqTrace, []byte, func(), *inferError) {
	header := r.Header
	tr := n.traces.sample(m.Name, m.Family, m.Version, arrival, func() traceContext { return traceContextOfHeader(header) })
	if tr != nil {
		r = r.WithContext(withTrace(r.Context(), tr))
	}
	var body []byte
	release := func() {}
	ierr := n.begin(m, arrival)
	if ierr == nil {
		body, release, ierr = n.readBody(r, m, arrival)
	}
	return r, tr, body, release, ierr
}

// restOutcome books a REST inference request's outcome (finish, its
// trace) and answers it when it failed; it says whether the answer is
// still to be written.
func (n *node) restOutcome(w http.ResponseWriter, m *repository.Model, arrival time.Time, batch int32, tr *reqTrace, ierr *inferError) bool {
	n.finish(m, arrival, batch, ierr)
	n.traces.done(tr, time.Now(), ierr.message())
	if ierr != nil {
		writeInferError(w, ierr)
		return false
	}
	return true
}

// begin counts a request of m that arrived at the door at arrival and
// refuses it when the model asks beyond its share of an overloaded node,
// whichever protocol brought it.
func (n *node) begin(m *repository.Model, arrival time.Time) *inferError {
	n.metrics.countRequest(m.Name)
	n.rates.hit(m.Name, arrival)
	return n.overShare(m.Name)
}

// finish books a request's outcome: the statistics counters, the SLO
// windows and the metrics. A request that was itself at fault is no SLO
// violation.
func (n *node) finish(m *repository.Model, arrival time.Time, batch int32, ierr *inferError) {
	elapsed := time.Since(arrival)
	n.record(m, elapsed, elapsed > m.Config.SLO.D(), batch, ierr)
}

// finishStep books a pipeline step's request of m as finish books one from
// the door (a step is a request of its model like any other, as Triton
// counts an ensemble's in its composing models' statistics), late when
// answered after the step's own deadline rather than the model's SLO.
func (n *node) finishStep(m *repository.Model, sent, deadline time.Time, batch int32, ierr *inferError) {
	now := time.Now()
	n.metrics.countRequest(m.Name)
	n.record(m, now.Sub(sent), now.After(deadline), batch, ierr)
}

// record books one outcome of m that took elapsed.
func (n *node) record(m *repository.Model, elapsed time.Duration, late bool, batch int32, ierr *inferError) {
	c := n.counters.of(m.Name)
	c.last.Store(time.Now().UnixMilli())
	if ierr != nil {
		if !ierr.clientFault() {
			n.windows.of(m.Name).add(-1, 0, false)
			n.metrics.violations.WithLabelValues(m.Name).Inc()
			if counted, missed := ierr.missCounts(); counted {
				c.miss.add(missed)
			}
		}
		c.fail.add(elapsed)
		c.failedAs[tritonFailureReason(ierr.reason)].Add(1)
		n.metrics.failures.WithLabelValues(m.Name, ierr.reason).Inc()
		return
	}
	c.success.add(elapsed)
	n.observeSummary(m.Name, sumRequest, elapsed)
	c.miss.add(late)
	n.windows.of(m.Name).add(elapsed, batch, late)
	n.metrics.e2e.WithLabelValues(m.Name).Observe(elapsed.Seconds())
	if late {
		n.metrics.violations.WithLabelValues(m.Name).Inc()
	}
}

type inferAnswer struct {
	body  *kserve.Response
	batch int32
	// held and settled are what the request holds beside its body: its
	// estimate, and what it took past it once run.
	held, settled func()
}

// release gives back what the request holds beside its body, once the
// answer is written.
func (a *inferAnswer) release() {
	a.settled()
	a.held()
}

// inferREST decodes a REST body, runs it and encodes the answer.
func (n *node) inferREST(r *http.Request, body []byte, m *repository.Model, arrival time.Time) (*inferAnswer, *inferError) {
	var err error
	jsonLen := int64(-1)
	if h := r.Header.Get(kserve.HeaderContentLength); h != "" {
		if jsonLen, err = strconv.ParseInt(h, 10, 64); err != nil || jsonLen < 0 {
			return nil, badRequest("%s %q is not a byte count", kserve.HeaderContentLength, h)
		}
	}
	// Room for what it will hold beside its body before it is decoded.
	form := formJSON
	if jsonLen >= 0 {
		form = formBinary
	}
	est := n.besideEstimate(m, form, int64(len(body)))
	held, ierr := n.holdBeside(r.Context(), m, est, arrival)
	if ierr != nil {
		return nil, ierr
	}
	req, err := kserve.DecodeRequestWith(body, jsonLen, n.sharedMem())
	if err != nil {
		held()
		return nil, badRequest("%v", err)
	}
	res, ierr := n.execute(r.Context(), m, req, arrival)
	if ierr != nil {
		held()
		return nil, ierr
	}
	a := &inferAnswer{batch: res.batch, held: held, settled: n.settleBeside(m, form, int64(len(body)), est, req, res)}
	kout, ierr := n.placeOutputs(m, req, res.outs)
	if ierr != nil {
		a.release()
		return nil, ierr
	}
	b, err := kserve.EncodeResponse(res.head(m, req), kout)
	if errors.Is(err, kserve.ErrNotJSON) {
		a.release()
		return nil, &inferError{code: http.StatusBadRequest, reason: reasonOutputNotJSON, msg: fmt.Sprintf("%s: %v", m.Name, err)}
	}
	if err != nil {
		a.release()
		return nil, &inferError{code: http.StatusInternalServerError, reason: reasonInternal, msg: fmt.Sprintf("%s: %v", m.Name, err)}
	}
	a.body = b
	return a, nil
}

// placeOutputs says how each output travels, as the request asked (REST:
// JSON or binary data; gRPC: binary), answers those asked for as classes
// with their top classes, and writes those asked for in shared memory into
// their regions.
func (n *node) placeOutputs(m *repository.Model, req *kserve.Request, outs []tensor.Tensor) ([]kserve.Output, *inferError) {
	kout := make([]kserve.Output, len(outs))
	for i, t := range outs {
		// A few outputs at most: a scan allocates nothing.
		o := kserve.OutputRequest{Binary: req.BinaryOutputs}
		if k := slices.IndexFunc(req.Outputs, func(a kserve.OutputRequest) bool { return a.Name == t.Name }); k >= 0 {
			o = req.Outputs[k]
		}
		if o.Classes > 0 {
			c, err := kserve.Classify(t, o.Classes, m.Config.MaxBatchSize > 0, m.Labels[t.Name])
			if err != nil {
				return nil, badRequest("%s: output %q: %v", m.Name, t.Name, err)
			}
			t = c
		}
		kout[i] = kserve.Output{Tensor: t, Binary: o.Binary, Shm: o.Shm}
		if o.Shm == nil {
			continue
		}
		if err := n.shm.write(o.Shm.Region, o.Shm.Offset, o.Shm.Size, t.Data); err != nil {
			return nil, badRequest("%s: output %q: %v", m.Name, t.Name, err)
		}
	}
	return kout, nil
}

// sharedMem is the registry of shared-memory regions as the decoders take
// it: nil when the node keeps none.
func (n *node) sharedMem() kserve.SharedMemory {
	if n.shm == nil {
		return nil
	}
	return n.shm
}

func badRequest(format string, args ...any) *inferError {
	return &inferError{code: http.StatusBadRequest, reason: reasonBadRequest, msg: fmt.Sprintf(format, args...)}
}

// executed is a request's answer from its executor.
type executed struct {
	outs     []tensor.Tensor
	batch    int32 // 0: no batch ran it (a cached answer)
	emulated bool
	cached   bool // answered from the response cache
	// ran are the model loads a pipeline's steps ran; degraded says that a
	// step ran a cheaper variant (accuracy scaling) rather than its model.
	ran      []*repository.Model
	degraded bool
	// interim is the bytes a pipeline's steps wrote that its outputs do
	// not hold, which the request holds until it is answered.
	interim int64
}

// head is the answer's envelope.
func (e *executed) head(m *repository.Model, req *kserve.Request) kserve.InferResponseJSON {
	h := kserve.InferResponseJSON{ModelName: m.Family, ModelVersion: strconv.Itoa(m.Version), ID: req.ID}
	if e.emulated {
		h.Parameters = map[string]any{"emulated": true}
	}
	return h
}

// execute checks a decoded request against its model, routes it and runs it
// on an executor — or, for a pipeline, runs its steps (executePipeline): the
// path every protocol shares after decoding.
func (n *node) execute(ctx context.Context, m *repository.Model, req *kserve.Request, arrival time.Time) (*executed, *inferError) {
	if err := checkInputs(m, req); err != nil {
		return nil, badRequest("%s: %v", m.Name, err)
	}
	tr := traceOf(ctx)
	if tr != nil {
		tr.entry.RequestID = req.ID
		tr.tensors(activityQueueInput, req.Inputs)
	}
	inputs, err := reshapeInputs(m, req.Inputs)
	if err != nil {
		return nil, badRequest("%s: %v", m.Name, err)
	}
	level := priorityLevel(m.Config, req.Priority)
	policy := m.Config.QueuePolicyFor(level)
	timeout := policy.RequestTimeout(req.Timeout)
	deadline := arrival.Add(m.Config.SLO.D())
	if timeout > 0 {
		deadline = minTime(deadline, arrival.Add(timeout))
	}
	if policy.MaxQueue > 0 {
		release, ok := n.holds.hold(m.Name, level, policy.MaxQueue)
		if !ok {
			return nil, levelFull(m.Name, level, policy.MaxQueue)
		}
		defer release()
	}
	names := make([]string, len(req.Outputs))
	for i, o := range req.Outputs {
		names[i] = o.Name
	}
	run := func() (*executed, *inferError) { return n.dispatch(ctx, m, inputs, names, deadline) }
	if m.Config.Sequence != nil {
		run = func() (*executed, *inferError) {
			return n.executeInSequence(ctx, m, req.Sequence, inputs, names, deadline, func(all []tensor.Tensor, names []string) (*executed, *inferError) {
				return n.dispatch(ctx, m, all, names, deadline)
			})
		}
	}
	if m.Config.Ensemble != nil {
		run = func() (*executed, *inferError) {
			return n.executePipeline(ctx, m, req.Sequence, inputs, names, arrival, deadline)
		}
	}
	if m.Config.ResponseCache && n.cache.on() {
		cached := run
		run = func() (*executed, *inferError) { return n.executeCached(m, inputs, names, cached) }
	}
	ctx = withPriority(ctx, req.Priority)
	res, ierr := run()
	if ierr == nil {
		tr.tensors(activityBackendOutput, res.outs)
	} else if timeout > 0 && timeout < m.Config.SLO.D() {
		ierr.ownLimit = true
		if ierr.reason == reasonDeadline {
			ierr.msg += timeoutWords(timeout, req.Timeout, m.Config.SLO.D(), m.Config.QueuePolicyWhere(level))
		}
	}
	return res, ierr
}

// dispatch routes checked inputs of model m to a gpu-let and runs them there
// by deadline, asking for the outputs named (all when none).
func (n *node) dispatch(ctx context.Context, m *repository.Model, inputs []tensor.Tensor, names []string, deadline time.Time) (*executed, *inferError) {
	return sendAgainIfNotRun(ctx, n.dispatchAny, m, inputs, names, deadline)
}

// sendAgainIfNotRun sends a request of m (send: node.dispatchAny, a test's
// fake) and, when the gpu-let that took it answered without running it (an
// executor draining for a plan change, stopping, or whose device failed
// with the request queued), once more over m's other gpu-lets, while its
// deadline allows; the first answer stands when none takes it.
func sendAgainIfNotRun(ctx context.Context, send stepSender, m *repository.Model, inputs []tensor.Tensor, names []string, deadline time.Time) (*executed, *inferError) {
	models := []*repository.Model{m}
	res, _, g, ierr := send(ctx, models, nil, inputs, names, deadline)
	if ierr == nil || !ierr.notRun || g == nil || !time.Now().Before(deadline) {
		return res, ierr
	}
	if again, used, _, aerr := send(ctx, models, g, inputs, names, deadline); used != nil {
		return again, aerr
	}
	return res, ierr
}

// dispatchAny is dispatch for a request that any of models may serve (a
// pipeline step and its variants): one route over all their gpu-lets
// (router.routeAny) picks the model and the gpu-let, not excepted. It
// returns the answer, the model and the gpu-let that ran it.
func (n *node) dispatchAny(ctx context.Context, models []*repository.Model, not *gpuletRun, inputs []tensor.Tensor, names []string, deadline time.Time) (*executed, *repository.Model, *gpuletRun, *inferError) {
	byName := make(map[string]*repository.Model, len(models))
	routeNames := make([]string, len(models))
	for i, m := range models {
		byName[m.Name], routeNames[i] = m, m.Name
	}
	at := n.router.at(deadline)
	cfg := models[0].Config // a step's variants: the model's own
	by, level := at, 0
	if cfg.PriorityLevels > 1 { // the request's context is read only for a model with levels
		level = priorityLevel(cfg, priorityOf(ctx))
		now := n.router.now()
		by = admitBy(now, at, n.priorities.reserve(models[0].Name, cfg.PriorityLevels, level, now, n.conf().Scheduler.PriorityReserve))
	}
	name, g, err := n.admitAny(routeNames, at, by, not)
	if errors.Is(err, errShed) {
		return nil, nil, nil, shedAnswer(strings.Join(routeNames, " or "), level, cfg.PriorityLevels)
	}
	if err != nil {
		return nil, nil, nil, n.notRouted(models, strings.Join(routeNames, " or "), err)
	}
	if ierr := tooManyRows(byName[name], g, inputs); ierr != nil {
		// A request larger than this gpu-let runs within the SLO: a
		// sibling of another size may take it.
		g.requests.release()
		if not != nil {
			return nil, nil, nil, ierr
		}
		if name, g, err = n.admitAny(routeNames, at, by, g); err != nil {
			return nil, nil, nil, ierr
		}
		if tooManyRows(byName[name], g, inputs) != nil {
			g.requests.release()
			return nil, nil, nil, ierr
		}
	}
	defer g.requests.release()
	m := byName[name]
	res, ierr := n.runOn(ctx, g, m, inputs, names, deadline)
	return res, m, g, ierr
}

// tooManyRows refuses a request of m with more rows than gpu-let g runs
// (its maxRows): the largest batch measured at g's size, which its quick
// profile stops at once a batch takes half the SLO. The request is within
// the model's max_batch_size (checkInputs), so it is no client error: on
// this gpu-let its deadline cannot be met.
func tooManyRows(m *repository.Model, g *gpuletRun, inputs []tensor.Tensor) *inferError {
	rows, most := int(requestRows(m, inputs)), g.maxRows(m.Name)
	if most == 0 || rows <= most {
		return nil
	}
	return &inferError{code: http.StatusServiceUnavailable, reason: reasonDeadline, msg: fmt.Sprintf(
		"%s: the deadline cannot be met: a request of %d rows, and its gpu-let %s runs at most %d within the SLO (the largest batch measured at %d%% of %s)",
		m.Name, rows, g.id, most, g.size, g.device.ID)}
}

// notRouted is the answer to a request for models (what names them) that
// no gpu-let took (err): for the one model asked for, why it cannot be
// served, or that it is on its way (a retry may find it served); else, and
// for several (a step's variants), that no gpu-let serves them now.
func (n *node) notRouted(models []*repository.Model, what string, err error) *inferError {
	if len(models) == 1 {
		if why := n.notServedReason(models[0].Name); why != "" {
			return &inferError{code: http.StatusServiceUnavailable, reason: reasonUnservable, msg: fmt.Sprintf("%s cannot be served: %s", what, why)}
		}
		if where := n.liveNotes.reason(models[0].Name); where != "" {
			return &inferError{code: http.StatusServiceUnavailable, reason: reasonUnroutable, msg: fmt.Sprintf("%s is not served yet: %s", what, where)}
		}
		if why, restarting := n.comingBack(models[0].Name, n.router.models()); why != "" {
			reason := reasonUnroutable
			if restarting {
				reason = reasonExecutorDown
			}
			return &inferError{code: http.StatusServiceUnavailable, reason: reason, msg: fmt.Sprintf("%s is not served for a moment: %s", what, why)}
		}
	}
	return &inferError{code: http.StatusServiceUnavailable, reason: reasonUnroutable, msg: fmt.Sprintf("%s: no gpu-let is serving it now (%v)", what, err)}
}

// runOn runs checked inputs of model m on gpu-let g, admitted there, by
// deadline.
func (n *node) runOn(ctx context.Context, g *gpuletRun, m *repository.Model, inputs []tensor.Tensor, names []string, deadline time.Time) (*executed, *inferError) {
	gen := g.gen.Load() // before the client: a restart between makes the pair stale, never wrong
	client := g.client()
	if client == nil {
		return nil, &inferError{code: http.StatusServiceUnavailable, reason: reasonExecutorDown, msg: fmt.Sprintf("%s: its executor is restarting", m.Name)}
	}
	digest, alone, refused := n.crashStanding(m, inputs)
	if refused != nil {
		return nil, refused
	}
	res, ierr := n.askOn(ctx, g, gen, client, m, inputs, names, deadline, alone)
	var hungUntil time.Time
	if ierr != nil && ierr.unanswered && g.runs(gen, ierr.sent) {
		// Its run still going well past its deadline: one that may
		// never end (not an executor stopped or starved: that runs
		// nothing).
		hungUntil = time.Now().Add(n.hangLimit(g))
	}
	n.crashOutcome(executorGen{g.id, gen}, hungUntil, m, inputs, digest, alone, ierr)
	return res, ierr
}

// askOn asks g's executor gen, reached through client, as runOn does (to
// run the request in a batch of its own: alone), and marks it stalled
// when the request finds it silent.
func (n *node) askOn(ctx context.Context, g *gpuletRun, gen uint64, client inferrer, m *repository.Model, inputs []tensor.Tensor, names []string, deadline time.Time, alone bool) (*executed, *inferError) {
	res, ierr := n.ask(ctx, client, m, inputs, names, deadline, alone)
	if ierr != nil && ierr.silent && g.suspectStall(client, gen, m.Name, deadline, ierr.heard) {
		ierr.msg = fmt.Sprintf("%s: no answer by the deadline: its executor on %s has sent nothing since the request went to it", m.Name, g.id)
	}
	return res, ierr
}

// inferrer is what the request path needs of an executor (executor.Client):
// one request answered, or an error — executor.ErrExecutorGone when the
// executor died with it in flight, the context's when it never answered —
// and how many frames it has sent so far, answers and states (Heard).
type inferrer interface {
	Infer(ctx context.Context, req *pb.InferRequest) (*pb.InferResponse, error)
	Heard() uint64
}

// errUnanswered ends the wait for an executor's answer at the request's
// deadline and its grace (answerGrace).
var errUnanswered = errors.New("no answer by the deadline")

// answerGrace is how long past a request's deadline the daemon waits for its
// executor's answer: an executor answers every request by its deadline (it
// refuses or drops one it cannot run in time), so the grace covers a batch
// that overran its planned end, and bounds what a stalled executor costs a
// client. The model's SLO, from 200 ms (a batch delayed on a busy host is
// still answered) to 1 s.
func answerGrace(slo time.Duration) time.Duration {
	return min(max(slo, 200*time.Millisecond), time.Second)
}

// ask sends checked inputs of model m to an executor, waits for its answer
// until shortly after deadline and maps what comes back: the answer's
// outputs in the model's configured shapes and its times in the metrics, or
// the error a client is told.
func (n *node) ask(ctx context.Context, client inferrer, m *repository.Model, inputs []tensor.Tensor, names []string, deadline time.Time, alone bool) (*executed, *inferError) {
	pbreq := &pb.InferRequest{Model: m.Name, Inputs: toProtoTensors(inputs), Outputs: names, DeadlineMonoNs: monoclock.Of(deadline), Alone: alone}
	// The executor answers by the deadline; the grace only guards against
	// one that stops answering.
	waitEnd := deadline.Add(answerGrace(m.Config.SLO.D()))
	ctx, cancel := context.WithDeadlineCause(ctx, waitEnd, errUnanswered)
	defer cancel()
	heard := client.Heard()
	sent := time.Now()
	res, err := client.Infer(ctx, pbreq)
	trip := time.Since(sent)
	switch {
	case errors.Is(err, executor.ErrExecutorGone):
		// One that never reached the executor did not run there: another
		// gpu-let may take it (sendAgainIfNotRun).
		return nil, &inferError{code: http.StatusServiceUnavailable, reason: reasonExecutorFailed, notRun: errors.Is(err, executor.ErrNotSent), sent: pbreq.Id,
			msg: fmt.Sprintf("%s: the executor serving it failed while the request was in flight: %v", m.Name, err)}
	case errors.Is(err, context.DeadlineExceeded):
		// Silent: the wait ended at its own deadline (not a client's
		// earlier one), on time (pauseLate), and the executor sent not
		// even a state since.
		unanswered := errors.Is(context.Cause(ctx), errUnanswered)
		silent := unanswered && time.Since(waitEnd) <= pauseLate && client.Heard() == heard
		return nil, &inferError{code: http.StatusServiceUnavailable, reason: reasonDeadline, silent: silent, heard: heard, unanswered: unanswered, sent: pbreq.Id,
			msg: fmt.Sprintf("%s: no answer by the deadline", m.Name)}
	case err != nil:
		return nil, &inferError{code: http.StatusServiceUnavailable, reason: reasonCancelled, msg: fmt.Sprintf("%s: %v", m.Name, err)}
	}
	if res.Code != pb.Code_OK {
		ierr := executorError(m.Name, res)
		ierr.notRun = res.NotRun
		if res.DeviceFault {
			// Its run found the GPU failed for good: the executor's
			// running file names the batch that faulted it when it ends
			// (crash_suspects.go).
			ierr.sent = pbreq.Id
		}
		return nil, ierr
	}
	outs, err := fromProtoTensors(res.Outputs)
	if err == nil {
		err = reshapeOutputs(m, outs)
	}
	if err != nil {
		return nil, &inferError{code: http.StatusInternalServerError, reason: reasonInternal, msg: fmt.Sprintf("%s: bad output from the executor: %v", m.Name, err)}
	}
	// Only answers handed out count, as in Triton's statistics: what a
	// failed request spent shows in its failure.
	c, r := n.counters.of(m.Name), reportOf(res)
	c.queue.add(r.queue)
	c.compute.add(r.compute)
	c.computeInput.add(r.input)
	c.computeOutput.add(r.output)
	n.observeExecutorSummaries(m, r)
	rows := requestRows(m, inputs)
	c.inferences.Add(int64(rows))
	if res.BatchSize > 0 { // the request's rows of the batch's, which run together
		share := float64(min(rows, res.BatchSize)) / float64(res.BatchSize)
		c.batches.add(share)
		c.bySize.add(res.BatchSize, share, r)
	}
	n.metrics.queue.WithLabelValues(m.Name).Observe(r.queue.Seconds())
	n.metrics.compute.WithLabelValues(m.Name).Observe(r.compute.Seconds())
	traceOf(ctx).executorTimes(sent, trip, time.Duration(res.HeldUs)*time.Microsecond, r)
	if res.HeldUs > 0 {
		hop := max(trip-time.Duration(res.HeldUs)*time.Microsecond, 0)
		n.metrics.hop.WithLabelValues(m.Name).Observe(hop.Seconds())
		c.hop.add(hop)
	}
	n.metrics.batch.WithLabelValues(m.Name).Observe(float64(res.BatchSize))
	return &executed{outs: outs, batch: res.BatchSize, emulated: res.Emulated}, nil
}

// executorError maps an executor's answer code to HTTP. The executor's
// reason follows the daemon's words, without the model's name again.
func executorError(model string, res *pb.InferResponse) *inferError {
	why := strings.TrimPrefix(res.Error, model+": ")
	switch res.Code {
	case pb.Code_INVALID_ARGUMENT:
		return &inferError{code: http.StatusBadRequest, reason: reasonBadRequest, msg: res.Error}
	case pb.Code_DEADLINE:
		return &inferError{code: http.StatusServiceUnavailable, reason: reasonDeadline, msg: fmt.Sprintf("%s: the deadline cannot be met (%s)", model, why)}
	case pb.Code_DROPPED:
		return &inferError{code: http.StatusServiceUnavailable, reason: reasonDropped, msg: fmt.Sprintf("%s: dropped so that the requests queued behind it meet their deadlines (%s)", model, why)}
	case pb.Code_QUEUE_FULL:
		return &inferError{code: http.StatusServiceUnavailable, reason: reasonQueueFull, msg: fmt.Sprintf("%s: overloaded (%s)", model, why)}
	case pb.Code_UNAVAILABLE, pb.Code_NOT_FOUND, pb.Code_CANCELLED:
		return &inferError{code: http.StatusServiceUnavailable, reason: reasonUnavailable, msg: fmt.Sprintf("%s: %s", model, why)}
	}
	return &inferError{code: http.StatusInternalServerError, reason: reasonInternal, msg: fmt.Sprintf("%s: %s", model, why)}
}

// checkInputs checks a decoded request against the model: every input
// named once, none unknown, right data type, and a shape that fits (a
// leading batch dimension of 1..max_batch_size for batching models, the
// same for every input).
func checkInputs(m *repository.Model, req *kserve.Request) error {
	specs := repository.RequestTensors(m.Inputs)
	got := map[string]tensor.Tensor{}
	for _, t := range req.Inputs {
		if !slices.ContainsFunc(specs, func(s repository.TensorSpec) bool { return s.Name == t.Name }) {
			if role := m.Config.Sequence.Role(t.Name, true); role != "" {
				return fmt.Errorf("input %q is the model's sequence %s, which gpuletd gives it; leave it out (the model takes %s)", t.Name, role, tensorNames(specs))
			}
			return fmt.Errorf("the model has no input %q (it takes %s)", t.Name, tensorNames(specs))
		}
		got[t.Name] = t
	}
	rows, first := int64(0), ""
	for _, spec := range specs {
		t, ok := got[spec.Name]
		if !ok {
			return fmt.Errorf("input %q is missing (the model takes %s)", spec.Name, tensorNames(specs))
		}
		if t.DataType != spec.DataType {
			return fmt.Errorf("input %q is %s, the model takes %s", spec.Name, t.DataType, spec.DataType)
		}
		shape := t.Shape
		if m.Config.MaxBatchSize > 0 {
			if len(shape) == 0 || shape[0] < 1 || shape[0] > int64(m.Config.MaxBatchSize) {
				return fmt.Errorf("input %q has shape %v: dimension 0 is the batch, 1 to %d", spec.Name, t.Shape, m.Config.MaxBatchSize)
			}
			if first == "" {
				rows, first = shape[0], spec.Name
			} else if shape[0] != rows {
				return fmt.Errorf("input %q has a batch of %d, input %q of %d: every input has the same batch", spec.Name, shape[0], first, rows)
			}
			shape = shape[1:]
		}
		if !tensor.MatchShape(shape, spec.Dims) {
			want := spec.Dims
			if m.Config.MaxBatchSize > 0 {
				want = append([]int64{-1}, want...)
			}
			return fmt.Errorf("input %q has shape %v, the model takes %v", spec.Name, t.Shape, want)
		}
	}
	outs := repository.RequestTensors(m.Outputs)
	for _, o := range req.Outputs {
		if !slices.ContainsFunc(outs, func(s repository.TensorSpec) bool { return s.Name == o.Name }) {
			if m.Config.Sequence.Role(o.Name, false) != "" {
				return fmt.Errorf("output %q is the model's sequence state, which gpuletd keeps for the next request; it is not answered (the model gives %s)", o.Name, tensorNames(outs))
			}
			return fmt.Errorf("the model has no output %q (it gives %s)", o.Name, tensorNames(outs))
		}
	}
	return nil
}

// tensorNames lists a model's inputs or outputs for an error: "a", "b".
func tensorNames(specs []repository.TensorSpec) string {
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = strconv.Quote(s.Name)
	}
	return strings.Join(names, ", ")
}

// reshapeInputs gives each input whose configuration has a reshape the
// model file's shape (Triton's reshape); the caller's slice is not changed
// and the tensors' bytes are shared.
func reshapeInputs(m *repository.Model, ins []tensor.Tensor) ([]tensor.Tensor, error) {
	if !slices.ContainsFunc(m.Inputs, func(s repository.TensorSpec) bool { return s.Reshape != nil }) {
		return ins, nil
	}
	out := slices.Clone(ins)
	return out, reshapeTensors(m, "input", m.Inputs, out, func(s repository.TensorSpec) []int64 { return s.Reshape })
}

// reshapeOutputs gives each output whose configuration has a reshape the
// configured dims back, in place.
func reshapeOutputs(m *repository.Model, outs []tensor.Tensor) error {
	return reshapeTensors(m, "output", m.Outputs, outs, func(s repository.TensorSpec) []int64 { return s.Dims })
}

// reshapeTensors gives each tensor in ts whose spec has a reshape the shape
// to(spec), in place.
func reshapeTensors(m *repository.Model, kind string, specs []repository.TensorSpec, ts []tensor.Tensor, to func(repository.TensorSpec) []int64) error {
	for _, spec := range specs {
		if spec.Reshape == nil {
			continue
		}
		for i := range ts {
			if ts[i].Name != spec.Name {
				continue
			}
			shape, err := repository.Reshape(ts[i].Shape, m.Config.MaxBatchSize > 0, to(spec))
			if err != nil {
				return fmt.Errorf("%s %q: %w", kind, spec.Name, err)
			}
			ts[i].Shape = shape
		}
	}
	return nil
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func toProtoTensors(ts []tensor.Tensor) []*pb.Tensor {
	out := make([]*pb.Tensor, len(ts))
	for i, t := range ts {
		out[i] = &pb.Tensor{Name: t.Name, Datatype: string(t.DataType), Shape: t.Shape, Data: t.Data}
	}
	return out
}

func fromProtoTensors(ts []*pb.Tensor) ([]tensor.Tensor, error) {
	out := make([]tensor.Tensor, len(ts))
	for i, t := range ts {
		x, err := tensor.New(t.Name, tensor.DataType(t.Datatype), t.Shape, t.Data)
		if err != nil {
			return nil, err
		}
		out[i] = x
	}
	return out, nil
}

// admitAny routes a request that any of models may serve by (routeAny, not
// excepted) and admits it on the chosen gpu-let; the caller releases it
// once answered. A gpu-let that begins to retire between the routing and
// the admission is routed around. It returns the model chosen.
func (n *node) admitAny(models []string, deadline, by time.Duration, not *gpuletRun) (string, *gpuletRun, error) {
	for {
		model, g, _, err := n.router.routeAny(models, deadline, by, not)
		if err != nil {
			return "", nil, err
		}
		if g.requests.acquire() {
			return model, g, nil
		}
		// It closed after route read its state; routing again skips it
		// (draining is set before its admissions close).
	}
}

// requestRows is how many rows a request of m carries: its inputs' first
// dimension when m batches, else one.
func requestRows(m *repository.Model, inputs []tensor.Tensor) int32 {
	if m.Config.MaxBatchSize > 0 && len(inputs) > 0 && len(inputs[0].Shape) > 0 {
		return int32(max(inputs[0].Shape[0], 1))
	}
	return 1
}
