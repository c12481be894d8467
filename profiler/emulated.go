package profiler

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/gpulet/gpuletd/profiler/refset"
	"github.com/gpulet/gpuletd/profiler/store"
)

// refModel finds the model's curve in the emulated device's reference set.
func (r *runner) refModel() (*refset.Set, *refset.Model, error) {
	set, err := r.refSet()
	if err != nil {
		return nil, nil, err
	}
	m, ok := set.Model(r.job.Model.curve())
	if !ok {
		return nil, nil, fmt.Errorf("profile %s on %s: %w: reference set %s has no curve %q (it has %v); name one with profile: in the model's config.yaml",
			r.job.Model.Name, r.job.Device.ID, ErrNoEmulation, set.Name, r.job.Model.curve(), set.ModelNames())
	}
	return set, m, nil
}

// refSet is the reference set of the emulated device.
func (r *runner) refSet() (*refset.Set, error) {
	if r.job.Physics != nil {
		return r.job.Physics.Set(), nil
	}
	set, err := refset.Load(r.job.Device.Emulated)
	if err != nil {
		return nil, fmt.Errorf("profile %s on %s: %w: %w", r.job.Model.Name, r.job.Device.ID, ErrNoEmulation, err)
	}
	return set, nil
}

// emulatedSolo reads every (b,p) from the reference set's profile of the
// model: its latency as p50 (the sets give one latency per point, so p99
// and the mean are unknown), no samples, and the set's L2/DRAM utilisation
// where it has them (SM is never in a set: unknown).
func (r *runner) emulatedSolo(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	set, m, err := r.refModel()
	if err != nil {
		return err
	}
	var pts []Point
	var utils []Util
	for _, size := range r.job.Sizes {
		for i, b := range r.job.Batches {
			l, ok := m.Profile.Latency(b, size)
			if !ok {
				return fmt.Errorf("profile %s on %s: %w: reference set %s has no L(%d,%d) for %s (it covers batches up to %d at %d%%)",
					r.job.Model.Name, r.job.Device.ID, ErrNoEmulation, set.Name, b, size, m.Name, m.Profile.MaxBatch(size), size)
			}
			l *= r.job.Device.LatencyScale()
			pt := Point{Size: size, Batch: b, P50MS: l, P99MS: Num(math.NaN()), MeanMS: Num(math.NaN()),
				Complete: true, Derived: m.IsDerived(b, size)}
			pts = append(pts, pt)
			u, _ := m.Profile.Utilisation(b, size)
			utils = append(utils, emulatedUtil(set.Name, size, b, u.SM, u.L2, u.DRAM))
			if r.skipAfter(pt, r.job.Batches[i+1:]) {
				break
			}
		}
	}
	if err := r.record(ctx, pts...); err != nil {
		return err
	}
	for _, u := range utils {
		if err := r.recordUtil(ctx, u); err != nil {
			return err
		}
	}
	r.progress(Progress{Phase: "solo", Done: r.done, Total: r.total, Finished: true})
	return nil
}

// emulatedUtil marks each known value with the set's name as its source.
func emulatedUtil(set string, size, b int, sm, l2, dram float64) Util {
	src := func(v float64) string {
		if math.IsNaN(v) {
			return store.SourceUnknown
		}
		return set
	}
	return Util{Size: size, Batch: b, SM: Num(sm), SMSource: src(sm), L2: Num(l2), L2Source: src(l2), DRAM: Num(dram), DRAMSource: src(dram)}
}

// emulatedPairs answers the co-locations from the set's physics: measured
// pairs where the set measured exactly that pair, the interference model's
// prediction otherwise.
func (r *runner) emulatedPairs(ctx context.Context) error {
	_, m, err := r.refModel()
	if err != nil {
		return err
	}
	ph := r.job.Physics
	if ph == nil {
		set, err := r.refSet()
		if err != nil {
			return err
		}
		if ph, err = refset.NewPhysics(set, nil); err != nil {
			return fmt.Errorf("profile %s on %s: %w: %w", r.job.Model.Name, r.job.Device.ID, ErrNoEmulation, err)
		}
	}
	var pairs []Pair
	for _, split := range pairSplits(r.job.Sizes, r.job.Device.Sizes) {
		for _, bb := range pairBatchGrid(split, r.job.PairBatches) {
			a := refset.Placement{Model: m.Name, Batch: bb[0], Size: split[0]}
			b := refset.Placement{Model: m.Name, Batch: bb[1], Size: split[1]}
			c, err := ph.CoLocated(a, b)
			if err != nil {
				if errors.Is(err, refset.ErrNoInterference) {
					return fmt.Errorf("profile %s on %s: %w: reference set %s has no co-location data", r.job.Model.Name, r.job.Device.ID, ErrNoEmulation, ph.Set().Name)
				}
				return fmt.Errorf("profile %s on %s: %w: %w", r.job.Model.Name, r.job.Device.ID, ErrNoEmulation, err)
			}
			pairs = append(pairs, Pair{SizeA: split[0], SizeB: split[1], BatchA: bb[0], BatchB: bb[1],
				SoloAMS: Num(c.SoloMS[0]), SoloBMS: Num(c.SoloMS[1]), ColocAMS: c.LatencyMS[0], ColocBMS: c.LatencyMS[1],
				Source: SourceEmulatedPrefix + ph.Set().Name + "/" + c.Source})
		}
	}
	return r.storePairs(ctx, pairs)
}

// pairBatchGrid is every batch pair of the grid, leaving out mirror images
// when both sides have the same size.
func pairBatchGrid(split [2]int, batches []int) [][2]int {
	var out [][2]int
	for _, ba := range batches {
		for _, bb := range batches {
			if split[0] == split[1] && bb < ba {
				continue
			}
			out = append(out, [2]int{ba, bb})
		}
	}
	return out
}

// storePairs replaces the model's stored co-locations on the device type
// with pairs and adds them to the result.
func (r *runner) storePairs(ctx context.Context, pairs []Pair) error {
	sha := r.job.Model.SHA256
	samples := make([]store.InterferenceSample, len(pairs))
	for i, p := range pairs {
		samples[i] = store.InterferenceSample{
			DeviceType: r.devType, ModelA: sha, ModelB: sha, BatchA: p.BatchA, BatchB: p.BatchB, SizeA: p.SizeA, SizeB: p.SizeB,
			SoloAMS: float64(p.SoloAMS), SoloBMS: float64(p.SoloBMS), ColocAMS: p.ColocAMS, ColocBMS: p.ColocBMS, Source: p.Source,
		}
	}
	_, _, err := r.st().ReplaceInterferenceSamples(context.WithoutCancel(ctx),
		store.SampleMatch{DeviceType: r.devType, ModelA: sha, ModelB: sha}, samples)
	if err != nil {
		return fmt.Errorf("profile %s on %s: %w", r.job.Model.Name, r.job.Device.ID, err)
	}
	r.res.Pairs = append(r.res.Pairs, pairs...)
	r.res.PairsSource = r.res.Source
	return nil
}
