package planbench

import (
	"fmt"

	"github.com/gpulet/gpuletd/gpulet"
)

// SyntheticLoad is the share of the node's GPUs the synthetic workloads
// fill: each model's rate is its share of SyntheticLoad × GPUs whole GPUs
// at its affordable rate on a whole GPU, so the planners have to both
// split rates and share gpu-lets in time.
const SyntheticLoad = 0.7

// Synthetic builds a workload of k models on g GPUs of the node's device
// type from the node's profiles: model i is the node's model i mod M with
// every latency of its profile scaled by s_i = 0.6 + 0.8·i/(k−1) (0.6 to
// 1.4 times as slow, so no two models are alike) and its SLO scaled alike;
// utilisation and memory are the original's. Every model's rate is
// SyntheticLoad·g/k of what a whole GPU affords it.
func (n *Node) Synthetic(k, g int) (gpulet.Input, error) {
	if k < 1 || g < 1 {
		return gpulet.Input{}, fmt.Errorf("synthesise %d models on %d GPUs: %w", k, g, ErrBadArgs)
	}
	var in gpulet.Input
	for i := range g {
		in.GPUs = append(in.GPUs, GPUOf(n.Set, fmt.Sprintf("gpu%d", i)))
	}
	for i := range k {
		base := n.Models[i%len(n.Models)]
		s := 0.6
		if k > 1 {
			s += 0.8 * float64(i) / float64(k-1)
		}
		p, err := scaled(base.Profile, fmt.Sprintf("%s-x%02d", base.Name, i), s)
		if err != nil {
			return gpulet.Input{}, err
		}
		slo := base.SLOMS * s
		rate, _, ok := gpulet.AffordableRate(p, slo, 100)
		if !ok {
			return gpulet.Input{}, fmt.Errorf("synthesise model %d: %w: no rate on a whole GPU", i, gpulet.ErrNoProfile)
		}
		in.Demands = append(in.Demands, gpulet.Demand{Name: p.Model, Profile: p, SLOMS: slo, Rate: rate * SyntheticLoad * float64(g) / float64(k)})
	}
	return in, nil
}

// scaled copies a profile under a new model name with every latency times s.
func scaled(p *gpulet.Profile, name string, s float64) (*gpulet.Profile, error) {
	pts := p.Points()
	for i := range pts {
		pts[i].P50MS *= s
		pts[i].P99MS *= s
	}
	return gpulet.NewProfile(name, p.DeviceType, p.MemoryMB, pts)
}
