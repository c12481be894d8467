package interference

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// fuzzModels are every candidate fitted on synthetic data, plus hand-built
// models with extreme coefficients for each target.
func fuzzModels(t testing.TB) []*Model {
	samples := synthSamples(120, 11, func(s Sample) float64 {
		return 1.02 + 0.002*s.Other.Util.DRAM + 0.01*s.Self.Batch1MS/s.Self.SoloMS + 0.001*s.Self.Util.L2
	})
	// Vary the serial share so the serial candidates are fittable.
	for i := range samples {
		samples[i].Self.SerialMS = samples[i].Self.SoloMS * (0.1 + 0.8*float64(i%7)/7)
		samples[i].Other.SerialMS = samples[i].Other.SoloMS * (0.1 + 0.8*float64((i+3)%7)/7)
	}
	var ms []*Model
	for _, c := range Candidates() {
		m, err := Fit(samples, c)
		require.NoError(t, err, c.Name)
		ms = append(ms, m)
	}
	for _, tgt := range []Target{TargetFactor, TargetLogFactor, TargetLogSlowdown} {
		ms = append(ms, &Model{
			Spec:         Spec{Name: "extreme-" + string(tgt), Features: []string{"l2_self*dram_other", "log_solo_self", "inv_size_other", Const}, Target: tgt},
			Coefficients: []float64{1e6, -1e8, 1e5, 1e3},
			MinFactor:    1, MaxFactor: 3,
		})
	}
	return ms
}

func checkPredict(t testing.TB, ms []*Model, s Sample) {
	for _, m := range ms {
		f := m.Predict(s)
		if math.IsNaN(f) || math.IsInf(f, 0) || f < m.MinFactor || f > m.MaxFactor {
			t.Fatalf("%s: Predict(%+v) = %v outside [%v, %v]", m.Name, s, f, m.MinFactor, m.MaxFactor)
		}
	}
}

func sampleOf(l2s, l2o, drs, dro, sms, solos, soloo, b1s, b1o, sers, sero float64, bs, bo, ps, po int) Sample {
	return Sample{
		Self:  Side{Model: "a", Batch: bs, Size: ps, Util: Util{SM: sms, L2: l2s, DRAM: drs}, SoloMS: solos, Batch1MS: b1s, SerialMS: sers},
		Other: Side{Model: "b", Batch: bo, Size: po, Util: Util{SM: sms, L2: l2o, DRAM: dro}, SoloMS: soloo, Batch1MS: b1o, SerialMS: sero},
	}
}

// FuzzPredict checks that Predict stays finite and inside its clamp range
// for any finite inputs, including zero, negative and huge ones that make
// features infinite or undefined.
func FuzzPredict(f *testing.F) {
	f.Add(10.0, 20.0, 15.0, 30.0, 50.0, 5.0, 8.0, 1.0, 2.0, 1.0, 2.0, 4, 8, 40, 60)
	f.Add(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0, 0, 0, 0)
	f.Add(-1.0, 1e308, -1e308, 1e-308, 100.0, -3.0, 1e300, 1e-300, -1e-300, 5.0, -5.0, -4, 1<<30, -100, 1000)
	ms := fuzzModels(f)
	f.Fuzz(func(t *testing.T, l2s, l2o, drs, dro, sms, solos, soloo, b1s, b1o, sers, sero float64, bs, bo, ps, po int) {
		for _, v := range []float64{l2s, l2o, drs, dro, sms, solos, soloo, b1s, b1o, sers, sero} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Skip("inputs must be finite")
			}
		}
		checkPredict(t, ms, sampleOf(l2s, l2o, drs, dro, sms, solos, soloo, b1s, b1o, sers, sero, bs, bo, ps, po))
	})
}

// TestPredictFiniteProperty runs the same property over many random finite
// inputs on every ordinary test run.
func TestPredictFiniteProperty(t *testing.T) {
	ms := fuzzModels(t)
	r := rand.New(rand.NewPCG(1, 2))
	val := func() float64 {
		switch r.IntN(5) {
		case 0:
			return 0
		case 1:
			return -r.Float64() * math.Pow(10, float64(r.IntN(300)))
		case 2:
			return r.Float64() * math.Pow(10, float64(r.IntN(300)))
		default:
			return r.Float64() * 100
		}
	}
	for range 20000 {
		checkPredict(t, ms, sampleOf(val(), val(), val(), val(), val(), val(), val(), val(), val(), val(), val(),
			r.IntN(70)-3, r.IntN(70)-3, r.IntN(120)-10, r.IntN(120)-10))
	}
}
