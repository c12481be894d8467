package sched

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// DefaultLambda is FLEX's preemption threshold: a queued batch preempts the
// running one when it is at least this many times larger. SHEPHERD §5.2,
// Theorem 5.2 derives λ ≈ 3.03 as the value that minimises the competitive
// ratio.
const DefaultLambda = 3.03

// Policy is a batch scheduling policy. The set is closed: Deferred, Eager,
// Timeout and Flex; ParsePolicy selects one by name and String gives that name
// back.
type Policy interface {
	// String is the policy's name in the form ParsePolicy reads.
	String() string
	spec() policySpec
}

type policyKind uint8

const (
	kindDeferred policyKind = iota
	kindEager
	kindTimeout
	kindFlex
)

// policySpec is a policy flattened for the hot path: a switch on kind instead
// of an interface call per request.
type policySpec struct {
	kind    policyKind
	timeout time.Duration
	preempt bool
	lambda  float64
	// guard is the deferred policy's shared-gpu-let rule (guard.go).
	guard guardMode
	// drop is the batch-gathering rule (window.go).
	drop dropRule
	// gain makes the deferred policy wait only where waiting gains (gain.go).
	gain bool
}

// Deferred is Symphony's deferred batch scheduling (the default): a model's
// batch becomes dispatchable at its frontrun d − ℓ(|B|+1), and among
// dispatchable batches the smallest latest moment d − ℓ(|B|) goes first
// (Symphony §3.1, Algorithm 1). Three additions, each on by default and each
// measured in docs/BENCHMARKS.md:
//
//   - deferral only with gain (gain.go): a batch of n waits for more only
//     while one more request lowers the per-request cost ℓ(b)/b by at least
//     MinDeferralGain; otherwise it is dispatchable at once, as waiting would
//     buy nothing but the risk of colliding with the next burst;
//   - shared gpu-lets (guard.go): while two or more models have requests
//     queued, the gpu-let does not idle; it dispatches the batch with the
//     smallest latest moment among them. A batch waits for its frontrun only
//     while its model is the only one with requests queued, so one model per
//     gpu-let behaves exactly as Algorithm 1;
//   - head dropping (window.go): when serving the queue from its head, batch
//     after batch, would itself lose some of the queued requests (overload),
//     the batch is the window of the deadline-ordered queue that serves the
//     most requests per unit of gpu time, and the requests passed over at the
//     head, none of which could finish after it, are dropped at once
//     (Dropped; Symphony §3.2 on GETBATCH, after Nexus). Goodput then stays
//     flat beyond the capacity instead of collapsing.
type Deferred struct {
	// Solo turns the shared-gpu-let rule off: every batch waits for its
	// frontrun even while other models' requests wait, as Algorithm 1 with a
	// sub-cluster of GPUs per model would.
	Solo bool
	// HeadOnly turns head dropping off: every batch is the largest prefix of
	// the queue that meets its head's deadline (GETBATCH from the head).
	HeadOnly bool
	// Always defers every batch to its frontrun, whatever one more request
	// would gain (Algorithm 1 as written).
	Always bool
}

// Eager dispatches whenever the gpu-let is free: the largest feasible batch of
// the model whose head has the earliest deadline.
type Eager struct{}

// Timeout dispatches a batch when the gpu-let is free and either K has passed
// since the earliest arrival in the forming batch or the batch cannot grow any
// more (it holds MaxBatch requests, or one more would miss the deadline).
// K = 0 behaves like Eager except that the batch with the smallest latest
// moment goes first.
type Timeout struct {
	K time.Duration
}

// Flex is SHEPHERD's FLEX: when the gpu-let is free the largest feasible batch
// across all models goes first. With Preempt, an arrival that makes a model's
// feasible batch at least Lambda times larger than the running batch preempts
// it; the preempted requests go back to their queue (as SHEPHERD does) or, if
// they can no longer finish even alone, are rejected with Preempted.
type Flex struct {
	Preempt bool
	// Lambda is the preemption threshold; 0 means DefaultLambda. It must be
	// greater than 1.
	Lambda float64
}

// String returns "deferred", followed by the options set, as
// ":solo,headonly,always".
func (p Deferred) String() string {
	var opts []string
	for _, o := range []struct {
		on   bool
		name string
	}{{p.Solo, "solo"}, {p.HeadOnly, "headonly"}, {p.Always, "always"}} {
		if o.on {
			opts = append(opts, o.name)
		}
	}
	if len(opts) == 0 {
		return "deferred"
	}
	return "deferred:" + strings.Join(opts, ",")
}

func (p Deferred) spec() policySpec {
	s := policySpec{kind: kindDeferred, guard: guardBusy, drop: dropPlan, gain: !p.Always}
	if p.Solo {
		s.guard = guardOff
	}
	if p.HeadOnly {
		s.drop = dropNone
	}
	return s
}

// String returns "eager".
func (Eager) String() string   { return "eager" }
func (Eager) spec() policySpec { return policySpec{kind: kindEager} }

// String returns "timeout:<K>", K as time.Duration prints it.
func (p Timeout) String() string   { return "timeout:" + p.K.String() }
func (p Timeout) spec() policySpec { return policySpec{kind: kindTimeout, timeout: p.K} }

// String returns "flex", "flex:nopreempt" or "flex:lambda=<λ>".
func (p Flex) String() string {
	l := p.lambda()
	switch {
	case !p.Preempt:
		return "flex:nopreempt"
	case l == DefaultLambda:
		return "flex"
	}
	return "flex:lambda=" + strconv.FormatFloat(l, 'g', -1, 64)
}

func (p Flex) lambda() float64 {
	if p.Lambda == 0 {
		return DefaultLambda
	}
	return p.Lambda
}

func (p Flex) spec() policySpec {
	return policySpec{kind: kindFlex, preempt: p.Preempt, lambda: p.lambda()}
}

// validate reports whether a policy value can be used.
func validate(p Policy) error {
	switch p := p.(type) {
	case Timeout:
		if p.K < 0 {
			return fmt.Errorf("check policy %s: %w: timeout is negative", p, ErrBadPolicy)
		}
	case Flex:
		if l := p.lambda(); !(l > 1) || math.IsInf(l, 0) {
			return fmt.Errorf("check policy flex: %w: lambda %v must be a finite number above 1", ErrBadPolicy, p.Lambda)
		}
	}
	return nil
}

// ParsePolicy reads a policy name:
//
//	deferred                 (also the empty string)
//	deferred:<opts>          opts a comma-separated list of solo, headonly
//	                         (Deferred's fields; both: Symphony's Algorithm 1
//	                         as published)
//	eager
//	timeout:<duration>       e.g. timeout:2ms, timeout:0
//	flex                     preemption on, λ = 3.03
//	flex:nopreempt           preemption off
//	flex:lambda=<λ>          preemption on with another threshold (λ > 1)
func ParsePolicy(s string) (Policy, error) {
	name, arg, hasArg := strings.Cut(strings.TrimSpace(s), ":")
	switch {
	case name == "" && !hasArg, name == "deferred" && !hasArg:
		return Deferred{}, nil
	case name == "deferred":
		var p Deferred
		for _, o := range strings.Split(arg, ",") {
			switch o {
			case "solo":
				p.Solo = true
			case "headonly":
				p.HeadOnly = true
			case "always":
				p.Always = true
			default:
				return nil, fmt.Errorf("parse policy %q: %w: deferred takes solo, headonly and always", s, ErrBadPolicy)
			}
		}
		return p, nil
	case name == "eager" && !hasArg:
		return Eager{}, nil
	case name == "timeout":
		if !hasArg || arg == "" {
			return nil, fmt.Errorf("parse policy %q: %w: timeout needs a duration, e.g. timeout:2ms", s, ErrBadPolicy)
		}
		k, err := time.ParseDuration(arg)
		if err != nil {
			return nil, fmt.Errorf("parse policy %q: %w: %v", s, ErrBadPolicy, err)
		}
		p := Timeout{K: k}
		return p, validate(p)
	case name == "flex":
		p := Flex{Preempt: true}
		if !hasArg {
			return p, nil
		}
		switch {
		case arg == "nopreempt":
			p.Preempt = false
		case arg == "preempt":
		case strings.HasPrefix(arg, "lambda="):
			l, err := strconv.ParseFloat(strings.TrimPrefix(arg, "lambda="), 64)
			if err != nil {
				return nil, fmt.Errorf("parse policy %q: %w: lambda: %v", s, ErrBadPolicy, err)
			}
			p.Lambda = l
			if err := validate(p); err != nil {
				return nil, fmt.Errorf("parse policy %q: %w", s, err)
			}
		default:
			return nil, fmt.Errorf("parse policy %q: %w: flex takes nopreempt, preempt or lambda=<λ>", s, ErrBadPolicy)
		}
		return p, nil
	}
	return nil, fmt.Errorf("parse policy %q: %w: want deferred[:solo,headonly], eager, timeout:<duration> or flex[:nopreempt|:lambda=<λ>]", s, ErrBadPolicy)
}
