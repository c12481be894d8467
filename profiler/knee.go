package profiler

import (
	"fmt"
	"math"

	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/profiler/refset"
)

// BatchKnee is the affordable-rate curve of one batch size over partition
// sizes, rate(p) = b / L(b,p), and its knee.
type BatchKnee struct {
	Batch int              `json:"batch"`
	Curve gpulet.KneeCurve `json:"curve"`
	// Err says why there is no curve (no size has this batch).
	Err string `json:"error,omitempty"`
}

// ProfileKnees are a profile's knees: the knee of the SLO's affordable-rate curve
// (for each size, the largest batch with 2·L(b,p) ≤ SLO, gpulet.Knee) and of
// each batch size's curve.
type ProfileKnees struct {
	SLOMS float64 `json:"slo_ms,omitempty"`
	// SLO is nil when the model has no SLO or no size meets it.
	SLO     *gpulet.KneeCurve `json:"slo,omitempty"`
	Batches []BatchKnee       `json:"batches"`
}

// KneeAtBatch is the knee of the affordable-rate curve of batch b: at each
// size p of sizes (the profile's sizes when empty) the rate is b / L(b,p)
// requests per second, and the knee is the size of largest curvature,
// computed exactly as the planner's MAXEFFICIENTPARTITION (gpulet.Knee, gpu-let
// paper section 4.3) on the profile reduced to batch b. Sizes where L(b,p)
// is not known are left out.
func KneeAtBatch(p *gpulet.Profile, b int, sizes ...int) (gpulet.KneeCurve, error) {
	if p == nil {
		return gpulet.KneeCurve{}, fmt.Errorf("knee at batch %d: %w: nil profile", b, gpulet.ErrNoProfile)
	}
	if len(sizes) == 0 {
		sizes = p.Sizes()
	}
	var pts []gpulet.Point
	var have []int
	for _, s := range sortedUnique(sizes) {
		if l, ok := p.Latency(b, s); ok {
			pts = append(pts, gpulet.Point{Batch: b, Size: s, P50MS: l, Util: gpulet.UnknownUtil()})
			have = append(have, s)
		}
	}
	if len(pts) == 0 {
		return gpulet.KneeCurve{}, fmt.Errorf("knee of %s at batch %d: %w: no size has L(%d,p)", p.Model, b, gpulet.ErrNoProfile, b)
	}
	one, err := gpulet.NewProfile(p.Model, p.DeviceType, p.MemoryMB, pts)
	if err != nil {
		return gpulet.KneeCurve{}, err
	}
	// With only batch b in the profile and no SLO bound, gpulet's
	// affordable rate at each size is exactly b / L(b,p).
	return gpulet.Knee(one, math.Inf(1), have...)
}

// kneesOf computes a profile's knees over sizes for the SLO (0: none) and
// each batch.
func kneesOf(p *gpulet.Profile, sloMS float64, batches, sizes []int) ProfileKnees {
	k := ProfileKnees{SLOMS: sloMS}
	if sloMS > 0 {
		if c, err := gpulet.Knee(p, sloMS, sizes...); err == nil {
			k.SLO = &c
		}
	}
	for _, b := range batches {
		c, err := KneeAtBatch(p, b, sizes...)
		bk := BatchKnee{Batch: b, Curve: c}
		if err != nil {
			bk.Err = err.Error()
		}
		k.Batches = append(k.Batches, bk)
	}
	return k
}

// ModelKnees are one reference model's knees at the asked batches.
type ModelKnees struct {
	Model   string      `json:"model"`
	Batches []BatchKnee `json:"batches"`
}

// SetKnees is the knee report of a reference set.
type SetKnees struct {
	Set    string       `json:"set"`
	Sizes  []int        `json:"sizes"`
	Models []ModelKnees `json:"models"`
}

// Knees reports, for every model of a reference set, the knee of the
// affordable-rate curve b / L(b,p) over the set's gpu-let sizes at each of
// batches (gpuletd reports batch 8 and 32 on igniter-v100).
func Knees(set *refset.Set, batches []int) (SetKnees, error) {
	out := SetKnees{Set: set.Name, Sizes: set.Sizes}
	for _, m := range set.Models {
		mk := ModelKnees{Model: m.Name}
		for _, b := range batches {
			c, err := KneeAtBatch(m.Profile, b, set.Sizes...)
			if err != nil {
				return SetKnees{}, fmt.Errorf("knees of %s: %w", set.Name, err)
			}
			mk.Batches = append(mk.Batches, BatchKnee{Batch: b, Curve: c})
		}
		out.Models = append(out.Models, mk)
	}
	return out, nil
}
