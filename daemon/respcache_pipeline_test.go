package daemon

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/kserve"
)

// cachePipeline is a node serving pipeline p, one step of model a (or its
// variant lite), whose steps are sent to a fake that counts them and
// answers from the model in answerBy.
type cachePipeline struct {
	n        *node
	p, a     *repository.Model
	lite     *repository.Model
	sends    int
	answerBy *repository.Model
}

func newCachePipeline(t *testing.T) *cachePipeline {
	t.Helper()
	model := func(name, in, out string) *repository.Model {
		return &repository.Model{Name: name, Family: name, Version: 1,
			Inputs:  []repository.TensorSpec{{Name: in, DataType: tensor.FP32, Dims: []int64{4}}},
			Outputs: []repository.TensorSpec{{Name: out, DataType: tensor.FP32, Dims: []int64{2}}},
			Config:  repository.ModelConfig{SLO: config.Duration(50 * time.Millisecond), MaxBatchSize: 8}}
	}
	cp := &cachePipeline{a: model("a", "x", "y"), lite: model("lite", "x", "y"), p: model("p", "in", "out")}
	cp.p.Config.SLO = config.Duration(time.Second)
	cp.p.Config.Ensemble = &repository.Ensemble{FanoutStep: -1, Steps: []repository.EnsembleStep{
		{Model: "a", Inputs: map[string]string{"x": "in"}, Outputs: map[string]string{"y": "out"}}}}
	n := &node{log: zap.NewNop(), router: newRouter(), rates: newRateMeter(0.5, time.Now()),
		stepRates: newRateMeter(0.5, time.Now()), cache: newResponseCache(1 << 20),
		catalog: newCatalog([]string{t.TempDir()}, testRepositoryOptions(0), nil, nil, zap.NewNop())}
	n.metrics = newMetrics(n)
	n.catalog.models["a"], n.catalog.models["lite"] = cp.a, cp.lite
	n.catalog.pipelines["p"] = cp.p
	cp.answerBy = cp.a
	n.sendStep = func(_ context.Context, _ []*repository.Model, _ *gpuletRun, ins []tensor.Tensor, _ []string, _ time.Time) (*executed, *repository.Model, *gpuletRun, *inferError) {
		cp.sends++
		y := tensor.Tensor{Name: "y", DataType: tensor.FP32, Shape: []int64{1, 2}, Data: ins[0].Data[:8]}
		return &executed{outs: []tensor.Tensor{y}, batch: 1}, cp.answerBy, &gpuletRun{}, nil
	}
	cp.n = n
	return cp
}

// ask sends p one request whose input is four copies of b, counted at the
// door as the protocols count it, and returns its answer.
func (cp *cachePipeline) ask(t *testing.T, b byte) *executed {
	t.Helper()
	data := make([]byte, 16)
	for i := range data {
		data[i] = b
	}
	cp.n.rates.hit(cp.p.Name, time.Now())
	res, ierr := cp.n.execute(context.Background(), cp.p, &kserve.Request{Inputs: []tensor.Tensor{fp32("in", []int64{1, 4}, data...)}}, time.Now())
	require.Nil(t, ierr)
	require.Equal(t, data[:8], res.outs[0].Data, "the answer to this request")
	return res
}

// A pipeline that enables the response cache answers a repeated request
// from it without running a step (Triton's ensemble caching), and the hit
// leaves the rate the pipeline is planned for. An answer a cheaper variant
// gave (accuracy scaling) is not kept, so that a hit never answers below
// the pipeline's accuracy, and an answer goes once a model its steps ran
// is loaded again.
func TestPipelineAnswersFromTheCache(t *testing.T) {
	cp := newCachePipeline(t)
	cp.p.Config.ResponseCache = true

	require.False(t, cp.ask(t, 1).cached)
	require.True(t, cp.ask(t, 1).cached)
	require.Equal(t, 1, cp.sends, "the repeat ran no step")
	c := cp.n.counters.of("p")
	require.Equal(t, int64(1), c.cacheHit.count.Load())
	require.Equal(t, int64(1), c.cacheMiss.count.Load())
	require.Equal(t, int64(1), cp.n.rates.counted("p"), "the hit left the pipeline's planned rate")
	require.Equal(t, int64(1), cp.n.stepRates.counted("a"))

	cp.answerBy = cp.lite
	require.False(t, cp.ask(t, 2).cached)
	require.False(t, cp.ask(t, 2).cached, "a variant's answer is not kept")
	require.Equal(t, 3, cp.sends)

	cp.answerBy = cp.a
	require.True(t, cp.ask(t, 1).cached)
	cp.n.catalog.models["a"] = &repository.Model{Name: "a", Family: "a", Version: 1, Inputs: cp.a.Inputs, Outputs: cp.a.Outputs, Config: cp.a.Config}
	require.False(t, cp.ask(t, 1).cached, "the step's model was loaded again: its old answer goes")
	require.Equal(t, 4, cp.sends)
}

// A step whose model enables the response cache is answered from that
// model's cache, counted in the model's statistics as a hit (Triton's
// composing models), while the pipeline itself keeps nothing.
func TestPipelineStepAnswersFromItsModelsCache(t *testing.T) {
	cp := newCachePipeline(t)
	cp.a.Config.ResponseCache = true

	require.False(t, cp.ask(t, 1).cached)
	require.False(t, cp.ask(t, 1).cached, "the pipeline keeps no answer of its own")
	require.Equal(t, 1, cp.sends, "the repeated step was answered from a's cache")
	a := cp.n.counters.of("a")
	require.Equal(t, int64(1), a.cacheHit.count.Load())
	require.Equal(t, int64(1), a.cacheMiss.count.Load())
	require.Equal(t, int64(2), a.success.count.Load(), "both step requests answered")
	require.Equal(t, int64(1), cp.n.rates.counted("a"), "the hit is in no rate")
	require.Equal(t, int64(1), cp.n.stepRates.counted("a"))
	require.Zero(t, cp.n.counters.of("p").cacheHit.count.Load())

	cp.answerBy = cp.lite
	cp.ask(t, 2)
	cp.ask(t, 2)
	require.Equal(t, 3, cp.sends, "a variant's answer is not kept under a's")
}
