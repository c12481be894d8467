package interference

import "testing"

func BenchmarkFit(b *testing.B) {
	samples := synthSamples(750, 1, launchTruth) // the size of the iGniter set
	for _, spec := range []Spec{Paper(), Candidates()[len(Candidates())-1]} {
		b.Run(spec.Name, func(b *testing.B) {
			// Synthetic serial shares are constant: vary them for wide-ridge.
			for i := range samples {
				samples[i].Self.SerialMS = samples[i].Self.SoloMS * float64(1+i%5) / 10
				samples[i].Other.SerialMS = samples[i].Other.SoloMS * float64(1+(i+2)%5) / 10
			}
			for b.Loop() {
				if _, err := Fit(samples, spec); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkPredict(b *testing.B) {
	samples := synthSamples(100, 1, launchTruth)
	m, err := Fit(samples, Spec{Name: "launch", Features: []string{"fixed_self*dram_other", "log_solo_self*fixed_other", Const}, Target: TargetFactor})
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		_ = m.Predict(samples[i%len(samples)])
		i++
	}
}
