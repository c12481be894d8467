package daemon

import (
	"slices"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/pipeline"
	"github.com/stretchr/testify/require"
)

// TestStepDeadlines: a 300 ms pipeline of a detector (SLO 100 ms) and a
// classifier (SLO 60 ms): before a plan the classifier keeps its model's
// 60 ms (twice half of it) and the detector takes the rest, 240 ms; with a
// plan, twice the plan's budget; a request's own shorter timeout scales the
// split down with it.
func TestStepDeadlines(t *testing.T) {
	steps := []*repository.Model{
		{Name: "det", Config: repository.ModelConfig{SLO: config.Duration(100 * time.Millisecond)}},
		{Name: "cls", Config: repository.ModelConfig{SLO: config.Duration(60 * time.Millisecond)}},
	}
	at := time.Unix(100, 0)
	// Before a plan: budgets of half the models' SLOs, the last step keeps
	// twice its budget.
	ds := stepDeadlines(modelShares(steps, 300*time.Millisecond, nil), at, at.Add(300*time.Millisecond))
	require.Equal(t, []time.Time{at.Add(240 * time.Millisecond), at.Add(300 * time.Millisecond)}, ds)
	// 100 ms in all: under the two budgets' 160, split in proportion.
	ds = stepDeadlines(modelShares(steps, 100*time.Millisecond, nil), at, at.Add(100*time.Millisecond))
	require.Equal(t, at.Add(62500*time.Microsecond), ds[0])
	require.Equal(t, at.Add(100*time.Millisecond), ds[1])

	// With a plan: its budgets, the simulator's split; a request with a
	// shorter timeout keeps the shares of its own time.
	var pp pipelinePlans
	require.Nil(t, pp.deadlineShares("p", steps, nil))
	pp.set("p", pipeline.Plan{SLOMS: 300, Tasks: []pipeline.TaskPlan{{Task: "det", BudgetMS: 50}, {Task: "cls", BudgetMS: 30}}})
	require.Nil(t, pp.deadlineShares("p", append(slices.Clone(steps), steps[1]), nil), "a plan of other steps")
	require.Nil(t, pp.deadlineShares("p", []*repository.Model{{Name: "crowd"}, steps[1]}, nil), "a plan of other models: the pipeline loaded again")
	shares := pp.deadlineShares("p", steps, nil)
	require.Equal(t, []time.Time{at.Add(240 * time.Millisecond), at.Add(300 * time.Millisecond)}, stepDeadlines(shares, at, at.Add(300*time.Millisecond)))
	require.Equal(t, []time.Time{at.Add(120 * time.Millisecond), at.Add(150 * time.Millisecond)}, stepDeadlines(shares, at, at.Add(150*time.Millisecond)))

	// Branches: a step that writes an output alone, beside the other,
	// keeps the whole SLO, with a plan and before one (it kept the first
	// step's share of a chain).
	waits := [][]int{nil, nil}
	require.Equal(t, []time.Time{at.Add(300 * time.Millisecond), at.Add(300 * time.Millisecond)},
		stepDeadlines(pp.deadlineShares("p", steps, waits), at, at.Add(300*time.Millisecond)))
	require.Equal(t, []time.Time{at.Add(300 * time.Millisecond), at.Add(300 * time.Millisecond)},
		stepDeadlines(modelShares(steps, 300*time.Millisecond, waits), at, at.Add(300*time.Millisecond)))
}

func TestSplitRows(t *testing.T) {
	vals := make([]float32, 3*2)
	for i := range vals {
		vals[i] = float32(i)
	}
	x, err := tensor.FromFloat32s("objects", []int64{1, 3, 2}, vals)
	require.NoError(t, err)
	rows, err := splitRows(x, true, true)
	require.NoError(t, err)
	require.Len(t, rows, 3)
	require.Equal(t, []int64{1, 2}, rows[1].Shape)
	got, err := rows[1].Float32s()
	require.NoError(t, err)
	require.Equal(t, []float32{2, 3}, got)
	// A model that does not batch takes rows without the batch dimension.
	rows, err = splitRows(x, true, false)
	require.NoError(t, err)
	require.Equal(t, []int64{2}, rows[2].Shape)
	// A pipeline that does not batch: the rows are dimension 0.
	y := x
	y.Shape = []int64{3, 2}
	rows, err = splitRows(y, false, true)
	require.NoError(t, err)
	require.Len(t, rows, 3)
	_, err = splitRows(tensor.Tensor{Name: "s", DataType: tensor.FP32, Shape: []int64{2, 3}, Data: make([]byte, 24)}, true, true)
	require.ErrorContains(t, err, "want [1, rows")
}

// TestJoinRows: the rows' outputs joined in order, the batch of 1 in front;
// no rows give an empty tensor of the declared per-row dims.
func TestJoinRows(t *testing.T) {
	p := &repository.Model{Name: "p", Config: repository.ModelConfig{MaxBatchSize: 1}}
	r := &pipelineRun{p: p, steps: []*repository.Model{{Config: repository.ModelConfig{MaxBatchSize: 8}}}}
	spec := repository.TensorSpec{Name: "labels", DataType: tensor.FP32, Dims: []int64{-1, 2}}
	row := func(a, b float32) tensor.Tensor {
		x, err := tensor.FromFloat32s("labels", []int64{1, 2}, []float32{a, b})
		require.NoError(t, err)
		return x
	}
	out, err := r.joinRows(spec, fanoutRows{"labels": {row(1, 2), row(3, 4)}})
	require.NoError(t, err)
	require.Equal(t, []int64{1, 2, 2}, out.Shape)
	got, err := out.Float32s()
	require.NoError(t, err)
	require.Equal(t, []float32{1, 2, 3, 4}, got)
	out, err = r.joinRows(spec, nil)
	require.NoError(t, err)
	require.Equal(t, []int64{1, 0, 2}, out.Shape)
	require.Empty(t, out.Data)
	_, err = r.joinRows(spec, fanoutRows{"labels": {row(1, 2), {}}})
	require.ErrorContains(t, err, "no step wrote it", "a row whose steps did not write it")
}
