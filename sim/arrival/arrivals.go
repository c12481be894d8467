package arrival

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Arrivals yields the gaps between consecutive arrivals of one stream.
// Implementations are not safe for concurrent use.
type Arrivals interface {
	// Next returns the time from the previous arrival to the next one.
	Next() time.Duration
	// Rate is the stream's mean rate in arrivals per second.
	Rate() float64
}

// ErrBadRate is returned for a target rate that is not a positive, finite
// number of arrivals per second.
var ErrBadRate = errors.New("bad arrival rate")

// ErrNoTrace is returned when a trace spec is used without its trace.
var ErrNoTrace = errors.New("trace spec without a trace")

// New builds the arrival stream the spec describes at the target rate
// (arrivals per second), drawing from seed. tr is the trace a KindTrace
// spec replays (read with ReadTrace from s.Path) and is ignored otherwise.
// A trace spec with a Scale ignores rate: its rate is the trace's own times
// the scale.
func (s Spec) New(rate float64, seed uint64, tr *Trace) (Arrivals, error) {
	if s.Kind == KindTrace && s.Scale > 0 {
		if tr == nil {
			return nil, fmt.Errorf("replay %s: %w", s, ErrNoTrace)
		}
		return replay(tr, tr.Rate()*s.Scale)
	}
	if !(rate > 0) || math.IsInf(rate, 0) {
		return nil, fmt.Errorf("%w: %v requests/s; give a positive rate", ErrBadRate, rate)
	}
	switch s.Kind {
	case KindPoisson:
		p, err := NewPoisson(rate, seed)
		if err != nil {
			return nil, err
		}
		return p, nil
	case KindConstant:
		c, err := NewConstant(rate)
		if err != nil {
			return nil, err
		}
		return c, nil
	case KindGamma:
		g, err := NewGamma(rate, s.Shape, seed)
		if err != nil {
			return nil, err
		}
		return g, nil
	case KindTrace:
		if tr == nil {
			return nil, fmt.Errorf("replay %s: %w", s, ErrNoTrace)
		}
		return replay(tr, rate)
	}
	return nil, fmt.Errorf("%w: unknown kind %q; %s", ErrBadSpec, s.Kind, specHelp)
}

// replay keeps a failed Replay from becoming a non-nil Arrivals.
func replay(tr *Trace, rate float64) (Arrivals, error) {
	r, err := tr.Replay(rate)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// newRand is the generator every seeded process draws from.
func newRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// seconds converts a gap in seconds to a Duration, rounding to the
// nanosecond and saturating instead of overflowing.
func seconds(s float64) time.Duration {
	ns := math.Round(s * 1e9)
	if ns >= math.MaxInt64 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(ns)
}
