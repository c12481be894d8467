package interference

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// ErrTooFewSamples is returned when there are not more samples than
// coefficients to fit.
var ErrTooFewSamples = errors.New("too few samples")

// ErrSingular is returned when the features are collinear on the training
// samples (for example a feature that never varies).
var ErrSingular = errors.New("singular design")

// Fit fits spec to the samples by least squares (ridge-penalised when
// spec.Ridge > 0) and returns the model with its training statistics. Every
// sample must carry a measured co-located latency and finite features.
//
// Method: every non-constant feature is standardised with its training mean
// and standard deviation (centred only when the spec has an intercept), the
// penalised problem is solved as an ordinary least-squares problem on the
// design augmented with √(λn)·I rows (QR factorisation, gonum/mat), and the
// coefficients are mapped back to the raw feature units, so the stored
// coefficients apply to raw features.
func Fit(samples []Sample, spec Spec) (*Model, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	fz, _ := newFeaturizer(spec.Features)
	n, k := len(samples), len(spec.Features)
	if n <= k {
		return nil, fmt.Errorf("fit %s: %w: %d samples for %d coefficients", spec.Name, ErrTooFewSamples, n, k)
	}
	x := mat.NewDense(n, k, nil)
	y := make([]float64, n)
	row := make([]float64, k)
	minF, maxF := math.Inf(1), math.Inf(-1)
	for i, s := range samples {
		if !s.measured() {
			return nil, fmt.Errorf("fit %s: sample %d: %w: solo %v ms, co-located %v ms", spec.Name, i, ErrBadSample, s.Self.SoloMS, s.CoLocatedMS)
		}
		if err := fz.row(s, row); err != nil {
			return nil, fmt.Errorf("fit %s: sample %d: %w", spec.Name, i, err)
		}
		x.SetRow(i, row)
		f := s.Factor()
		minF, maxF = min(minF, f), max(maxF, f)
		y[i] = f
		switch spec.Target {
		case TargetLogFactor:
			y[i] = math.Log(f)
		case TargetLogSlowdown:
			y[i] = math.Log(max(f-1, minSlowdown))
		}
	}
	coef, err := solve(x, y, spec)
	if err != nil {
		return nil, err
	}
	m := &Model{
		Spec:         spec,
		Coefficients: coef,
		MinFactor:    min(1, minF),
		// Twice the largest slowdown seen: room for pairs a little harsher
		// than any measured, without letting an extrapolating linear model
		// run away.
		MaxFactor: max(1, maxF) + (max(1, maxF) - 1),
		fz:        fz,
	}
	m.Spec.Features = slices.Clone(spec.Features)
	m.Stats = trainingStats(m, samples)
	return m, nil
}

// solve returns the raw-unit coefficients of the (penalised) least-squares
// fit of y on x.
func solve(x *mat.Dense, y []float64, spec Spec) ([]float64, error) {
	n, k := x.Dims()
	constCol := slices.Index(spec.Features, Const)
	mean := make([]float64, k)
	sd := make([]float64, k)
	for j := range k {
		if j == constCol {
			sd[j] = 1
			continue
		}
		col := mat.Col(nil, j, x)
		var s, ss float64
		for _, v := range col {
			s += v
		}
		mu := s / float64(n)
		for _, v := range col {
			ss += (v - mu) * (v - mu)
		}
		sigma := math.Sqrt(ss / float64(n))
		if !(sigma > 1e-12*max(1, math.Abs(mu))) {
			return nil, fmt.Errorf("fit %s: %w: feature %s is constant (%v) over the training samples", spec.Name, ErrSingular, spec.Features[j], mu)
		}
		if constCol >= 0 {
			mean[j] = mu
		} else {
			// Without an intercept the features are only scaled: centring
			// would add an intercept the spec does not have.
			sigma = math.Sqrt(ss/float64(n) + mu*mu)
		}
		sd[j] = sigma
	}
	rows := n
	if spec.Ridge > 0 {
		rows += k
	}
	a := mat.NewDense(rows, k, nil)
	b := mat.NewVecDense(rows, nil)
	for i := range n {
		for j := range k {
			a.Set(i, j, (x.At(i, j)-mean[j])/sd[j])
		}
		b.SetVec(i, y[i])
	}
	if spec.Ridge > 0 {
		w := math.Sqrt(spec.Ridge * float64(n))
		for j := range k {
			if j != constCol {
				a.Set(n+j, j, w)
			}
		}
	}
	var qr mat.QR
	qr.Factorize(a)
	// Rank check: a diagonal of R that is tiny next to the largest means a
	// column is (nearly) a combination of the others.
	var r mat.Dense
	qr.RTo(&r)
	maxDiag := 0.0
	for j := range k {
		maxDiag = max(maxDiag, math.Abs(r.At(j, j)))
	}
	for j := range k {
		if math.Abs(r.At(j, j)) <= 1e-9*maxDiag {
			return nil, fmt.Errorf("fit %s: %w: feature %s is a combination of the others on the training samples", spec.Name, ErrSingular, spec.Features[j])
		}
	}
	var beta mat.VecDense
	if err := qr.SolveVecTo(&beta, false, b); err != nil {
		return nil, fmt.Errorf("fit %s: %w: %v", spec.Name, ErrSingular, err)
	}
	coef := make([]float64, k)
	shift := 0.0
	for j := range k {
		if j == constCol {
			continue
		}
		coef[j] = beta.AtVec(j) / sd[j]
		shift += coef[j] * mean[j]
	}
	if constCol >= 0 {
		coef[constCol] = beta.AtVec(constCol) - shift
	}
	for j, c := range coef {
		if math.IsNaN(c) || math.IsInf(c, 0) {
			return nil, fmt.Errorf("fit %s: %w: coefficient of %s is %v", spec.Name, ErrSingular, spec.Features[j], c)
		}
	}
	return coef, nil
}

// trainingStats computes r² and RMSE of the clamped predicted factor over the
// training samples.
func trainingStats(m *Model, samples []Sample) FitStats {
	var mean float64
	for _, s := range samples {
		mean += s.Factor()
	}
	mean /= float64(len(samples))
	var sse, sst float64
	for _, s := range samples {
		d := m.Predict(s) - s.Factor()
		sse += d * d
		e := s.Factor() - mean
		sst += e * e
	}
	r2 := 1.0
	if sst > 0 {
		r2 = 1 - sse/sst
	}
	return FitStats{Samples: len(samples), R2: r2, RMSE: math.Sqrt(sse / float64(len(samples)))}
}
