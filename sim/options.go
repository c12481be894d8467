package sim

import (
	"errors"
	"fmt"
	"time"

	"github.com/gpulet/gpuletd/control"
	emu "github.com/gpulet/gpuletd/executor/engine"
	"github.com/gpulet/gpuletd/executor/sched"
	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/sim/workload"
	"go.uber.org/zap"
)

// ErrBadOptions is returned for options no simulation can run with.
var ErrBadOptions = errors.New("bad simulation options")

// Defaults of a simulation.
const (
	// DefaultDuration is the offered time when neither the options nor the
	// workload give one.
	DefaultDuration = 60 * time.Second
	// DefaultInterval is the width of the time series' buckets (GPU busy
	// fraction, gpu-let sizes in use).
	DefaultInterval = time.Second
	// DefaultWindow is the width of the SLO-violation windows: the gpu-let
	// paper's Figure 14 reports violations per 20 s.
	DefaultWindow = 20 * time.Second
	// DefaultEWMAWeight is the weight of the newest period in a model's
	// rate estimate: the daemon's default scheduler.ewma_weight.
	DefaultEWMAWeight = 0.5
)

// Options tune a simulation. Zero values take the workload's settings or the
// defaults above.
type Options struct {
	// Policy overrides the workload's scheduling policy (sched.ParsePolicy).
	Policy string
	// Algo overrides the workload's planner.
	Algo string
	// Seed overrides the workload's seed when not 0.
	Seed uint64
	// Duration overrides the workload's offered time when not 0.
	Duration time.Duration
	// JitterCV is the coefficient of variation of every batch's time: a
	// lognormal factor of mean 1 drawn per batch; 0 means the emulated
	// engine's default (emu.DefaultJitterCV), negative means none.
	JitterCV float64
	// Headroom is the extra share of rate planned over the estimate; 0
	// means control.Headroom (the daemon's), negative means none.
	Headroom float64
	// EWMAWeight is the newest period's weight in the rate estimate; 0
	// means DefaultEWMAWeight.
	EWMAWeight float64
	// Margin widens every executor's ℓ(b) by this share (0.06: 6% longer)
	// on top of the calibration. The executor has no such margin; the
	// option measures what one would change.
	Margin float64
	// NoBatchCap lets a model on a gpu-let that several models share run
	// batches of its profile's whole range instead of the plan's batch for
	// it (the batch the planner's duty cycle was checked with), which is
	// where the daemon caps them; the option measures what the cap changes.
	NoBatchCap bool
	// NoCalibration keeps every executor's ℓ(b) as planned instead of
	// following measured batch times as the executor does.
	NoCalibration bool
	// Interval is the time series' bucket width; 0 means DefaultInterval.
	Interval time.Duration
	// Window is the width of the SLO-violation windows; 0 means
	// DefaultWindow.
	Window time.Duration
	// Plan, when set, is the plan the node runs from the start instead of
	// the planner's, and the node never re-plans (Everywhere builds one).
	Plan *gpulet.Plan
	// Logger receives the plan changes at debug level; nil logs nothing.
	Logger *zap.Logger

	// observer sees every request's fate (tests).
	observer observer
}

// observer is told about every request: when it arrives and how it is
// answered.
type observer interface {
	arrived(r sched.Request)
	served(r sched.Request, let int, start, end time.Duration)
	rejected(r sched.Request, why sched.Reason)
	dispatched(let int, at time.Duration, b sched.Batch)
}

// settings are the options resolved against the workload.
type settings struct {
	policy     sched.Policy
	algo       gpulet.Algo
	seed       uint64
	duration   time.Duration
	jitterCV   float64
	headroom   float64
	ewma       float64
	calibrate  bool
	margin     float64
	capShared  bool
	interval   time.Duration
	window     time.Duration
	reorganize time.Duration
	startup    time.Duration
	plan       *gpulet.Plan
	log        *zap.Logger
	obs        observer
}

func resolve(w *workload.Workload, o Options) (settings, error) {
	s := settings{calibrate: !o.NoCalibration, margin: o.Margin, capShared: !o.NoBatchCap, plan: o.Plan, obs: o.observer, log: o.Logger}
	if s.log == nil {
		s.log = zap.NewNop()
	}
	pol := o.Policy
	if pol == "" {
		pol = w.Policy
	}
	p, err := sched.ParsePolicy(pol)
	if err != nil {
		return s, fmt.Errorf("resolve options: %w", err)
	}
	s.policy = p
	if s.algo, err = w.PlannerAlgo(o.Algo); err != nil {
		return s, fmt.Errorf("resolve options: %w", err)
	}
	s.seed = w.Seed
	if o.Seed != 0 {
		s.seed = o.Seed
	}
	s.duration = w.Duration.Std()
	if o.Duration != 0 {
		s.duration = o.Duration
	}
	if s.duration == 0 {
		s.duration = DefaultDuration
	}
	s.jitterCV = pick(o.JitterCV, emu.DefaultJitterCV)
	s.headroom = pick(o.Headroom, control.Headroom)
	s.ewma = o.EWMAWeight
	if s.ewma == 0 {
		s.ewma = DefaultEWMAWeight
	}
	s.interval, s.window = o.Interval, o.Window
	if s.interval == 0 {
		s.interval = DefaultInterval
	}
	if s.window == 0 {
		s.window = DefaultWindow
	}
	s.reorganize, s.startup = w.ReorganizePeriod(), w.StartupDelay()
	if s.plan != nil {
		s.reorganize = 0
	}
	switch {
	case s.margin < 0 || s.margin > 10:
		return s, fmt.Errorf("resolve options: %w: margin %v outside [0, 10]", ErrBadOptions, s.margin)
	case s.duration < 0:
		return s, fmt.Errorf("resolve options: %w: duration %v", ErrBadOptions, s.duration)
	case s.ewma < 0 || s.ewma > 1:
		return s, fmt.Errorf("resolve options: %w: EWMA weight %v outside (0, 1]", ErrBadOptions, s.ewma)
	case s.interval < 0 || s.window < 0:
		return s, fmt.Errorf("resolve options: %w: interval %v, window %v", ErrBadOptions, s.interval, s.window)
	case s.duration/s.interval > maxBuckets || s.duration/s.window > maxBuckets:
		return s, fmt.Errorf("resolve options: %w: more than %d buckets of %v or windows of %v in %v", ErrBadOptions, maxBuckets, s.interval, s.window, s.duration)
	}
	return s, nil
}

// maxBuckets bounds the time series' length.
const maxBuckets = 1 << 20

// pick is v, or def when v is 0, or 0 when v is negative.
func pick(v, def float64) float64 {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}
