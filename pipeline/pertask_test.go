package pipeline

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestDeadlineShares(t *testing.T) {
	// SLO 250: budgets 30, 10 and 60 leave the last task 2·60 = 120 ms,
	// the second 2·10 = 20 before that, and the first the rest.
	pl := Plan{SLOMS: 250, Tasks: []TaskPlan{{BudgetMS: 30}, {BudgetMS: 10}, {BudgetMS: 60}}}
	require.InDeltaSlice(t, []float64{1 - 140.0/250, 1 - 120.0/250, 1}, pl.DeadlineShares(), 1e-12)
	sh := pl.DeadlineShares()
	slo := 250 * time.Millisecond
	require.Equal(t, time.Second+110*time.Millisecond, TaskDeadline(time.Second, slo, sh, 0))
	require.Equal(t, time.Second+130*time.Millisecond, TaskDeadline(time.Second, slo, sh, 1))
	require.Equal(t, time.Second+slo, TaskDeadline(time.Second, slo, sh, 2), "the last task's is the end-to-end deadline")

	// Without an SLO, or with budgets over half of it: in proportion.
	pl.SLOMS = 0
	require.InDeltaSlice(t, []float64{0.3, 0.4, 1}, pl.DeadlineShares(), 1e-12)
	pl.SLOMS = 150
	require.InDeltaSlice(t, []float64{0.3, 0.4, 1}, pl.DeadlineShares(), 1e-12)
	require.InDeltaSlice(t, []float64{0.5, 1}, Plan{Tasks: make([]TaskPlan, 2)}.DeadlineShares(), 1e-12, "no budgets: an even split")
}

// Tasks that need not run one after the other keep what the tasks waiting
// on them leave: task 1 runs beside task 0 and task 2 waits on both, so
// each keeps 2·60 ms before the end; a task none waits on keeps the SLO.
// As a chain the first kept 2·(10 + 60) before it.
func TestDeadlineSharesOfBranches(t *testing.T) {
	pl := Plan{SLOMS: 250, Tasks: []TaskPlan{{BudgetMS: 30}, {BudgetMS: 10}, {BudgetMS: 60}}}
	require.InDeltaSlice(t, []float64{1 - 120.0/250, 1 - 120.0/250, 1}, pl.DeadlineSharesOf([][]int{{2}, {2}, nil}), 1e-12)
	require.InDeltaSlice(t, []float64{1 - 120.0/250, 1, 1}, pl.DeadlineSharesOf([][]int{{2}, nil, nil}), 1e-12, "task 1 writes an output alone")
	require.InDeltaSlice(t, pl.DeadlineShares(), pl.DeadlineSharesOf([][]int{{1}, {2}, nil}), 1e-12, "a chain as DeadlineShares")
	require.InDeltaSlice(t, []float64{1 - 140.0/250, 1 - 120.0/250, 1}, pl.DeadlineSharesOf([][]int{{1, 2}, {2}, nil}), 1e-12, "the longest chain counts")
	pl.SLOMS = 150
	require.InDeltaSlice(t, []float64{0.3, 0.4, 1}, pl.DeadlineSharesOf([][]int{{2}, {2}, nil}), 1e-12, "budgets over half the SLO: in proportion, as a chain")
}

func TestSplitWorkers(t *testing.T) {
	tests := []struct {
		need    []int
		workers int
		want    []int
	}{
		{[]int{2, 3}, 8, []int{2, 3}},
		{[]int{6, 2}, 4, []int{3, 1}},
		{[]int{9, 1}, 4, []int{3, 1}},
		{[]int{1, 1, 10}, 3, []int{1, 1, 1}},
	}
	for _, tc := range tests {
		got := splitWorkers(tc.need, tc.workers)
		require.Equal(t, tc.want, got, "need %v on %d", tc.need, tc.workers)
		require.LessOrEqual(t, sum(got), tc.workers)
	}
}

// TestPerTaskByHand: the two-task pipeline of TestPlanForByHand, each task
// with 50 ms of batches (a quarter of the SLO): batches of 4 (Loki's batch
// sizes are powers of two).
func TestPerTaskByHand(t *testing.T) {
	p := twoTasks()
	// 150/s into A and B: two workers each at full accuracy.
	pl, err := PerTask(p, []float64{150, 150}, Options{Workers: 4})
	require.NoError(t, err)
	require.Equal(t, HardwareScaling, pl.Scaling)
	require.Equal(t, 4, pl.Workers)
	require.InDelta(t, 1, pl.Accuracy, 1e-12)
	require.InDelta(t, 50, pl.Tasks[0].BudgetMS, 1e-12)

	// 300/s: each task needs 3 workers at full accuracy and gets 2. A:
	// a1 on 1 worker (100) and a2 on 1 (200): (1/3·1 + 2/3·0.5); B: b1 on 1
	// (100) and b2 on 1 (400 carries the other 200): 1/3 + 2/3·0.8.
	pl, err = PerTask(p, []float64{300, 300}, Options{Workers: 4})
	require.NoError(t, err)
	require.Equal(t, PerTaskScaling, pl.Scaling)
	require.Equal(t, 4, pl.Workers)
	accA, accB := 1.0/3+2.0/3*0.5, 1.0/3+2.0/3*0.8
	require.InDelta(t, accA*accB, pl.Accuracy, 1e-9)

	// It does not see that B's load follows A's: B measured at 100/s keeps
	// one worker of full accuracy even though A now sends it 300/s.
	pl, err = PerTask(p, []float64{300, 100}, Options{Workers: 4})
	require.NoError(t, err)
	require.Equal(t, []VariantPlan{{Variant: "b1", Workers: 1, Batch: 4, BatchMS: 40, Share: 1, Capacity: 100}}, pl.Tasks[1].Variants)

	// 1000/s: A's fastest variant on its workers carries 400 at most.
	pl, err = PerTask(p, []float64{1000, 1000}, Options{Workers: 4})
	require.ErrorIs(t, err, ErrOverloaded)
	require.Equal(t, 4, pl.Workers)
	require.InDelta(t, 400, pl.Capacity, 1e-9, "a2 on 2 workers")

	_, err = PerTask(p, []float64{1}, Options{Workers: 4})
	require.ErrorIs(t, err, ErrBadPipeline)
}

func TestWithSpare(t *testing.T) {
	// 150/s: a1×2 (capacity 200) and b1×2 (200); two spare workers go one
	// to each task (equally busy: the first found, then the other).
	pl, err := PlanFor(twoTasks(), 150, Options{Workers: 6})
	require.NoError(t, err)
	require.Equal(t, 4, pl.Workers)
	sp := pl.WithSpare(6)
	require.Equal(t, 6, sp.Workers)
	require.Equal(t, 4, sp.Needed)
	require.Equal(t, 3, sp.Tasks[0].Variants[0].Workers)
	require.Equal(t, 3, sp.Tasks[1].Variants[0].Workers)
	require.InDelta(t, 300, sp.Tasks[0].Variants[0].Capacity, 1e-9)
	require.InDelta(t, 300, sp.Capacity, 1e-9)
	require.Equal(t, pl.Accuracy, sp.Accuracy)
	require.Equal(t, 2, pl.Tasks[0].Variants[0].Workers, "the plan given is not changed")
	again := sp.WithSpare(6)
	require.Equal(t, 6, again.Workers, "nothing more to give")
	require.Equal(t, 4, again.Needed)
	require.Equal(t, 4, pl.WithSpare(3).Workers, "never fewer")
}

func TestMinAccuracy(t *testing.T) {
	p := twoTasks()
	// Without a floor 350/s is served at (200/350 + 150/350·0.5)·0.8 ≈
	// 0.63 (TestPlanForByHand); with a floor of 0.7 the most that holds it
	// is what b2 and a1 on 3 workers carry at 0.8: 300.
	p.MinAccuracy = 0.7
	require.InEpsilon(t, 300, MaxDemand(p, Options{Workers: 4}), 1e-3)
	pl, err := PlanFor(p, 350, Options{Workers: 4})
	require.ErrorIs(t, err, ErrOverloaded)
	require.GreaterOrEqual(t, pl.Accuracy, 0.7)
	pl, err = PlanFor(p, 250, Options{Workers: 4})
	require.NoError(t, err)
	require.InDelta(t, 0.8, pl.Accuracy, 1e-9)
	p.MinAccuracy = 1.5
	require.ErrorIs(t, p.Validate(), ErrBadPipeline)
}
