package profiler

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/gpulet/gpuletd/profiler/refset"
	"github.com/gpulet/gpuletd/profiler/store"
	"github.com/stretchr/testify/require"
)

func TestMeasureEmulatedReadsThePhysics(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	set, err := refset.Load(refset.SetIgniterV100)
	require.NoError(t, err)
	ph, err := refset.NewPhysics(set, nil)
	require.NoError(t, err)
	model := testModel("resnet18")
	model.Curve = "resnet50"
	job := Job{Model: model, Device: emulatedDevice(refset.SetIgniterV100), Batches: []int{1, 8, 32}, Pairs: true, PairBatches: []int{8, 32},
		Store: st, Physics: ph}

	res, err := Measure(ctx, job)
	require.NoError(t, err)
	require.Equal(t, "emulated:igniter-v100", res.Source)
	require.Equal(t, "igniter-v100", res.DeviceType)
	require.Len(t, res.Points, 18)
	ref, _ := set.Model("resnet50")
	for _, p := range res.Points {
		want, ok := ref.Profile.Latency(p.Batch, p.Size)
		require.True(t, ok)
		require.Equal(t, want, p.P50MS, "p=%d b=%d", p.Size, p.Batch)
		require.Zero(t, p.Samples, "nothing was sampled")
		require.Equal(t, ref.IsDerived(p.Batch, p.Size), p.Derived)
	}
	require.Len(t, res.Knees.Batches, 3)
	require.NotNil(t, res.Knees.SLO, "the model's 50 ms SLO has a knee")

	util, err := st.Util(ctx, model.SHA256, "igniter-v100")
	require.NoError(t, err)
	require.Len(t, util, 54)
	for _, u := range util {
		switch {
		case u.Metric == store.MetricSM:
			require.True(t, math.IsNaN(u.Value), "no set gives SM utilisation")
			require.Equal(t, store.SourceUnknown, u.Source)
		case u.Size == 100:
			require.True(t, math.IsNaN(u.Value), "iGniter has no utilisation at 100%%: unknown, never 0")
			require.Equal(t, store.SourceUnknown, u.Source)
		default:
			require.False(t, math.IsNaN(u.Value), "%s b=%d p=%d", u.Metric, u.Batch, u.Size)
			require.Equal(t, store.SourceIgniterV100, u.Source)
		}
	}

	// Splits 20/80, 40/60, 50/50 of the device's sizes; grid {8, 32}, the
	// 50/50 split without mirror images: 4 + 4 + 3.
	require.Len(t, res.Pairs, 11)
	for _, p := range res.Pairs {
		require.True(t, strings.HasPrefix(p.Source, "emulated:igniter-v100/"), p.Source)
		c, err := ph.CoLocated(refset.Placement{Model: "resnet50", Batch: p.BatchA, Size: p.SizeA},
			refset.Placement{Model: "resnet50", Batch: p.BatchB, Size: p.SizeB})
		require.NoError(t, err)
		require.Equal(t, c.LatencyMS[0], p.ColocAMS)
		require.Equal(t, c.LatencyMS[1], p.ColocBMS)
		// iGniter measured no model beside itself: every pair is the
		// interference model's prediction, a slowdown.
		require.Equal(t, "emulated:igniter-v100/"+refset.SourcePredicted, p.Source)
		require.GreaterOrEqual(t, p.ColocAMS, float64(p.SoloAMS))
	}
	runs, err := st.Runs(ctx, model.SHA256, "igniter-v100", 0)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	require.Contains(t, runs[0].Message, "emulated: read from the physics of reference set igniter-v100, not measured")

	again, err := Measure(ctx, job)
	require.NoError(t, err)
	require.True(t, again.Reused)
	require.Len(t, again.Pairs, 11)
}

func TestMeasureEmulatedErrors(t *testing.T) {
	tests := []struct {
		name    string
		set     string
		curve   string
		batches []int
		pairs   bool
		wantErr error
		wantMsg string
	}{
		{"unknown curve", refset.SetIgniterV100, "lenet", nil, false, ErrNoEmulation, `has no curve "lenet" (it has [alexnet resnet50 vgg19 ssd])`},
		{"batch beyond the set", refset.SetIgniterV100, "alexnet", []int{1, 33}, false, ErrNoEmulation, "has no L(33,20) for alexnet (it covers batches up to 32 at 20%)"},
		{"pairs on a whole-GPU set", refset.SetSymphonyA100, "resnet50", []int{1, 2}, true, ErrSizeNotAllowed, "no two profiled sizes split the device"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := openStore(t)
			m := testModel("m")
			m.Curve = tt.curve
			m.MaxBatchSize = 64
			d := emulatedDevice(tt.set)
			if tt.set == refset.SetSymphonyA100 {
				d.Backend, d.Sizes = "none", []int{100}
			}
			_, err := Measure(context.Background(), Job{Model: m, Device: d, Batches: tt.batches, Pairs: tt.pairs, Store: st})
			require.ErrorIs(t, err, tt.wantErr)
			require.Contains(t, err.Error(), tt.wantMsg)
			runs, rerr := st.Runs(context.Background(), "", "", 0)
			require.NoError(t, rerr)
			if tt.wantErr == ErrNoEmulation {
				require.Len(t, runs, 1)
				require.Equal(t, store.RunFailed, runs[0].Status)
			} else {
				require.Empty(t, runs)
			}
			_, lerr := st.Latency(context.Background(), m.SHA256, tt.set)
			require.ErrorIs(t, lerr, store.ErrNotFound, "nothing half-stored")
		})
	}
}

func TestEmulatedSkipsBatchesPastTheSkipTime(t *testing.T) {
	set, err := refset.Load(refset.SetIgniterV100)
	require.NoError(t, err)
	ref, ok := set.Model("resnet50")
	require.True(t, ok)
	model := testModel("resnet18")
	model.Curve = "resnet50"
	batches := []int{1, 2, 4, 8, 16, 32}
	const skip = 20.0
	res, err := Measure(context.Background(), Job{Model: model, Device: emulatedDevice(refset.SetIgniterV100), Batches: batches,
		SkipPastMS: skip, Store: openStore(t)})
	require.NoError(t, err)
	shorter := 0
	for _, size := range res.Sizes {
		var want []int
		for _, b := range batches {
			want = append(want, b)
			if l, _ := ref.Profile.Latency(b, size); l >= skip {
				break
			}
		}
		shorter += len(batches) - len(want)
		var got []int
		for _, p := range res.Points {
			if p.Size == size {
				got = append(got, p.Batch)
			}
		}
		require.Equal(t, want, got, "size %d", size)
	}
	require.Positive(t, shorter, "the skip time cuts some size short on this curve")
}
