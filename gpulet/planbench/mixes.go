package planbench

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/gpulet/gpuletd/gpulet"
)

// MixUnit is the rate of one share in a mix, req/s: the gpu-let paper's
// Table 5 gives every model of "equal" 50 req/s (gpulet-evaluation.yaml
// scenarios), so a mix at scale 1 is Table 5's load.
const MixUnit = 50

// Mix is a composition of demands whose rates scale together.
type Mix struct {
	Name    string
	Demands []MixDemand
}

// MixDemand is one model of a mix: Share × MixUnit req/s at scale 1.
type MixDemand struct {
	Name    string // unique within the mix
	Profile *gpulet.Profile
	SLOMS   float64
	Share   float64
}

// Input is the planner input of the mix at a scale factor.
func (x Mix) Input(gpus []gpulet.GPU, scale float64) gpulet.Input {
	in := gpulet.Input{GPUs: gpus}
	for _, d := range x.Demands {
		in.Demands = append(in.Demands, gpulet.Demand{Name: d.Name, Profile: d.Profile, SLOMS: d.SLOMS, Rate: d.Share * MixUnit * scale})
	}
	return in
}

// Mix names, in report order.
const (
	MixEqual     = "equal"
	MixLongOnly  = "long-only"
	MixShortSkew = "short-skew"
	MixGame      = "game"
	MixTraffic   = "traffic"
)

// Mixes builds the five mixes of the gpu-let paper's evaluation adapted to
// the node's models (section 6.1, Table 5 and Figures 10-11;
// gpulet-evaluation.yaml). Models are ranked by their solo latency at batch
// 32 on a whole GPU, shortest first, which is how the paper's models rank by
// SLO (le < goo < res < vgg < ssd):
//
//   - equal: every model 1 share;
//   - long-only: the longest 3/5 of the models (rounded) 2 shares, the rest
//     none (Table 5: res, ssd, vgg at 100, le and goo at 0);
//   - short-skew: the shortest 3/5 of the models 2 shares, the rest 1
//     (Table 5: le, goo, res at 100, ssd and vgg at 50);
//   - game: one request reads six digits with the shortest model and one
//     image with the median model (the lower one of an even count), in parallel (Figure 10: six LeNets and a
//     ResNet50), so six separate instances of the shortest model and the
//     median one, 1 share each; the stages run in parallel, so every member
//     gets the application's SLO, the median model's (the paper's 95 ms is
//     ResNet50's SLO);
//   - traffic: the longest model detects, then two recognisers run in
//     parallel (Figure 11: SSD-MobileNet, then GoogLeNet and VGG16), the
//     second- and third-longest models, 1 share each; the application SLO
//     is the detector's (twice the longest latency, as the paper sets 136
//     ms) and, the stages being sequential, it is split between detector
//     and recognisers in proportion to their own SLOs.
//
// It needs at least three models.
func (n *Node) Mixes() ([]Mix, error) {
	if len(n.Models) < 3 {
		return nil, fmt.Errorf("build mixes of %s: %w: %d models, the mixes need 3", n.Set.Name, ErrBadArgs, len(n.Models))
	}
	ranked := n.ranked()
	k := int(math.Round(0.6 * float64(len(ranked))))
	d := func(m Model, share float64) MixDemand {
		return MixDemand{Name: m.Name, Profile: m.Profile, SLOMS: m.SLOMS, Share: share}
	}
	var equal, long, skew Mix
	equal.Name, long.Name, skew.Name = MixEqual, MixLongOnly, MixShortSkew
	for i, m := range ranked {
		equal.Demands = append(equal.Demands, d(m, 1))
		if i >= len(ranked)-k {
			long.Demands = append(long.Demands, d(m, 2))
		}
		if i < k {
			skew.Demands = append(skew.Demands, d(m, 2))
		} else {
			skew.Demands = append(skew.Demands, d(m, 1))
		}
	}
	short, median := ranked[0], ranked[(len(ranked)-1)/2]
	game := Mix{Name: MixGame}
	for i := range 6 {
		x := d(short, 1)
		x.Name = fmt.Sprintf("%s-%d", short.Name, i+1)
		x.SLOMS = median.SLOMS
		game.Demands = append(game.Demands, x)
	}
	gm := d(median, 1)
	game.Demands = append(game.Demands, gm)
	det := ranked[len(ranked)-1]
	r1, r2 := ranked[len(ranked)-2], ranked[len(ranked)-3]
	app := det.SLOMS
	rec := max(r1.SLOMS, r2.SLOMS)
	detSLO := app * det.SLOMS / (det.SLOMS + rec)
	traffic := Mix{Name: MixTraffic, Demands: []MixDemand{d(det, 1), d(r1, 1), d(r2, 1)}}
	traffic.Demands[0].SLOMS = detSLO
	traffic.Demands[1].SLOMS = app - detSLO
	traffic.Demands[2].SLOMS = app - detSLO
	return []Mix{equal, long, skew, game, traffic}, nil
}

// ranked is the node's models by L(32, 100), shortest first (by the
// largest batch where 32 is beyond the profile; models without a
// whole-GPU latency last).
func (n *Node) ranked() []Model {
	ranked := slices.Clone(n.Models)
	l32 := func(m Model) float64 {
		l, ok := m.Profile.Latency(min(gpulet.PaperSLOBatch, m.Profile.MaxBatch(100)), 100)
		if !ok {
			return math.Inf(1)
		}
		return l
	}
	slices.SortStableFunc(ranked, func(a, b Model) int { return cmp.Compare(l32(a), l32(b)) })
	return ranked
}
