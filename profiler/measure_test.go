package profiler

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"

	"github.com/gpulet/gpuletd/mps"
	"github.com/gpulet/gpuletd/profiler/refset"
	"github.com/gpulet/gpuletd/profiler/store"
	"github.com/stretchr/testify/require"
)

func TestMeasureStoresThenReuses(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	f := &fakeLauncher{alpha: 2, beta: 1}
	job := Job{Model: testModel("lenet5"), Device: cpuDevice(), Batches: []int{1, 2, 4}, Store: st, Launcher: f, Rule: fastRule()}

	res, err := Measure(ctx, job)
	require.NoError(t, err)
	require.False(t, res.Reused)
	require.Equal(t, SourceMeasured, res.Source)
	require.Equal(t, []int{50, 100}, res.Sizes)
	require.Len(t, res.Points, 6)
	require.Len(t, f.launched(), 2, "one executor per size")
	for _, p := range res.Points {
		want := f.latency(p.Batch, p.Size)
		require.InDelta(t, want, p.P50MS, 0.02*want, "p=%d b=%d", p.Size, p.Batch)
		require.True(t, p.Complete)
		require.GreaterOrEqual(t, p.Samples, 10)
		require.GreaterOrEqual(t, float64(p.P99MS), p.P50MS)
	}
	// 50% of the cores takes twice as long as 100% on the fake.
	p50, _ := res.Point(50, 4)
	p100, _ := res.Point(100, 4)
	require.InDelta(t, 2, p50.P50MS/p100.P50MS, 0.05)

	// Fits: ℓ(b) = 2b + 1 at 100%, (2b+1)·2 at 50%.
	require.Len(t, res.Fits, 2)
	for _, fit := range res.Fits {
		k := 100 / float64(fit.Size)
		require.InDelta(t, 2*k, fit.AlphaMS, 0.1*k, "size %d", fit.Size)
		require.InDelta(t, 1*k, fit.BetaMS, 0.2*k, "size %d", fit.Size)
		require.Greater(t, float64(fit.R2), 0.99)
	}

	stored, err := st.Latency(ctx, shaOf("lenet5"), "cpu")
	require.NoError(t, err)
	require.Len(t, stored, 6)
	// Memory: each executor's peak, the model's the largest of them, stored.
	require.Equal(t, []float64{150, 200}, []float64{res.Executors[0].PeakResidentMB, res.Executors[1].PeakResidentMB})
	require.Equal(t, 200.0, res.ResidentMB)
	mem, err := st.ModelMemory(ctx, shaOf("lenet5"), "cpu")
	require.NoError(t, err)
	require.Equal(t, 200.0, mem.ResidentMB)
	require.Equal(t, res.RunID, mem.RunID)
	runs, err := st.Runs(ctx, shaOf("lenet5"), "cpu", 0)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	require.Equal(t, store.RunComplete, runs[0].Status)
	require.Contains(t, runs[0].Message, "6 points")
	util, err := st.Util(ctx, shaOf("lenet5"), "cpu")
	require.NoError(t, err)
	require.Len(t, util, 18, "three metrics per point, stored even when unknown")
	for _, u := range util {
		require.True(t, math.IsNaN(u.Value), "no meter on the CPU: unknown, never 0")
		require.Equal(t, store.SourceUnknown, u.Source)
	}

	again, err := Measure(ctx, job)
	require.NoError(t, err)
	require.True(t, again.Reused)
	require.Equal(t, SourceStored, again.Source)
	require.Len(t, f.launched(), 2, "a stored profile starts no executor")
	require.Len(t, again.Points, 6)
	require.Equal(t, 200.0, again.ResidentMB, "a reused profile says the stored memory")
	for i, p := range again.Points {
		require.Equal(t, res.Points[i].P50MS, p.P50MS)
	}

	job.Force = true
	forced, err := Measure(ctx, job)
	require.NoError(t, err)
	require.False(t, forced.Reused)
	require.Len(t, f.launched(), 4, "--force measures again")

	job.Force = false
	job.Model.SHA256 = shaOf("lenet5, changed")
	changed, err := Measure(ctx, job)
	require.NoError(t, err)
	require.False(t, changed.Reused, "a changed model file is profiled again")
	require.Len(t, f.launched(), 6)

	job.Batches = []int{1, 2, 4, 8}
	more, err := Measure(ctx, job)
	require.NoError(t, err)
	require.False(t, more.Reused, "a batch the stored profile lacks is measured")
}

func TestMeasureFailuresLeaveTheStoreIntact(t *testing.T) {
	sha := shaOf("lenet5")
	tests := []struct {
		name       string
		job        func(*Job, *fakeLauncher)
		cancelAt   int // cancel the context at this Infer call
		wantErr    error
		wantMsg    string
		wantRun    store.RunStatus // "" when no run may be started
		wantPoints int             // points stored
		wantPart   int             // of which incomplete
	}{
		{name: "size the device does not make", job: func(j *Job, _ *fakeLauncher) { j.Sizes = []int{30} },
			wantErr: ErrSizeNotAllowed, wantMsg: "30% (cpu allows [50 100])"},
		{name: "batch beyond the model's largest", job: func(j *Job, _ *fakeLauncher) { j.Batches = []int{1, 64} },
			wantErr: ErrBadJob, wantMsg: "batch 64 exceeds the model's max_batch_size 32"},
		{name: "batch of a model without batch dimension", job: func(j *Job, _ *fakeLauncher) { j.Model.MaxBatchSize = 0; j.Batches = []int{1, 2} },
			wantErr: ErrBadJob, wantMsg: "no batch dimension"},
		{name: "no store", job: func(j *Job, _ *fakeLauncher) { j.Store = nil }, wantErr: ErrBadJob},
		{name: "negative skip time", job: func(j *Job, _ *fakeLauncher) { j.SkipPastMS = -1 },
			wantErr: ErrBadJob, wantMsg: "skip past -1 ms: must be a positive, finite time or 0"},
		{name: "skip time with pairs", job: func(j *Job, _ *fakeLauncher) { j.SkipPastMS = 20; j.Pairs = true },
			wantErr: ErrBadJob, wantMsg: "cannot be combined with pairs"},
		{name: "model fails to load", job: func(_ *Job, f *fakeLauncher) { f.loadErr = "protobuf parsing failed" },
			wantErr: ErrModelLoad, wantMsg: "protobuf parsing failed", wantRun: store.RunFailed},
		{name: "executor dies mid-run", job: func(_ *Job, f *fakeLauncher) { f.dieAfter = 40 },
			wantErr: ErrDeviceLost, wantMsg: "signal: killed", wantRun: store.RunFailed, wantPoints: 3, wantPart: 1},
		{name: "interrupted", cancelAt: 40,
			wantErr: ErrInterrupted, wantMsg: "are kept; run 1 is marked incomplete", wantRun: store.RunIncomplete, wantPoints: 3, wantPart: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			st := openStore(t)
			f := &fakeLauncher{alpha: 2, beta: 1}
			if tt.cancelAt > 0 {
				f.onInfer = func(n int) {
					if n == tt.cancelAt {
						cancel()
					}
				}
			}
			job := Job{Model: testModel("lenet5"), Device: cpuDevice(), Batches: []int{1, 2, 4}, Store: st, Launcher: f,
				Rule: StopRule{Warmup: 1, MinSamples: 15, MaxSamples: 15, MedianCI: 0.05, P99CI: 0.5}}
			if tt.job != nil {
				tt.job(&job, f)
			}
			res, err := Measure(ctx, job)
			require.ErrorIs(t, err, tt.wantErr)
			require.Contains(t, err.Error(), tt.wantMsg)
			require.Contains(t, err.Error(), "lenet5")
			require.Equal(t, errors.Is(tt.wantErr, ErrInterrupted), res.Interrupted, "the result says it was interrupted")

			runs, rerr := st.Runs(context.Background(), "", "", 0)
			require.NoError(t, rerr)
			if tt.wantRun == "" {
				require.Empty(t, runs, "a job refused up front starts no run")
				return
			}
			require.Len(t, runs, 1)
			require.Equal(t, tt.wantRun, runs[0].Status)
			require.False(t, runs[0].FinishedAt.IsZero())
			pts, perr := st.Latency(context.Background(), sha, "cpu")
			if tt.wantPoints == 0 {
				require.ErrorIs(t, perr, store.ErrNotFound)
				return
			}
			require.NoError(t, perr)
			require.Len(t, pts, tt.wantPoints)
			part := 0
			for _, p := range pts {
				if !p.Complete {
					part++
					require.Greater(t, p.Samples, 0)
				}
				require.Equal(t, runs[0].ID, p.RunID)
			}
			require.Equal(t, tt.wantPart, part)
			ok, herr := st.HasCompleteProfile(context.Background(), sha, "cpu", []int{50, 100}, []int{1, 2, 4})
			require.NoError(t, herr)
			require.False(t, ok, "a broken run never counts as a complete profile")
		})
	}
}

func TestInterruptedRunNeverDegradesACompleteProfile(t *testing.T) {
	st := openStore(t)
	f := &fakeLauncher{alpha: 2, beta: 1}
	job := Job{Model: testModel("lenet5"), Device: cpuDevice(), Batches: []int{1, 2}, Store: st, Launcher: f, Rule: fastRule()}
	first, err := Measure(context.Background(), job)
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base := f.infers
	f.onInfer = func(n int) {
		if n == base+5 {
			cancel()
		}
	}
	job.Force = true
	_, err = Measure(ctx, job)
	require.ErrorIs(t, err, ErrInterrupted)
	pts, err := st.Latency(context.Background(), shaOf("lenet5"), "cpu")
	require.NoError(t, err)
	require.Len(t, pts, 4)
	for i, p := range pts {
		require.True(t, p.Complete)
		require.Equal(t, first.Points[i].P50MS, p.P50MS)
	}
}

func TestMeasureCoLocations(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	f := &fakeLauncher{alpha: 2, beta: 1, colocFactor: 1.25}
	job := Job{Model: testModel("lenet5"), Device: cpuDevice(), Batches: []int{1, 2, 4, 8}, Pairs: true, Store: st, Launcher: f, Rule: fastRule()}
	res, err := Measure(ctx, job)
	require.NoError(t, err)
	// 50/50 split, grid {1, 4, 8}, mirror images left out: 6 pairs.
	require.Len(t, res.Pairs, 6)
	for _, p := range res.Pairs {
		require.Equal(t, 50, p.SizeA)
		require.Equal(t, 50, p.SizeB)
		require.LessOrEqual(t, p.BatchA, p.BatchB)
		require.InDelta(t, 1.25, p.ColocAMS/float64(p.SoloAMS), 0.05)
		require.InDelta(t, 1.25, p.ColocBMS/float64(p.SoloBMS), 0.05)
		require.Equal(t, SourceMeasured, p.Source)
	}
	xs, err := st.InterferenceSamples(ctx, "cpu")
	require.NoError(t, err)
	require.Len(t, xs, 6)

	again, err := Measure(ctx, job)
	require.NoError(t, err)
	require.True(t, again.Reused)
	require.Len(t, again.Pairs, 6)

	job.Force = true
	_, err = Measure(ctx, job)
	require.NoError(t, err)
	xs, err = st.InterferenceSamples(ctx, "cpu")
	require.NoError(t, err)
	require.Len(t, xs, 6, "a new measurement replaces the model's co-locations")
}

// countingMeter records the batches it measured.
type countingMeter struct {
	mu      sync.Mutex
	batches []int
}

func (m *countingMeter) Source() string              { return "count" }
func (m *countingMeter) Covers(mps.Device, int) bool { return true }
func (m *countingMeter) Measure(_ context.Context, t UtilTarget) (UtilReading, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.batches = append(m.batches, t.Batch)
	return UtilReading{SM: 1, L2: 2, DRAM: 3}, nil
}

func TestMeasureUtilBatches(t *testing.T) {
	tests := []struct {
		name        string
		utilBatches []int
		want        []int
		err         string
	}{
		{name: "every profiled batch", want: []int{1, 2, 4, 1, 2, 4}},
		{name: "chosen batches", utilBatches: []int{4, 1}, want: []int{1, 4, 1, 4}},
		{name: "not profiled", utilBatches: []int{8}, err: "utilisation batch 8 is not one of the profiled batches"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &countingMeter{}
			job := Job{Model: testModel("lenet5"), Device: cpuDevice(), Batches: []int{1, 2, 4}, UtilBatches: tt.utilBatches,
				Store: openStore(t), Launcher: &fakeLauncher{alpha: 2, beta: 1}, Rule: fastRule(), Meters: []UtilMeter{m}}
			_, err := Measure(context.Background(), job)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, m.batches, "two sizes, each at the chosen batches")
		})
	}
}

func TestMeasureWithoutPeakMemoryNotes(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	f := &fakeLauncher{alpha: 2, beta: 1, noPeak: true}
	job := Job{Model: testModel("lenet5"), Device: cpuDevice(), Batches: []int{1, 2}, Store: st, Launcher: f, Rule: fastRule()}

	res, err := Measure(ctx, job)
	require.NoError(t, err, "memory is not what a run is for")
	require.Len(t, res.Points, 4)
	require.Zero(t, res.ResidentMB)
	require.Len(t, res.Notes, 2)
	require.Contains(t, res.Notes[0], "memory at 50% not measured: the executor does not report its peak resident memory")
	_, err = st.ModelMemory(ctx, shaOf("lenet5"), "cpu")
	require.ErrorIs(t, err, store.ErrNotFound)
}

func TestMeasureMemoryAlone(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	f := &fakeLauncher{alpha: 2, beta: 1}
	job := Job{Model: testModel("lenet5"), Device: cpuDevice(), Batches: []int{1, 8}, Store: st, Launcher: f}

	mb, err := MeasureMemory(ctx, job)
	require.NoError(t, err)
	require.Equal(t, 200.0, mb, "the largest size's executor")
	require.Len(t, f.launched(), 1, "one executor")
	require.Equal(t, 100, f.launched()[0].Size)
	require.Equal(t, 2*memoryRuns, f.infers, "a few batches of each size after the warm-up")
	mem, err := st.ModelMemory(ctx, shaOf("lenet5"), "cpu")
	require.NoError(t, err)
	require.Equal(t, 200.0, mem.ResidentMB)
	_, err = st.Latency(ctx, shaOf("lenet5"), "cpu")
	require.ErrorIs(t, err, store.ErrNotFound, "no latency measured")

	f.noPeak = true
	mb, err = MeasureMemory(ctx, job)
	require.NoError(t, err)
	require.Zero(t, mb, "not reported: not measured")

	f.noPeak, f.loadErr = false, "bad graph"
	_, err = MeasureMemory(ctx, job)
	require.ErrorIs(t, err, ErrModelLoad)

	job.Device = emulatedDevice(refset.SetIgniterV100)
	_, err = MeasureMemory(ctx, job)
	require.ErrorIs(t, err, ErrBadJob)
}

func TestMeasureSkipsBatchesPastTheSkipTime(t *testing.T) {
	// ℓ(b) = (2b + 1)·100/size ms on the fake: at 100% 3, 5, 9, 17, 33; at
	// 50% 6, 10, 18, 34, 66.
	tests := []struct {
		name   string
		skip   float64
		device mps.Device
		want   map[int][]int // batches measured at each size
		warmed []int32       // the batches the executors warm at load
	}{
		{name: "every batch without a skip time", device: cpuDevice(),
			want: map[int][]int{50: {1, 2, 4, 8, 16}, 100: {1, 2, 4, 8, 16}}, warmed: []int32{1, 2, 4, 8, 16}},
		{name: "each size stops at its first batch past the time", skip: 20, device: cpuDevice(),
			want: map[int][]int{50: {1, 2, 4, 8}, 100: {1, 2, 4, 8, 16}}, warmed: []int32{1}},
		{name: "a time below every batch measures batch 1 alone", skip: 1, device: cpuDevice(),
			want: map[int][]int{50: {1}, 100: {1}}, warmed: []int32{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			st := openStore(t)
			f := &fakeLauncher{alpha: 2, beta: 1}
			var progress []Progress
			job := Job{Model: testModel("lenet5"), Device: tt.device, Batches: []int{1, 2, 4, 8, 16}, SkipPastMS: tt.skip,
				Store: st, Launcher: f, Rule: fastRule(), Progress: func(p Progress) { progress = append(progress, p) }}
			res, err := Measure(ctx, job)
			require.NoError(t, err)
			got := map[int][]int{}
			for _, p := range res.Points {
				got[p.Size] = append(got[p.Size], p.Batch)
			}
			require.Equal(t, tt.want, got)
			stored, err := st.Latency(ctx, shaOf("lenet5"), "cpu")
			require.NoError(t, err)
			require.Len(t, stored, len(res.Points), "what is measured is stored, and nothing else")
			require.Equal(t, [][]int32{tt.warmed, tt.warmed}, f.warmedAtLoad())
			last := progress[len(progress)-1]
			require.Equal(t, len(res.Points), last.Done)
			require.Equal(t, last.Done, last.Total, "the batches skipped leave the total")
		})
	}
}
