package gpulet

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/gpulet/gpuletd/gpulet/migrules"
	"github.com/gpulet/gpuletd/interference"
)

// env is one planning run: the validated GPUs and models and the caches the
// planners share (latency tables, interference sides and factors).
type env struct {
	gpus   []*gpuRT
	types  []string // device types of the GPUs, index = gpuRT.typ
	models []*model // valid demands with rate > 0, input order
	pred   Predictor
	margin float64

	bps   []float64 // fitLet's breakpoint buffer
	sides map[sideKey]interference.Side
	preds map[predKey]float64

	// rejected are demands that cannot be planned at all, with why.
	unsched map[string]float64
	reasons map[string]string
}

// gpuRT is a validated GPU.
type gpuRT struct {
	g     GPU
	idx   int
	typ   int
	sizes []int // allowed sizes, ascending
	max   int   // gpu-lets at most
	mig   *migrules.GPU
}

// model is a valid demand with its per-device-type tables.
type model struct {
	idx   int
	name  string
	slo   float64
	rule  Rule
	rate  float64
	mem   float64
	profs []*Profile // per type index, nil when none
	tabs  []map[int]*table
	knees []map[int]int // per type: knee memo keyed by 0 (one entry)
}

// table is L(b,size) of one model on one device type and size, indexed by
// batch, with the solo capacity of AffordableRate.
type table struct {
	lat   []float64 // lat[b], b = 1..maxB
	maxB  int
	cap   float64 // requests/s alone, under the rule (m.alone)
	capB  int
	fits1 bool // a batch of one meets the rule
}

type sideKey struct{ m, typ, b, size int }

type predKey struct {
	a, b sideKey
}

// procs is how many MPS processes run m's batch b on a gpu-let of size
// (Profile.Procs; 1 without a profile).
func (m *model) procs(typ, b, size int) int {
	if m.profs[typ] == nil {
		return 1
	}
	return m.profs[typ].Procs(b, size)
}

// tab returns the latency table of m on device type typ at size, nil when m
// has no profile there or the size is not covered.
func (m *model) tab(typ, size int) *table {
	if m.profs[typ] == nil {
		return nil
	}
	if t, ok := m.tabs[typ][size]; ok {
		return t
	}
	p := m.profs[typ]
	t := &table{lat: []float64{math.NaN()}}
	for b := 1; b <= p.MaxBatch(size); b++ {
		l, ok := p.Latency(b, size)
		if !ok {
			break
		}
		t.lat = append(t.lat, l)
		t.maxB = b
		if m.alone(l) {
			if b == 1 {
				t.fits1 = true
			}
			if r := 1000 * float64(b) / l; r > t.cap {
				t.cap, t.capB = r, b
			}
		}
	}
	if t.maxB == 0 {
		t = nil
	}
	m.tabs[typ][size] = t
	return t
}

// knee is MAXEFFICIENTPARTITION of m over the sizes of g.
func (m *model) knee(g *gpuRT) int {
	if k, ok := m.knees[g.typ][g.sizesKey()]; ok {
		return k
	}
	k := g.sizes[len(g.sizes)-1]
	pts := make([]KneePoint, len(g.sizes))
	for i, s := range g.sizes {
		pts[i].Size = s
		if t := m.tab(g.typ, s); t != nil {
			pts[i].Rate, pts[i].Batch = t.cap, t.capB
		}
	}
	if c, ok := kneeOf(pts); ok {
		k = c.Knee
	}
	m.knees[g.typ][g.sizesKey()] = k
	return k
}

// sizesKey tells GPUs of one type with different allowed sizes apart in
// the knee memo.
func (g *gpuRT) sizesKey() int {
	h := 0
	for _, s := range g.sizes {
		h = h*131 + s
	}
	return h
}

// side returns the interference side of m at (b,size) on device type typ.
func (e *env) side(m *model, typ, b, size int) (interference.Side, bool) {
	k := sideKey{m.idx, typ, b, size}
	if s, ok := e.sides[k]; ok {
		return s, true
	}
	s, err := InterferenceSide(m.profs[typ], b, size)
	if err != nil {
		return interference.Side{}, false
	}
	e.sides[k] = s
	return s, true
}

// factor is the predicted slowdown of a (model, batch, size) while b runs on
// a neighbouring gpu-let, with the planner's margin; +Inf when a side
// cannot be described.
func (e *env) factor(typ int, self *model, sb, ss int, other *model, ob, os int) float64 {
	k := predKey{sideKey{self.idx, typ, sb, ss}, sideKey{other.idx, typ, ob, os}}
	if f, ok := e.preds[k]; ok {
		return f
	}
	a, ok1 := e.side(self, typ, sb, ss)
	b, ok2 := e.side(other, typ, ob, os)
	f := math.Inf(1)
	if ok1 && ok2 {
		f = e.pred.Predict(interference.Sample{Self: a, Other: b})
		if math.IsNaN(f) || f < 1 {
			// A neighbour is never counted as a speed-up: the plan must
			// hold even if the prediction is wrong in that direction.
			f = max(1, f)
			if math.IsNaN(f) {
				f = math.Inf(1)
			}
		}
		f = 1 + (f-1)*(1+e.margin)
	}
	e.preds[k] = f
	return f
}

// newEnv validates the input. GPU problems are errors (ErrBadInput);
// demand problems become unscheduled rate with a reason.
func newEnv(in Input, opts Options) (*env, error) {
	e := &env{
		pred: opts.Interference, margin: opts.InterferenceMargin,
		sides:   map[sideKey]interference.Side{},
		preds:   map[predKey]float64{},
		unsched: map[string]float64{},
		reasons: map[string]string{},
	}
	if !(e.margin >= 0) || math.IsInf(e.margin, 0) {
		return nil, fmt.Errorf("plan: %w: interference margin %v must be a finite number ≥ 0", ErrBadInput, opts.InterferenceMargin)
	}
	if len(in.GPUs) == 0 {
		return nil, fmt.Errorf("plan: %w: no GPUs", ErrBadInput)
	}
	rule, err := ParseRule(string(opts.Rule))
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	ids := map[string]bool{}
	for i, g := range in.GPUs {
		rt, err := newGPU(g, i)
		if err != nil {
			return nil, err
		}
		if ids[g.ID] {
			return nil, fmt.Errorf("plan: %w: GPU id %q given twice", ErrBadInput, g.ID)
		}
		ids[g.ID] = true
		rt.typ = slices.Index(e.types, g.Type)
		if rt.typ < 0 {
			rt.typ = len(e.types)
			e.types = append(e.types, g.Type)
		}
		e.gpus = append(e.gpus, rt)
	}
	seen := map[string]bool{}
	for i, d := range in.Demands {
		name := d.Name
		if name == "" {
			name = fmt.Sprintf("#%d", i+1)
		}
		reject := func(rate float64, why string, args ...any) {
			e.unsched[name] += rate
			if e.reasons[name] == "" {
				e.reasons[name] = fmt.Sprintf(why, args...)
			}
		}
		switch {
		case math.IsNaN(d.Rate) || math.IsInf(d.Rate, 0) || d.Rate < 0:
			reject(0, "rate %v: must be a finite number ≥ 0", d.Rate)
			continue
		case seen[name]:
			reject(d.Rate, "model %q given twice: only the first is planned", name)
			continue
		}
		seen[name] = true
		switch {
		case d.Name == "":
			reject(d.Rate, "demand %d has no model name", i+1)
			continue
		case d.Rate == 0:
			continue
		case !(d.SLOMS > 0) || math.IsInf(d.SLOMS, 0):
			reject(d.Rate, "SLO %v ms: must be a positive finite number", d.SLOMS)
			continue
		case math.IsNaN(d.MemoryMB) || math.IsInf(d.MemoryMB, 0) || d.MemoryMB < 0:
			reject(d.Rate, "memory %v MB: must be a finite number ≥ 0", d.MemoryMB)
			continue
		}
		m := &model{idx: len(e.models), name: name, slo: d.SLOMS, rule: rule, rate: d.Rate, mem: d.MemoryMB,
			profs: make([]*Profile, len(e.types)), tabs: make([]map[int]*table, len(e.types)),
			knees: make([]map[int]int, len(e.types))}
		hasProf := false
		for _, p := range append([]*Profile{d.Profile}, d.More...) {
			if p == nil {
				continue
			}
			if t := slices.Index(e.types, p.DeviceType); t >= 0 && m.profs[t] == nil {
				m.profs[t] = p
				hasProf = true
				if m.mem == 0 {
					m.mem = p.MemoryMB
				}
			}
		}
		for t := range e.types {
			m.tabs[t] = map[int]*table{}
			m.knees[t] = map[int]int{}
		}
		if !hasProf {
			if d.Profile == nil && len(d.More) == 0 {
				reject(d.Rate, "no latency profile")
			} else {
				reject(d.Rate, "no latency profile for the GPU types of this node %v", e.types)
			}
			continue
		}
		if why := e.placeable(m); why != "" {
			reject(d.Rate, "%s", why)
			continue
		}
		e.models = append(e.models, m)
	}
	return e, nil
}

// placeable says why a model fits no gpu-let of any GPU even alone ("" when
// some gpu-let can take it).
func (e *env) placeable(m *model) string {
	best := math.Inf(1)
	memFits := false
	most := map[string]float64{} // per GPU type, the most memory a gpu-let has
	from := map[string]string{}  // and where that GPU's memory comes from
	for _, g := range e.gpus {
		if m.profs[g.typ] == nil {
			continue
		}
		for _, s := range g.sizes {
			t := m.tab(g.typ, s)
			if t == nil {
				continue
			}
			best = min(best, t.lat[1])
			if typ := e.types[g.typ]; g.letMemory(s) > most[typ] {
				most[typ], from[typ] = g.letMemory(s), g.g.MemoryFrom
			}
			if t.fits1 && m.mem <= g.letMemory(s) {
				return ""
			}
			if m.mem <= g.letMemory(s) {
				memFits = true
			}
		}
	}
	switch {
	case math.IsInf(best, 1):
		return "no profiled gpu-let size on this node's GPUs"
	case !m.alone(best):
		return fmt.Sprintf("SLO %.3g ms: no batch meets it on any gpu-let (%s; the fastest L(1,p) is %.3g ms)", m.slo, m.ruleText(), best)
	case !memFits:
		has := make([]string, 0, len(most))
		for _, typ := range slices.Sorted(maps.Keys(most)) {
			note := ""
			if from[typ] != "" {
				note = ", " + from[typ]
			}
			has = append(has, fmt.Sprintf("%s: %.0f MB%s", typ, most[typ], note))
		}
		return fmt.Sprintf("needs %.0f MB of memory for one copy, more than any gpu-let has (%s)", m.mem, strings.Join(has, ", "))
	default:
		return "no gpu-let both meets the SLO and has the memory"
	}
}
