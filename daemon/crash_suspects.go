package daemon

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gpulet/gpuletd/executor/tensor"
)

// A request that crashes its executor (a custom operator's bug, a fault in
// ONNX Runtime on some data), or whose run never ends (the executor exits
// once it is past scheduler.hang_timeout), takes the requests batched
// with it down too, and a client that retries it does so again, each time
// costing the gpu-let a restart. crashSuspects tells it from the others:
// the requests the executor was running when it crashed or hung (its
// running file, read when it ended) are suspects, each runs alone when it
// comes again, and a request that crashes or hangs an executor in a run
// of its own (a suspect, or one that ran alone the first time) is
// quarantined: refused at the door (reasonCrashesExecutor) until
// quarantineFor has passed or its model is loaded anew (another file:
// another SHA256) or unloaded. A suspect answered is a suspect no more.
// On a GPU, a kernel of a run that faults the device (an illegal address,
// as an index past a table's end makes) loses the process's CUDA context:
// the run's requests are suspects alike, but one is quarantined only once
// it faulted a GPU again, run alone, since the device may fault by itself.
// A request that got no answer even past its deadline and grace, its run
// still going, may be in a run that never ends: while its executor's
// running file names it, until the executor ends or gives up on the run
// (the hang limit), the same request is refused (standingTwinHung), so
// that a client that retries it does not hang another gpu-let while the
// first is not yet found. Requests are known
// by their inputs' digest, which the request path computes only while
// its model has suspects, quarantined requests or such a request.
type crashSuspects struct {
	mu     sync.Mutex
	ends   map[executorGen]*executorEnd
	models map[string]*modelSuspects
	// hanging are, by model and digest, the requests unanswered past
	// their deadline's grace, their run still going, on an executor that
	// has not ended since.
	hanging map[string]map[inputsDigest]hangingRun
	// watched are the models with suspects, quarantined or hanging
	// requests, a map replaced whole on each change (read without mu).
	watched atomic.Pointer[map[string]bool]
	// quarantined, when set, is told of each request quarantined, with
	// when its quarantine ends (an event).
	quarantined func(model string, d inputsDigest, until time.Time)
	// runs, when set, says whether executor e is running request id now
	// (its running file names it): a hanging request's run that ended,
	// late, refuses its twins no more. Unset, a run is taken as going
	// until its hang limit. Called without mu held.
	runs func(e executorGen, id uint64) bool
}

// suspectFor is how long a request stays a suspect after the crash it was
// running in, quarantineFor how long a request that crashed two executors
// is refused, and mostSuspects and mostQuarantined how many of each one
// model keeps (the oldest go first).
const (
	suspectFor      = 10 * time.Minute
	quarantineFor   = time.Hour
	mostSuspects    = 256
	mostQuarantined = 64
	// endsKept bounds the executors remembered, the least recently told
	// of going first: a crash's requests fail within milliseconds of its
	// end, a hung run's seconds before it.
	endsKept = 32
)

// inputsDigest names a request by its inputs: sha256 of each input's
// name, data type, shape and bytes, in the order of their names.
type inputsDigest [sha256.Size]byte

// digestInputs is the digest of a request's inputs.
func digestInputs(inputs []tensor.Tensor) inputsDigest {
	order := make([]int, len(inputs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(inputs[a].Name, inputs[b].Name) })
	h := sha256.New()
	var n [8]byte
	for _, i := range order {
		t := inputs[i]
		for _, s := range []string{t.Name, string(t.DataType)} {
			binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
			h.Write(n[:])
			h.Write([]byte(s))
		}
		binary.LittleEndian.PutUint64(n[:], uint64(len(t.Shape)))
		h.Write(n[:])
		for _, d := range t.Shape {
			binary.LittleEndian.PutUint64(n[:], uint64(d))
			h.Write(n[:])
		}
		binary.LittleEndian.PutUint64(n[:], uint64(len(t.Data)))
		h.Write(n[:])
		h.Write(t.Data)
	}
	var d inputsDigest
	h.Sum(d[:0])
	return d
}

// executorGen is one executor process: its gpu-let and generation.
type executorGen struct {
	gpulet string
	gen    uint64
}

// endCause is how an executor ended, for its crash suspects.
type endCause int

const (
	// endStopped: stopped otherwise than by its own run (a plan retired
	// it, a kill for its health, another process's or the device's own
	// fault).
	endStopped endCause = iota
	// endCrashed: it crashed, or a run of it did not end.
	endCrashed
	// endFaulted: a kernel of its run faulted its GPU (an illegal
	// address), or a run of it on a GPU never ended: the run's requests
	// may be the cause, or the device; a request is quarantined only once
	// it did so twice.
	endFaulted
)

// endCauseOf is the end cause of an executor whose restart event gives
// cause (executor_exit.go) and whose running file named running.
func endCauseOf(cause string, running []uint64) endCause {
	switch {
	case cause == "crash" || cause == "hang":
		return endCrashed
	case cause == "device_fault" && len(running) > 0: // named for a kernel's fault or a run that never ended
		return endFaulted
	}
	return endStopped
}

// blames says whether a lost request that an executor ended by c was
// running then (of running, how many) is a suspect, and whether it is
// quarantined at once for having run alone: after a crash, a run of its
// own has shown what a suspect's second run would; after a GPU fault,
// which the device itself may have caused, only a second fault does.
func (c endCause) blames(running int) (suspect, single bool) {
	switch c {
	case endCrashed:
		return true, running == 1
	case endFaulted:
		return true, false
	}
	return false, false
}

// executorEnd matches an executor's end with the requests that failed
// when it ended, whichever is known first.
type executorEnd struct {
	at      time.Time       // when it was last told of
	settled bool            // the end is known: cause and running are set
	cause   endCause        // how it ended
	running map[uint64]bool // the requests its engine ran then
	// lost are its requests that failed unanswered, by id, the oldest
	// first in order, at most lostKept of them: a hung run's request
	// was answered at its deadline, long before its executor ended.
	lost  map[uint64]lostRequest
	order []uint64
}

// lostKept bounds the unanswered requests kept for an executor that has
// not ended (one that is only slow, at overload, may leave many).
const lostKept = 256

// lostRequest is a request that got no answer from its executor (it ended
// with the request in flight, or the request's deadline passed first):
// its model's name and file (repository.Model.SHA256) and its inputs.
type lostRequest struct {
	model, sha string
	digest     inputsDigest
}

// hangingRun is where a request went unanswered past its deadline: its
// executor and id there, the model's file then, when it was lost, and
// when the executor will have given up on the run (its hang limit after
// the request was lost).
type hangingRun struct {
	e         executorGen
	id        uint64
	sha       string
	at, until time.Time
}

// hangProof is how long a request must have gone unanswered past its
// deadline's grace, its run still under way when its executor was
// stopped otherwise than by its own checks (a plan that retired it, a
// kill for its health: endStopped), for that run to count as hung,
// as the executor's own check would have found it on the CPU
// (executor.DefaultHangFloorCPU): shorter, it may have been slow.
const hangProof = 5 * time.Second

// modelSuspects are one model's suspects, with when each was first seen
// in a crash, and its quarantined requests, with when each is let go,
// while it serves the file sha.
type modelSuspects struct {
	sha         string
	suspects    map[inputsDigest]time.Time
	quarantined map[inputsDigest]time.Time
}

// standing is what the request path does with a request.
type standing int

const (
	standingClear       standing = iota // as any other
	standingSuspect                     // run alone
	standingQuarantined                 // refused
	standingTwinHung                    // refused for now: the same request is in a run that may never end
)

// watching says whether model has suspects, quarantined or hanging
// requests: only then does the request path digest its requests.
func (c *crashSuspects) watching(model string) bool {
	w := c.watched.Load()
	return w != nil && (*w)[model]
}

// publish replaces watched with the models c.models and c.hanging hold;
// mu is held.
func (c *crashSuspects) publish() {
	w := make(map[string]bool, len(c.models)+len(c.hanging))
	for m := range c.models {
		w[m] = true
	}
	for m := range c.hanging {
		w[m] = true
	}
	c.watched.Store(&w)
}

// standingOf is what becomes of a request d of model, serving the file
// sha, at now, and for a refused one when its refusal ends.
func (c *crashSuspects) standingOf(model, sha string, d inputsDigest, now time.Time) (standing, time.Time) {
	if until, ok := c.twinHung(model, sha, d, now); ok {
		return standingTwinHung, until
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	ms := c.models[model]
	if ms == nil {
		return standingClear, time.Time{}
	}
	if ms.sha != sha { // loaded anew
		c.forget(model)
		return standingClear, time.Time{}
	}
	if until, ok := ms.quarantined[d]; ok {
		if now.Before(until) {
			return standingQuarantined, until
		}
		delete(ms.quarantined, d)
	}
	if at, ok := ms.suspects[d]; ok {
		if now.Sub(at) < suspectFor {
			return standingSuspect, time.Time{}
		}
		delete(ms.suspects, d)
	}
	c.tidy(model)
	return standingClear, time.Time{}
}

// twinHung says whether request d of model, serving the file sha, is the
// twin of one whose run is still going at now, and until when it is
// refused; a hanging request whose run has ended (or its model's file
// changed, or its hang limit passed) is dropped.
func (c *crashSuspects) twinHung(model, sha string, d inputsDigest, now time.Time) (time.Time, bool) {
	c.mu.Lock()
	run, ok := c.hanging[model][d]
	c.mu.Unlock()
	if !ok {
		return time.Time{}, false
	}
	if run.sha == sha && c.goingOn(run, now) {
		return run.until, true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.hanging[model][d] == run { // not replaced meanwhile
		c.unhang(model, d)
	}
	return time.Time{}, false
}

// goingOn says whether a hanging request's run may still be going at now:
// before its hang limit, and named by its executor's running file; mu is
// not held.
func (c *crashSuspects) goingOn(run hangingRun, now time.Time) bool {
	return now.Before(run.until) && (c.runs == nil || c.runs(run.e, run.id))
}

// answered clears a suspect that ran and was answered.
func (c *crashSuspects) answered(model string, d inputsDigest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ms := c.models[model]; ms != nil {
		delete(ms.suspects, d)
		c.tidy(model)
	}
}

// retain drops what is known of the requests of each model keep refuses:
// the models no longer served (unloaded, gone from the repository).
func (c *crashSuspects) retain(keep func(model string) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for model := range c.models {
		if !keep(model) {
			c.forget(model)
		}
	}
}

// lift forgets what is known of model's requests, at an operator's word
// (its quarantine is lifted), and says how many suspects, quarantined and
// hanging requests it held back at now (counts).
func (c *crashSuspects) lift(model string, now time.Time) (suspects, quarantined, hanging int) {
	suspects, quarantined, hanging = c.counts(model, now)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.forget(model)
	return suspects, quarantined, hanging
}

// forget drops what is known of model's requests; c.mu is held.
func (c *crashSuspects) forget(model string) {
	_, suspects := c.models[model]
	_, hanging := c.hanging[model]
	if suspects || hanging {
		delete(c.models, model)
		delete(c.hanging, model)
		c.publish()
	}
}

// hangs says whether executor e has a request that went unanswered past
// its deadline's grace, before its hang limit at now, its run still
// going: a run that may never end.
func (c *crashSuspects) hangs(e executorGen, now time.Time) bool {
	var its []hangingRun
	c.mu.Lock()
	for _, runs := range c.hanging {
		for _, run := range runs {
			if run.e == e {
				its = append(its, run)
			}
		}
	}
	c.mu.Unlock()
	return slices.ContainsFunc(its, func(run hangingRun) bool { return c.goingOn(run, now) })
}

// unhang drops d from model's hanging requests; c.mu is held.
func (c *crashSuspects) unhang(model string, d inputsDigest) {
	delete(c.hanging[model], d)
	if len(c.hanging[model]) == 0 {
		delete(c.hanging, model)
		c.publish()
	}
}

// lost records request r, id on executor e's stream, which e did not
// answer: it ended with r in flight, or r's deadline passed first (a run
// that hangs is found later, when the executor gives up on it). A
// request whose run was still going past its deadline's grace (hungUntil
// set: when e will have given up on the run) hangs: its twins are
// refused until e ends or hungUntil.
func (c *crashSuspects) lost(e executorGen, id uint64, r lostRequest, now, hungUntil time.Time) {
	c.mu.Lock()
	var told []quarantine
	defer func() { c.mu.Unlock(); c.tell(told) }()
	end := c.end(e, now)
	if end.settled {
		if suspect, single := end.cause.blames(len(end.running)); suspect && end.running[id] {
			told = c.suspect(told, r, now, single)
		}
		return
	}
	if !hungUntil.IsZero() {
		if c.hanging == nil {
			c.hanging = map[string]map[inputsDigest]hangingRun{}
		}
		if c.hanging[r.model] == nil {
			c.hanging[r.model] = map[inputsDigest]hangingRun{}
			defer c.publish()
		}
		c.hanging[r.model][r.digest] = hangingRun{e: e, id: id, sha: r.sha, at: now, until: hungUntil}
		dropOldest(c.hanging[r.model], mostSuspects, func(h hangingRun) time.Time { return h.until })
	}
	if end.lost == nil {
		end.lost = map[uint64]lostRequest{}
	}
	if _, ok := end.lost[id]; !ok {
		end.order = append(end.order, id)
	}
	end.lost[id] = r
	if len(end.order) > lostKept {
		delete(end.lost, end.order[0])
		end.order = end.order[1:]
	}
}

// ended records how executor e ended (cause: crashed, a kernel's GPU
// fault, or otherwise: killed for its health, out of memory, the device's
// own fault: no request's), and the requests its engine was running then.
func (c *crashSuspects) ended(e executorGen, cause endCause, running []uint64, now time.Time) {
	c.mu.Lock()
	var told []quarantine
	defer func() { c.mu.Unlock(); c.tell(told) }()
	end := c.end(e, now)
	end.settled, end.cause = true, cause
	end.running = make(map[uint64]bool, len(running))
	for _, id := range running {
		end.running[id] = true
	}
	suspect, single := cause.blames(len(running))
	for id, r := range end.lost {
		if suspect && end.running[id] {
			told = c.suspect(told, r, now, single)
		}
	}
	end.lost, end.order = nil, nil
	// Found now: a suspect (above), or, where e was stopped otherwise (a
	// plan that retired it, a kill for its health) with the request still
	// running, well past its deadline: a suspect too, and as a crash if it
	// had run hangProof past its grace.
	for model, runs := range c.hanging {
		for d, run := range runs {
			if run.e != e {
				continue
			}
			if cause == endStopped && end.running[run.id] {
				hung := now.Sub(run.at) >= hangProof
				told = c.suspect(told, lostRequest{model: model, sha: run.sha, digest: d}, now, hung && len(running) == 1)
			}
			c.unhang(model, d)
		}
	}
}

// end is e's record, made if new; the oldest go past endsKept.
func (c *crashSuspects) end(e executorGen, now time.Time) *executorEnd {
	if c.ends == nil {
		c.ends = map[executorGen]*executorEnd{}
	}
	end := c.ends[e]
	if end == nil {
		end = &executorEnd{}
		c.ends[e] = end
	}
	end.at = now
	dropOldest(c.ends, endsKept, func(x *executorEnd) time.Time { return x.at })
	return end
}

// quarantine is a request quarantined, to be told (crashSuspects.tell).
type quarantine struct {
	model string
	d     inputsDigest
	until time.Time
}

// tell says each of qs to the quarantined hook, with mu not held: the
// hook records an event, which may wait on the database.
func (c *crashSuspects) tell(qs []quarantine) {
	if c.quarantined == nil {
		return
	}
	for _, q := range qs {
		c.quarantined(q.model, q.d, q.until)
	}
}

// suspect makes r a suspect of a crash at now, or quarantines it when it
// was one already, or when the run that crashed or hung held it alone
// (single): run alone, as a suspect would be, it is proven already. It
// adds a quarantine to told.
func (c *crashSuspects) suspect(told []quarantine, r lostRequest, now time.Time, single bool) []quarantine {
	if c.models == nil {
		c.models = map[string]*modelSuspects{}
	}
	model, d := r.model, r.digest
	ms := c.models[model]
	if ms != nil && ms.sha != r.sha { // loaded anew
		c.forget(model)
		ms = nil
	}
	if ms == nil {
		ms = &modelSuspects{sha: r.sha, suspects: map[inputsDigest]time.Time{}, quarantined: map[inputsDigest]time.Time{}}
		c.models[model] = ms
		c.publish()
	}
	if at, ok := ms.suspects[d]; single || ok && now.Sub(at) < suspectFor {
		delete(ms.suspects, d)
		until := now.Add(quarantineFor)
		ms.quarantined[d] = until
		dropOldest(ms.quarantined, mostQuarantined, func(t time.Time) time.Time { return t })
		return append(told, quarantine{model, d, until})
	}
	ms.suspects[d] = now
	dropOldest(ms.suspects, mostSuspects, func(t time.Time) time.Time { return t })
	return told
}

// tidy drops model's record once it holds nothing.
func (c *crashSuspects) tidy(model string) {
	if ms := c.models[model]; ms != nil && len(ms.suspects) == 0 && len(ms.quarantined) == 0 {
		delete(c.models, model)
		c.publish()
	}
}

// counts are model's suspects, quarantined and hanging requests at now.
func (c *crashSuspects) counts(model string, now time.Time) (suspects, quarantined, hanging int) {
	if c == nil {
		return 0, 0, 0
	}
	c.mu.Lock()
	runs := slices.Collect(maps.Values(c.hanging[model]))
	if ms := c.models[model]; ms != nil {
		for _, at := range ms.suspects {
			if now.Sub(at) < suspectFor {
				suspects++
			}
		}
		for _, until := range ms.quarantined {
			if now.Before(until) {
				quarantined++
			}
		}
	}
	c.mu.Unlock()
	for _, run := range runs { // the running files are read without mu
		if c.goingOn(run, now) {
			hanging++
		}
	}
	return suspects, quarantined, hanging
}

// dropOldest deletes m's entries with the earliest times until it holds
// at most most.
func dropOldest[K comparable, V any](m map[K]V, most int, at func(V) time.Time) {
	for len(m) > most {
		keys := slices.Collect(maps.Keys(m))
		oldest := slices.MinFunc(keys, func(a, b K) int { return at(m[a]).Compare(at(m[b])) })
		delete(m, oldest)
	}
}
