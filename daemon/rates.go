package daemon

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gpulet/gpuletd/control"
)

// rateMeter counts each model's requests and keeps an EWMA of its rate per
// planning period, plus a short window to notice surges between periods.
// Its windows are the node's (control.Window), as the simulator's are.
type rateMeter struct {
	mu     sync.Mutex
	weight float64
	models map[string]*modelRate
	start  time.Time      // the windows' clock starts here
	period control.Window // the reorganize period
	short  control.Window // the surge check's
}

type modelRate struct {
	count   atomic.Int64 // requests since the last period closed
	short   atomic.Int64 // requests since the last short window closed
	est     control.Estimate
	shortHz float64 // rate over the last short window
	// cached counts the requests taken back by unhit (answered from the
	// response cache) since the last short window closed; cachedHz is
	// their rate over the last short window.
	cached   atomic.Int64
	cachedHz float64
}

// newRateMeter starts a meter's windows at start.
func newRateMeter(weight float64, start time.Time) *rateMeter {
	return &rateMeter{weight: weight, models: map[string]*modelRate{}, start: start}
}

func (r *rateMeter) get(model string) *modelRate {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.models[model]
	if m == nil {
		m = &modelRate{}
		r.models[model] = m
	}
	return m
}

// hit counts one request.
func (r *rateMeter) hit(model string) {
	m := r.get(model)
	m.count.Add(1)
	m.short.Add(1)
}

// unhit takes back a request counted by hit that asked nothing of a
// gpu-let (a response cache hit): the planner plans for the others.
func (r *rateMeter) unhit(model string) {
	m := r.get(model)
	m.count.Add(-1)
	m.short.Add(-1)
	m.cached.Add(1)
}

// closePeriod folds the requests since the last call into each model's
// EWMA and returns the estimates and each model's own rate over the period
// it closed (requests/s); the latter is empty when no time has passed.
func (r *rateMeter) closePeriod(now time.Time) (estimates, period map[string]float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	dt := r.period.Close(now.Sub(r.start))
	estimates, period = map[string]float64{}, map[string]float64{}
	for name, m := range r.models {
		if dt <= 0 {
			estimates[name] = m.est.Rate
			continue
		}
		period[name] = max(float64(m.count.Swap(0)), 0) / dt // a cache hit taken back after the period closed
		estimates[name] = m.est.Fold(period[name], r.weight)
	}
	return estimates, period
}

// closeShort measures each model's rate over the short window since the
// last call.
func (r *rateMeter) closeShort(now time.Time) map[string]float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	dt := r.short.Close(now.Sub(r.start))
	out := map[string]float64{}
	for name, m := range r.models {
		if dt > 0 {
			m.shortHz = max(float64(m.short.Swap(0)), 0) / dt
			m.cachedHz = float64(m.cached.Swap(0)) / dt
		}
		out[name] = m.shortHz
	}
	return out
}

// estimates returns the current EWMA per model.
func (r *rateMeter) estimates() map[string]float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]float64{}
	for name, m := range r.models {
		if !math.IsNaN(m.est.Rate) {
			out[name] = m.est.Rate
		}
	}
	return out
}

// setWeight changes the EWMA weight of later periods.
func (r *rateMeter) setWeight(w float64) {
	r.mu.Lock()
	r.weight = w
	r.mu.Unlock()
}

// cachedRate is a model's rate of requests answered from the response
// cache over the last short window, which current leaves out.
func (r *rateMeter) cachedRate(model string) float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if m := r.models[model]; m != nil {
		return m.cachedHz
	}
	return 0
}

// current returns each model's rate over the last short window.
func (r *rateMeter) current() map[string]float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]float64{}
	for name, m := range r.models {
		out[name] = m.shortHz
	}
	return out
}
