package sched

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"time"
)

// Source yields requests in arrival order; ok is false when it is exhausted.
type Source interface {
	Next() (r Request, ok bool)
}

// SliceSource yields the requests of a slice, in order.
type SliceSource struct {
	reqs []Request
	i    int
}

// NewSliceSource returns a Source over reqs (not copied).
func NewSliceSource(reqs []Request) *SliceSource { return &SliceSource{reqs: reqs} }

// Next returns the next request.
func (s *SliceSource) Next() (Request, bool) {
	if s.i >= len(s.reqs) {
		return Request{}, false
	}
	s.i++
	return s.reqs[s.i-1], true
}

// Stream is one model's request stream for PoissonSource.
type Stream struct {
	Model ModelID
	// Rate is the mean arrival rate in requests per second.
	Rate float64
	// SLO is added to the arrival to make the deadline.
	SLO time.Duration
}

// PoissonSource yields the superposition of independent Poisson streams,
// deterministically for a seed. Request ids count from 1.
type PoissonSource struct {
	rng    *rand.Rand
	cum    []float64 // cumulative rates, requests per ns
	total  float64
	models []ModelID
	slos   []time.Duration
	t      float64 // ns
	n, max uint64
}

// NewPoissonSource returns a source of count requests from streams.
func NewPoissonSource(streams []Stream, count uint64, seed uint64) (*PoissonSource, error) {
	if len(streams) == 0 {
		return nil, fmt.Errorf("new poisson source: %w: no streams", ErrBadConfig)
	}
	p := &PoissonSource{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), max: count}
	for _, st := range streams {
		if !(st.Rate > 0) || math.IsInf(st.Rate, 0) || st.SLO <= 0 {
			return nil, fmt.Errorf("new poisson source: %w: model %d rate %v slo %v", ErrBadConfig, st.Model, st.Rate, st.SLO)
		}
		p.total += st.Rate / 1e9
		p.cum = append(p.cum, p.total)
		p.models = append(p.models, st.Model)
		p.slos = append(p.slos, st.SLO)
	}
	return p, nil
}

// Next returns the next arrival.
func (p *PoissonSource) Next() (Request, bool) {
	if p.n >= p.max {
		return Request{}, false
	}
	p.n++
	p.t += p.rng.ExpFloat64() / p.total
	i := 0
	if len(p.cum) > 1 {
		u := p.rng.Float64() * p.total
		i = sort.SearchFloat64s(p.cum, u)
		if i == len(p.cum) {
			i--
		}
	}
	at := time.Duration(p.t)
	return Request{ID: p.n, Model: p.models[i], Arrival: at, Deadline: at + p.slos[i]}, true
}
