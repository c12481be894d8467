package sched

import (
	"fmt"
	"math"
	"math/rand/v2"
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
// deterministically for a seed: exponential gaps at the total rate, each
// arrival's model drawn in proportion to the streams' rates (Walker's alias
// method, O(1) per draw). Request ids count from 1.
type PoissonSource struct {
	rng    *rand.Rand
	total  float64  // requests per ns
	prob   []uint64 // alias table: keep i when the low 32 bits are below prob[i]
	alias  []int32
	models []ModelID
	slos   []time.Duration
	t      float64 // ns
	n, max uint64
}

// NewPoissonSource returns a source of count requests from streams.
func NewPoissonSource(streams []Stream, count uint64, seed uint64) (*PoissonSource, error) {
	if len(streams) == 0 || len(streams) > MaxModels {
		return nil, fmt.Errorf("new poisson source: %w: %d streams", ErrBadConfig, len(streams))
	}
	p := &PoissonSource{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), max: count}
	rates := make([]float64, len(streams))
	for i, st := range streams {
		if !(st.Rate > 0) || math.IsInf(st.Rate, 0) || st.SLO <= 0 {
			return nil, fmt.Errorf("new poisson source: %w: model %d rate %v slo %v", ErrBadConfig, st.Model, st.Rate, st.SLO)
		}
		rates[i] = st.Rate
		p.total += st.Rate / 1e9
		p.models = append(p.models, st.Model)
		p.slos = append(p.slos, st.SLO)
	}
	p.prob, p.alias = aliasTable(rates)
	return p, nil
}

// aliasTable builds Walker's alias table for weights w (Vose's method).
func aliasTable(w []float64) (prob []uint64, alias []int32) {
	n := len(w)
	var sum float64
	for _, v := range w {
		sum += v
	}
	scaled := make([]float64, n)
	var small, large []int32
	for i, v := range w {
		scaled[i] = v / sum * float64(n)
		if scaled[i] < 1 {
			small = append(small, int32(i))
		} else {
			large = append(large, int32(i))
		}
	}
	prob = make([]uint64, n)
	alias = make([]int32, n)
	for len(small) > 0 && len(large) > 0 {
		s, l := small[len(small)-1], large[len(large)-1]
		small = small[:len(small)-1]
		prob[s] = uint64(scaled[s] * (1 << 32))
		alias[s] = l
		scaled[l] -= 1 - scaled[s]
		if scaled[l] < 1 {
			large = large[:len(large)-1]
			small = append(small, l)
		}
	}
	for _, i := range append(small, large...) { // leftovers are 1 up to rounding
		prob[i] = 1 << 32
		alias[i] = i
	}
	return prob, alias
}

// Next returns the next arrival.
func (p *PoissonSource) Next() (Request, bool) {
	if p.n >= p.max {
		return Request{}, false
	}
	p.n++
	p.t += p.rng.ExpFloat64() / p.total
	i := 0
	if n := len(p.prob); n > 1 {
		x := p.rng.Uint64()
		i = int(((x >> 32) * uint64(n)) >> 32)
		if x&(1<<32-1) >= p.prob[i] {
			i = int(p.alias[i])
		}
	}
	at := time.Duration(p.t)
	return Request{ID: p.n, Model: p.models[i], Arrival: at, Deadline: at + p.slos[i]}, true
}
