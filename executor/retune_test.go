package executor

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/executor/engine"
	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/executor/sched"
)

// countingEngine counts the models an engine loads.
type countingEngine struct {
	engine.Engine
	loads atomic.Int32
}

func (c *countingEngine) Load(ctx context.Context, spec engine.ModelSpec) (engine.Loaded, error) {
	c.loads.Add(1)
	return c.Engine.Load(ctx, spec)
}

// TestRetuneKeepsEngineModel: through the engine runtime, a load that only
// retunes the scheduler loads nothing and warms the sizes it asks for that
// were not warmed up yet; one that changes the model's timing, or names
// other file contents, loads it again.
func TestRetuneKeepsEngineModel(t *testing.T) {
	eng := &countingEngine{Engine: engine.NewEmulated(engine.EmulatedOptions{})}
	_, c := startServer(t, &EngineRuntime{Engine: eng}, "eager")
	req := func(batchCap int32, warm []int32, ms float64) *pb.LoadModelRequest {
		return &pb.LoadModelRequest{Name: "m", Path: "m.onnx", MaxBatchSize: 8, SloUs: 100_000, BatchCap: batchCap, WarmupBatches: warm,
			Inputs:  []*pb.TensorSpec{{Name: "x", Datatype: "FP32", Shape: []int64{4}}},
			Outputs: []*pb.TensorSpec{{Name: "y", Datatype: "FP32", Shape: []int64{4}}},
			Latency: []*pb.LatencyPoint{{Batch: 1, Ms: ms}, {Batch: 8, Ms: 8 * ms}}}
	}
	first, err := c.LoadModel(context.Background(), req(2, []int32{1, 2}, 1))
	require.NoError(t, err)
	require.Positive(t, first.WarmupUs)
	require.EqualValues(t, 1, eng.loads.Load())
	require.Equal(t, []int32{1, 2}, overheadBatches(first), "the overhead at each size warmed up")

	start := time.Now()
	retuned, err := c.LoadModel(context.Background(), req(8, []int32{1, 8}, 1))
	require.NoError(t, err)
	require.EqualValues(t, 1, eng.loads.Load(), "a retune loads nothing")
	require.Zero(t, retuned.LoadUs)
	require.Positive(t, retuned.WarmupUs, "it warms the sizes asked for")
	require.LessOrEqual(t, time.Duration(retuned.WarmupUs)*time.Microsecond, time.Since(start))
	require.Equal(t, []int32{1, 2, 8}, overheadBatches(retuned), "the new size's overhead joins the others")

	again, err := c.LoadModel(context.Background(), req(4, []int32{1, 2, 8}, 1))
	require.NoError(t, err)
	require.EqualValues(t, 1, eng.loads.Load())
	require.Zero(t, again.WarmupUs, "every size asked for was warmed up already")
	require.Equal(t, []int32{1, 2, 8}, overheadBatches(again))

	r, err := c.Infer(context.Background(), &pb.InferRequest{Model: "m", Inputs: []*pb.Tensor{xInput(1, 0)}})
	require.NoError(t, err)
	require.Equal(t, pb.Code_OK, r.Code, r.Error)

	_, err = c.LoadModel(context.Background(), req(8, nil, 2))
	require.NoError(t, err)
	require.EqualValues(t, 2, eng.loads.Load(), "new timing: loaded again")

	newFile := req(8, nil, 2)
	newFile.Sha256 = "b2"
	_, err = c.LoadModel(context.Background(), newFile)
	require.NoError(t, err)
	require.EqualValues(t, 3, eng.loads.Load(), "the same path with other contents (a replaced file): loaded again")
}

// overheadBatches are the batch sizes a load's dispatch overhead was
// measured at.
func overheadBatches(r *pb.LoadModelResponse) []int32 {
	var out []int32
	for _, p := range r.DispatchOverhead {
		out = append(out, p.Batch)
	}
	return out
}

// TestRetuneKeepsTheCalibration: a model loaded again only to retune it (a
// re-plan's new batch cap) keeps what its calibration measured, so its next
// batches are planned as slow as the device ran them, not with the bare
// profile until enough batches ran again (on an H200 the re-plan's second
// was the one that lost requests). A load that changes the timing starts
// afresh.
func TestRetuneKeepsTheCalibration(t *testing.T) {
	f := &fakeRuntime{base: 3 * time.Millisecond}
	srv, c := startFakeServer(t, f, "eager")
	load := func(batchCap int32, ms float64) {
		t.Helper()
		_, err := c.LoadModel(context.Background(), &pb.LoadModelRequest{Name: "double", Path: "ok", MaxBatchSize: 8, SloUs: time.Second.Microseconds(),
			BatchCap: batchCap, Latency: []*pb.LatencyPoint{{Batch: 1, Ms: ms}, {Batch: 8, Ms: ms}}})
		require.NoError(t, err)
	}
	calibration := func() (factor float64, l1, base time.Duration) {
		t.Helper()
		m, ok := srv.model("double")
		require.True(t, ok)
		require.True(t, srv.loop.call(func() { factor, l1, base = m.calib.Factor(), m.lat.At(1), m.base.At(1) }))
		return factor, l1, base
	}

	load(4, 1)
	for range 2 * sched.CalibrationMinBatches {
		r, err := c.Infer(context.Background(), &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(1, 0)}})
		require.NoError(t, err)
		require.Equal(t, pb.Code_OK, r.Code, r.Error)
	}
	before, l1, base := calibration()
	require.Greater(t, before, 2.0, "batches of 3 ms against a 1 ms profile")
	require.InDelta(t, base.Seconds()*before, l1.Seconds(), 1e-9)

	load(8, 1)
	require.EqualValues(t, 1, f.loaded, "retuned, not loaded again")
	after, l1, base := calibration()
	require.Equal(t, before, after, "the retuned entry keeps the factor")
	require.InDelta(t, base.Seconds()*before, l1.Seconds(), 1e-9, "and plans with it at once")

	load(8, 2)
	require.EqualValues(t, 2, f.loaded, "new timing: loaded again")
	fresh, _, _ := calibration()
	require.Equal(t, 1.0, fresh, "a model loaded anew measures afresh")
}
