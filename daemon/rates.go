package daemon

import (
	"math"
	"sync"
	"time"

	"github.com/gpulet/gpuletd/control"
)

// rateMeter counts each model's requests and keeps an EWMA of its rate per
// planning period, plus a short window to notice surges between periods.
// Its windows are the node's (control.Window) and it counts with
// control.Count, as the simulator does.
type rateMeter struct {
	mu     sync.Mutex
	weight float64
	models map[string]*modelRate
	start  time.Time      // the windows' clock starts here
	period control.Window // the reorganize period
	short  control.Window // the surge check's
}

type modelRate struct {
	count   control.Count // requests in the period
	short   control.Count // requests in the short window
	est     control.Estimate
	shortHz float64 // rate over the last short window
	// early: the model's requests began too late in the last short window
	// to judge a surge on (control.Count.Close).
	early bool
	// cached counts the requests taken back by unhit (answered from the
	// response cache) since the last short window closed; cachedHz is
	// their rate over the last short window.
	cached   int64
	cachedHz float64
}

// newRateMeter starts a meter's windows at start.
func newRateMeter(weight float64, start time.Time) *rateMeter {
	return &rateMeter{weight: weight, models: map[string]*modelRate{}, start: start}
}

// get returns model's counts; r.mu is held.
func (r *rateMeter) get(model string) *modelRate {
	m := r.models[model]
	if m == nil {
		m = &modelRate{}
		r.models[model] = m
	}
	return m
}

// hit counts one request that arrived at at.
func (r *rateMeter) hit(model string, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.get(model)
	m.count.Add(at.Sub(r.start))
	m.short.Add(at.Sub(r.start))
}

// unhit takes back a request counted by hit that asked nothing of a
// gpu-let (a response cache hit): the planner plans for the others.
func (r *rateMeter) unhit(model string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.get(model)
	m.count.Remove()
	m.short.Remove()
	m.cached++
}

// closePeriod folds the requests since the last call into each model's
// EWMA and returns the estimates and each model's own rate over the period
// it closed (requests/s); the latter is empty when no time has passed.
func (r *rateMeter) closePeriod(now time.Time) (estimates, period map[string]float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	at := now.Sub(r.start)
	dt := r.period.Close(at)
	estimates, period = map[string]float64{}, map[string]float64{}
	for name, m := range r.models {
		if dt <= 0 {
			estimates[name] = m.est.Rate
			continue
		}
		period[name], _ = m.count.Close(at, dt)
		estimates[name] = m.est.Fold(period[name], r.weight)
	}
	return estimates, period
}

// closeShort measures each model's rate over the short window since the
// last call, and names the models whose requests began too late in it to
// judge a surge on.
func (r *rateMeter) closeShort(now time.Time) control.Short {
	r.mu.Lock()
	defer r.mu.Unlock()
	at := now.Sub(r.start)
	dt := r.short.Close(at)
	short, early := map[string]float64{}, map[string]bool{}
	for name, m := range r.models {
		if dt > 0 {
			var judged bool
			m.shortHz, judged = m.short.Close(at, dt)
			m.early = !judged
			m.cachedHz = float64(m.cached) / dt
			m.cached = 0
		}
		short[name] = m.shortHz
		if m.early {
			early[name] = true
		}
	}
	return control.Short{Rates: short, Early: early}
}

// estimates returns each model's rate estimate at now (control.Estimate.Now):
// its EWMA, or before its first period the rate measured so far.
func (r *rateMeter) estimates(now time.Time) map[string]float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	at := now.Sub(r.start)
	out := map[string]float64{}
	for name, m := range r.models {
		if e := m.est.Now(&m.count, at, r.period.Since(at)); !math.IsNaN(e) {
			out[name] = e
		}
	}
	return out
}

// folded returns the EWMA of each model whose periods have been folded in
// (none before its first period ends).
func (r *rateMeter) folded() map[string]float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]float64{}
	for name, m := range r.models {
		if rate, ok := m.est.Folded(); ok && !math.IsNaN(rate) {
			out[name] = rate
		}
	}
	return out
}

// retain forgets the models keep refuses: their counts and estimates.
func (r *rateMeter) retain(keep func(model string) bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for name := range r.models {
		if !keep(name) {
			delete(r.models, name)
		}
	}
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
