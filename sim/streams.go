package sim

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/gpulet/gpuletd/sim/arrival"
	"github.com/gpulet/gpuletd/sim/workload"
)

// step is a model's rate from a moment on.
type step struct {
	at   float64 // seconds
	rate float64 // requests/s
}

// source is what a stream draws arrivals for: a model, or a pipeline's
// first task.
type source struct {
	name    string
	rate    float64
	arrival string
}

// sources are the workload's models, then its pipelines: stream i serves
// source i.
func sources(w *workload.Workload) []source {
	var out []source
	for _, m := range w.Models {
		out = append(out, source{m.Name, m.Rate, m.Arrival})
	}
	for _, p := range w.Pipelines {
		out = append(out, source{p.PipelineName(), p.Rate, p.Arrival})
	}
	return out
}

// rateSteps is a source's rate over time: its rate, then each phase that
// names it.
func rateSteps(w *workload.Workload, src source) []step {
	steps := []step{{at: 0, rate: src.rate}}
	for _, p := range w.Phases {
		r, ok := p.Rates[src.name]
		if !ok {
			continue
		}
		at := p.At.Std().Seconds()
		if at == 0 {
			steps[0].rate = r
			continue
		}
		steps = append(steps, step{at: at, rate: r})
	}
	return steps
}

// stream is one model's arrivals: the gaps of its arrival process, drawn at
// a nominal rate, laid out in time by the rate steps (a time change: a gap
// of g seconds at the nominal rate ν takes g·ν/r seconds while the rate is
// r, and waits through stretches where the rate is 0), so a Poisson process
// stays Poisson and a trace keeps its shape at every rate.
type stream struct {
	model   int
	arr     arrival.Arrivals
	nominal float64
	steps   []step
	k       int     // current step
	t       float64 // last arrival, seconds
	next    time.Duration
	done    bool
}

// newStream builds source i's stream (sources); traces holds the traces read
// so far by path, shared the number of sources replaying each. A trace
// replayed by several sources starts, for each, at a point drawn from its
// seed, so that their bursts do not coincide; one alone replays it from the
// start.
func newStream(w *workload.Workload, i int, seed uint64, traces map[string]*arrival.Trace, shared map[string]int) (*stream, error) {
	m := sources(w)[i]
	spec := arrival.Spec{Kind: arrival.KindPoisson}
	if m.arrival != "" {
		s, err := arrival.Parse(m.arrival)
		if err != nil {
			return nil, fmt.Errorf("model %s: %w", m.name, err)
		}
		spec = s
	}
	var tr *arrival.Trace
	if spec.Kind == arrival.KindTrace {
		path := spec.Path
		if !filepath.IsAbs(path) && w.Dir != "" {
			path = filepath.Join(w.Dir, path)
		}
		key := path
		if spec.Intervals { // the same file read the other way is another trace
			key = "intervals:" + path
		}
		if tr = traces[key]; tr == nil {
			t, err := readTrace(spec, path)
			if err != nil {
				return nil, fmt.Errorf("model %s: %w", m.name, err)
			}
			traces[key], tr = t, t
		}
	}
	skip := 0
	if tr != nil && shared[spec.Path] > 1 {
		skip = int(seed % uint64(tr.Len()))
	}
	steps := rateSteps(w, m)
	nominal := 0.0
	for _, s := range steps {
		nominal = max(nominal, s.rate)
	}
	st := &stream{model: i, steps: steps}
	if spec.Kind == arrival.KindTrace && spec.Scale > 0 {
		// The trace's own rate times the scale; the model's rates, when
		// given, scale it over time relative to the first.
		arr, err := spec.New(0, seed, tr)
		if err != nil {
			return nil, fmt.Errorf("model %s: %w", m.name, err)
		}
		st.arr, st.nominal = arr, arr.Rate()
		for range skip {
			arr.Next()
		}
		if r0 := steps[0].rate; r0 > 0 {
			for k := range st.steps {
				st.steps[k].rate *= st.nominal / r0
			}
		} else {
			st.steps = []step{{at: 0, rate: st.nominal}}
		}
		return st, nil
	}
	if nominal == 0 {
		st.done = true
		return st, nil
	}
	arr, err := spec.New(nominal, seed, tr)
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", m.name, err)
	}
	st.arr, st.nominal = arr, nominal
	for range skip {
		arr.Next()
	}
	return st, nil
}

// traceUsers counts the sources replaying each trace spec path.
func traceUsers(w *workload.Workload) map[string]int {
	n := map[string]int{}
	for _, m := range sources(w) {
		if s, err := arrival.Parse(m.arrival); err == nil && s.Kind == arrival.KindTrace {
			n[s.Path]++
		}
	}
	return n
}

func readTrace(spec arrival.Spec, path string) (*arrival.Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read trace: %w", err)
	}
	defer f.Close()
	t, err := spec.ReadTrace(f)
	if err != nil {
		return nil, fmt.Errorf("read trace %s: %w", path, err)
	}
	return t, nil
}

// advance draws the next arrival; done is set when there is none before
// limit (seconds).
func (s *stream) advance(limit float64) {
	if s.done {
		return
	}
	u := s.arr.Next().Seconds() * s.nominal // the gap in units of mean gaps at the nominal rate
	t := s.t
	for {
		end := math.Inf(1)
		if s.k+1 < len(s.steps) {
			end = s.steps[s.k+1].at
		}
		if r := s.steps[s.k].rate; r > 0 {
			if need := u / r; t+need <= end {
				t += need
				break
			}
			u -= (end - t) * r
		}
		if math.IsInf(end, 1) || end >= limit {
			s.done = true
			return
		}
		t = end
		s.k++
	}
	if t >= limit {
		s.done = true
		return
	}
	s.t = t
	s.next = time.Duration(math.Round(t * 1e9))
}

// arrivals merges the models' streams in time order; ties go to the lower
// model index.
type arrivals struct {
	h     []*stream
	limit float64
}

func newArrivals(streams []*stream, limit time.Duration) *arrivals {
	a := &arrivals{limit: limit.Seconds()}
	for _, s := range streams {
		s.advance(a.limit)
		if !s.done {
			a.h = append(a.h, s)
			a.up(len(a.h) - 1)
		}
	}
	return a
}

// peek returns the next arrival's time and model; ok is false when none is
// left.
func (a *arrivals) peek() (at time.Duration, model int, ok bool) {
	if len(a.h) == 0 {
		return never, -1, false
	}
	return a.h[0].next, a.h[0].model, true
}

// pop moves past the next arrival.
func (a *arrivals) pop() {
	s := a.h[0]
	s.advance(a.limit)
	if s.done {
		last := len(a.h) - 1
		a.h[0] = a.h[last]
		a.h = a.h[:last]
	}
	if len(a.h) > 0 {
		a.down(0)
	}
}

func (a *arrivals) less(i, j int) bool {
	x, y := a.h[i], a.h[j]
	return x.next < y.next || (x.next == y.next && x.model < y.model)
}

func (a *arrivals) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !a.less(i, p) {
			return
		}
		a.h[i], a.h[p] = a.h[p], a.h[i]
		i = p
	}
}

func (a *arrivals) down(i int) {
	n := len(a.h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && a.less(r, l) {
			m = r
		}
		if !a.less(m, i) {
			return
		}
		a.h[i], a.h[m] = a.h[m], a.h[i]
		i = m
	}
}
