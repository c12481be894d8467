package sched

import (
	"fmt"
	"time"
)

// DefaultMaxQueue is the per-model queue bound when neither the model nor the
// scheduler sets one.
const DefaultMaxQueue = 4096

// Config configures a Scheduler.
type Config struct {
	// Policy is the batch scheduling policy; nil means Deferred.
	Policy Policy
	// MaxQueue bounds every model's queue unless the model sets its own;
	// 0 means DefaultMaxQueue. A request that would exceed it is rejected
	// with QueueFull.
	MaxQueue int
}

// ModelConfig is one model as placed on this gpu-let.
type ModelConfig struct {
	// Latency is ℓ(b) on this gpu-let; its MaxBatch is the model's largest
	// batch here.
	Latency Latency
	// MaxQueue overrides Config.MaxQueue for this model when positive.
	MaxQueue int
}

// Stats counts what a Scheduler has done since it was made.
type Stats struct {
	// Submitted counts Submit calls that named a known model.
	Submitted uint64
	// Batches and Dispatched count dispatched batches and the requests in
	// them (a preempted batch's requests count again when re-dispatched).
	Batches, Dispatched uint64
	// Preemptions counts preempted batches.
	Preemptions uint64
	// Rejected counts rejections by reason.
	Rejected [numReasons]uint64
}

// model is one model's state on the gpu-let.
type model struct {
	id   ModelID
	lat  Latency
	l1   time.Duration // ℓ(1) a request is refused by (SetLatencies)
	maxB int
	maxQ int
	q    queue
	// hd is the head's deadline and opos the model's index in
	// Scheduler.order (-1 when absent); guard_alt.go only.
	hd   time.Duration
	opos int32
	// best[K] is the batch size k ≤ K with the most requests per unit of
	// time (head dropping, window.go).
	best []int32
	// gains[n] says whether a batch of n gains from waiting for one more
	// request, and idle[n] how long it waits for it on a free gpu-let
	// (gain.go).
	gains []bool
	idle  []time.Duration
	// lastArrival is when the model's last request was queued.
	lastArrival time.Duration
	// amin is the earliest arrival among the first min(n, maxB) queued
	// requests; kept only under the timeout policy.
	amin time.Duration
	// lastStart and lastEnd are when the model's last batch started and
	// was predicted to end (neverRan before its first; turns.go).
	lastStart, lastEnd time.Duration
}

// Scheduler is the scheduling core of one gpu-let. It is not safe for
// concurrent use: one goroutine (the executor's loop, or the simulator) owns
// it. Every method takes the current time now; a now earlier than the latest
// time already seen is taken as that latest time, so the state never moves
// backwards.
type Scheduler struct {
	sink   Sink
	policy Policy
	pol    policySpec
	maxQ   int

	models []*model // by id; nil where absent

	// expiry holds, per non-empty model, the first instant its head cannot
	// finish even alone: d − ℓ(1) + 1ns. ready holds, per non-empty model,
	// the instant its batch becomes dispatchable under the policy. For every
	// model ready ≤ expiry.
	expiry, ready mheap

	now  time.Duration
	busy bool
	// freed is when the last batch ended (0 before the first).
	freed time.Duration
	// busyShare is the gpu-let's recent busy share, which bounds the idle
	// rule's waits (busy_share.go).
	busyShare busyShare
	running   Batch
	run       []Request // backing array of running.Requests
	seq       uint64

	// order and altWake serve the measured alternatives of guard_alt.go
	// only: the non-empty models by head deadline, and their next timer
	// while the gpu-let is free (never otherwise).
	order   []*model
	altWake time.Duration

	scratch, stack []int32
	// room is readyInstead's scratch: the models with requests queued, by
	// head deadline (guard.go).
	room  []*model
	stats Stats
}

// New returns a Scheduler with no models that reports to sink.
func New(cfg Config, sink Sink) (*Scheduler, error) {
	if sink == nil {
		return nil, fmt.Errorf("new scheduler: %w: nil sink", ErrBadConfig)
	}
	p := cfg.Policy
	if p == nil {
		p = Deferred{}
	}
	if err := validate(p); err != nil {
		return nil, fmt.Errorf("new scheduler: %w", err)
	}
	if cfg.MaxQueue < 0 {
		return nil, fmt.Errorf("new scheduler: %w: max queue %d is negative", ErrBadConfig, cfg.MaxQueue)
	}
	maxQ := cfg.MaxQueue
	if maxQ == 0 {
		maxQ = DefaultMaxQueue
	}
	return &Scheduler{sink: sink, policy: p, pol: p.spec(), maxQ: maxQ, altWake: never}, nil
}

// Policy returns the scheduler's policy.
func (s *Scheduler) Policy() Policy { return s.policy }

// Stats returns the counters.
func (s *Scheduler) Stats() Stats { return s.stats }

// Busy reports whether a batch is running.
func (s *Scheduler) Busy() bool { return s.busy }

// Running returns the running batch, if any (its Requests follow Batch's
// validity rule).
func (s *Scheduler) Running() (Batch, bool) { return s.running, s.busy }

// Models appends the ids of the models present, ascending, to dst.
func (s *Scheduler) Models(dst []ModelID) []ModelID {
	for _, m := range s.models {
		if m != nil {
			dst = append(dst, m.id)
		}
	}
	return dst
}

// Queued returns how many requests of a model wait (0 for an unknown model).
func (s *Scheduler) Queued(id ModelID) int {
	if m := s.model(id); m != nil {
		return m.q.n
	}
	return 0
}

func (s *Scheduler) model(id ModelID) *model {
	if int(id) < len(s.models) {
		return s.models[id]
	}
	return nil
}

// clock returns now, not earlier than any time already seen.
func (s *Scheduler) clock(now time.Duration) time.Duration {
	if now < s.now {
		return s.now
	}
	s.now = now
	return now
}

// AddModel places a model on the gpu-let.
func (s *Scheduler) AddModel(now time.Duration, id ModelID, cfg ModelConfig) error {
	s.clock(now)
	switch {
	case id >= MaxModels:
		return fmt.Errorf("add model %d: %w (max %d)", id, ErrBadModelID, MaxModels)
	case s.model(id) != nil:
		return fmt.Errorf("add model %d: %w", id, ErrModelExists)
	case cfg.Latency.MaxBatch() < 1:
		return fmt.Errorf("add model %d: %w: empty latency table", id, ErrBadLatency)
	case cfg.MaxQueue < 0:
		return fmt.Errorf("add model %d: %w: max queue %d is negative", id, ErrBadConfig, cfg.MaxQueue)
	}
	for int(id) >= len(s.models) {
		s.models = append(s.models, nil)
	}
	s.expiry.ensure(len(s.models))
	s.ready.ensure(len(s.models))
	maxQ := s.maxQ
	if cfg.MaxQueue > 0 {
		maxQ = cfg.MaxQueue
	}
	m := &model{id: id, lat: cfg.Latency, l1: cfg.Latency.At(1), maxB: cfg.Latency.MaxBatch(), maxQ: maxQ, opos: -1, best: bestBatches(cfg.Latency), gains: deferGains(cfg.Latency), idle: idleWaits(cfg.Latency), lastStart: neverRan, lastEnd: neverRan}
	s.models[id] = m
	if c := m.maxB; cap(s.run) < c {
		s.run = make([]Request, 0, c)
		if s.busy { // keep the running batch's requests where they are
			s.run = append(s.run, s.running.Requests...)
			s.running.Requests = s.run
		}
	}
	if cap(s.scratch) < len(s.models) {
		s.scratch = make([]int32, 0, len(s.models))
		s.stack = make([]int32, 0, len(s.models))
	}
	return nil
}

// RemoveModel takes a model off the gpu-let; its queued requests are rejected
// with ModelRemoved. A running batch of the model runs to completion.
func (s *Scheduler) RemoveModel(now time.Duration, id ModelID) error {
	now = s.clock(now)
	m := s.model(id)
	if m == nil {
		return fmt.Errorf("remove model %d: %w", id, ErrUnknownModel)
	}
	s.models[id] = nil
	for m.q.n > 0 {
		s.reject(now, m.q.popFront(), ModelRemoved)
	}
	m.q.reset()
	s.rekey(m)
	s.advance(now)
	return nil
}

// Submit hands the scheduler a new request. Due timers are processed first.
// The request is rejected at once (through the Sink) when it cannot finish
// even alone (DeadlineUnreachable) or its model's queue is full (QueueFull);
// otherwise it is queued and may be dispatched within this call. The only
// error is ErrUnknownModel, and then nothing was reported to the Sink.
func (s *Scheduler) Submit(now time.Duration, r Request) error {
	if err := s.admit(now, r); err != nil {
		return err
	}
	s.tryDispatch(s.now)
	return nil
}

// SubmitAll hands the scheduler requests that arrive together (the rows of
// one client request): all are queued before a batch is chosen, so an idle
// gpu-let under eager does not start the first alone. A request of an
// unknown model stops the call with ErrUnknownModel; those before it were
// submitted.
func (s *Scheduler) SubmitAll(now time.Duration, rs []Request) error {
	var err error
	for _, r := range rs {
		if err = s.admit(now, r); err != nil {
			break
		}
	}
	s.tryDispatch(s.now)
	return err
}

// admit is Submit without the dispatch decision.
func (s *Scheduler) admit(now time.Duration, r Request) error {
	m := s.model(r.Model)
	if m == nil {
		return fmt.Errorf("submit request %d: model %d: %w", r.ID, r.Model, ErrUnknownModel)
	}
	now = s.clock(now)
	s.stats.Submitted++
	s.expire(now)
	switch {
	case now+m.l1 > r.Deadline:
		s.reject(now, r, DeadlineUnreachable)
	case m.q.n >= m.maxQ:
		s.reject(now, r, QueueFull)
	default:
		m.lastArrival = now
		s.enqueue(m, r)
		if s.busy && s.pol.preempt {
			s.maybePreempt(now, m)
		}
	}
	return nil
}

// Advance processes every timer due at or before now: rejects requests that
// can no longer finish and, when the gpu-let is free, dispatches the batch the
// policy picks. Drivers call it at (or soon after) NextWakeup.
func (s *Scheduler) Advance(now time.Duration) {
	s.advance(s.clock(now))
}

// BatchDone reports that the running batch seq has finished and the gpu-let
// is free; the next batch may be dispatched within this call. ErrNoBatch means
// no batch seq is running (it was preempted, or already reported).
func (s *Scheduler) BatchDone(now time.Duration, seq uint64) error {
	if !s.busy || s.running.Seq != seq {
		return fmt.Errorf("complete batch %d: %w", seq, ErrNoBatch)
	}
	now = s.clock(now)
	s.busyShare.ran(s.running.Start, now)
	s.busy = false
	s.running = Batch{}
	s.freed = now
	if s.pol.gain {
		// The idle rule counts from now for every queued batch.
		for _, e := range s.expiry.e {
			s.rekey(s.models[e.id])
		}
	}
	s.advance(now)
	return nil
}

// NextWakeup returns when the driver must next call Advance if nothing else
// happens before: the earliest request expiry and, while the gpu-let is free,
// the earliest moment a batch becomes dispatchable. ok is false when no timer
// is pending. A batch completion is not a timer: the driver reports it with
// BatchDone.
func (s *Scheduler) NextWakeup() (t time.Duration, ok bool) {
	t = s.expiry.min()
	if !s.busy {
		t = min(t, s.ready.min(), s.altWake)
	}
	return t, t != never
}
