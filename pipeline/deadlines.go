package pipeline

import (
	"math"
	"time"
)

// msOf is d in milliseconds.
func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Per-task deadlines (Loki §4.2, early dropping).
//
// A request of a pipeline carries one end-to-end deadline, but each task
// serves it against a deadline of its own: every later task is left what
// the plan allows it, its budget twice over (one batch to wait for, one to
// run in: the budgets add up to at most half the SLO), and the task before
// takes the rest. A request that cannot meet its task's deadline there is
// dropped early, at that task, or rerouted to a faster variant with room,
// instead of being served and then missing the end-to-end deadline anyway;
// the tasks behind it keep the time the plan gave them. The first task gets
// what the budgets leave over: it has the fewest workers (a detector is
// slower than its classifier) and its queue feels the arrivals' bursts
// first. Measured on Loki's traffic pipeline in the simulator: splitting
// the SLO in proportion to the budgets instead dropped about twice as many
// requests at the detector.

// DeadlineShares returns, per task, the share of the SLO by which a request
// must be through that task: 1 less twice the budgets of the tasks after it
// over the SLO. The last is 1. A plan without an SLO, or whose budgets do
// not leave every task some time, splits the SLO in proportion to the
// budgets (evenly without budgets).
func (pl Plan) DeadlineShares() []float64 { return pl.DeadlineSharesOf(nil) }

// DeadlineSharesOf is DeadlineShares for tasks that need not run one after
// the other (a Triton ensemble's branches): waits[i] lists the tasks, after
// i in the plan's order, that start only once task i is through, and a
// task must be through by the SLO less twice the budgets along the longest
// chain of tasks that wait on it; one that none waits on, by the SLO. nil
// waits is a chain, each task waiting on the one before. A task beside
// another thus keeps the time the tasks after it leave, not what a chain
// through it would.
func (pl Plan) DeadlineSharesOf(waits [][]int) []float64 {
	n := len(pl.Tasks)
	out := make([]float64, n)
	total := 0.0
	for _, t := range pl.Tasks {
		total += max(t.BudgetMS, 0)
	}
	if pl.SLOMS > 0 && total > 0 && 2*total <= pl.SLOMS {
		after := make([]float64, n) // the longest chain's budgets after each task, twice
		for i := n - 1; i >= 0; i-- {
			next := []int{i + 1}
			if waits != nil {
				next = waits[i]
			}
			for _, j := range next {
				if j > i && j < n {
					after[i] = max(after[i], 2*max(pl.Tasks[j].BudgetMS, 0)+after[j])
				}
			}
			out[i] = 1 - after[i]/pl.SLOMS
		}
		return out
	}
	sum := 0.0
	for i, t := range pl.Tasks {
		if total > 0 {
			sum += max(t.BudgetMS, 0)
			out[i] = sum / total
		} else {
			out[i] = float64(i+1) / float64(n)
		}
	}
	if n > 0 {
		out[n-1] = 1
	}
	return out
}

// TaskDeadline is when a request that arrived at arrival must be through
// task i, for an SLO split by shares (DeadlineShares).
func TaskDeadline(arrival, slo time.Duration, shares []float64, i int) time.Duration {
	if i >= len(shares)-1 {
		return arrival + slo
	}
	return arrival + time.Duration(math.Round(float64(slo)*shares[i]))
}
