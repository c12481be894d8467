package interference

import (
	"fmt"
	"math/rand/v2"
)

// synthSide builds a side with the given utilisations and a solo latency.
func synthSide(model string, b, p int, l2, dram, soloMS float64) Side {
	return Side{Model: model, Batch: b, Size: p, Util: Util{SM: 50, L2: l2, DRAM: dram}, SoloMS: soloMS, Batch1MS: soloMS / float64(b), SerialMS: soloMS / 4}
}

// synthSamples builds n measured pairs among four models whose factor
// follows factor(self, other) exactly.
func synthSamples(n int, seed uint64, factor func(Sample) float64) []Sample {
	r := rand.New(rand.NewPCG(seed, 7))
	models := []string{"m0", "m1", "m2", "m3"}
	sizes := []int{20, 40, 50, 60, 80}
	var out []Sample
	for i := range n {
		ia := r.IntN(4)
		ib := (ia + 1 + r.IntN(3)) % 4
		p := sizes[r.IntN(len(sizes))]
		a := synthSide(models[ia], 1<<r.IntN(6), p, 5+25*r.Float64(), 5+50*r.Float64(), 1+30*r.Float64())
		b := synthSide(models[ib], 1<<r.IntN(6), 100-p, 5+25*r.Float64(), 5+50*r.Float64(), 1+30*r.Float64())
		sa := Sample{Self: a, Other: b}
		sb := Sample{Self: b, Other: a}
		ps := PairSamples(a, b, a.SoloMS*factor(sa), b.SoloMS*factor(sb), i)
		out = append(out, ps[0], ps[1])
	}
	return out
}

// paperTruth is a known paper-form factor: 1 + 0.004·l2₁ + 0.002·l2₂ +
// 0.001·dram₁ + 0.003·dram₂ + 0.01.
var paperTruth = []float64{0.004, 0.002, 0.001, 0.003, 1.01}

func paperFactor(s Sample) float64 {
	return paperTruth[0]*s.Self.Util.L2 + paperTruth[1]*s.Other.Util.L2 +
		paperTruth[2]*s.Self.Util.DRAM + paperTruth[3]*s.Other.Util.DRAM + paperTruth[4]
}

func describe(s Sample) string {
	return fmt.Sprintf("%s b=%d p=%d / %s b=%d p=%d", s.Self.Model, s.Self.Batch, s.Self.Size, s.Other.Model, s.Other.Batch, s.Other.Size)
}
