package repository

import (
	"fmt"
	"slices"
	"strings"
)

// orderSteps puts a pipeline's steps (in the order written) in an order
// they can run in, as Triton runs an ensemble's steps by what they read
// rather than by where they are written: each step after the steps whose
// outputs it reads, and among the steps that could come next, those that
// run once a request first, then the step that writes the fan-out, then
// those that run once per row of it, each group in the written order. So
// a pipeline written in an order it can run in keeps it, and the fan-out's
// writer comes just before the first step of the fan-out unless a step
// before the fan-out reads another of its outputs. Steps that wait on one
// another (a cycle) are refused, naming them.
func orderSteps(steps []EnsembleStep, fanout string, bad func(string, ...any)) *Ensemble {
	writer := map[string]int{} // tensor → the index in steps of the step that writes it
	for i, s := range steps {
		for _, v := range s.Outputs {
			if _, ok := writer[v]; !ok {
				writer[v] = i
			}
		}
	}
	needs := make([][]int, len(steps)) // by index in steps
	for i, s := range steps {
		for _, v := range s.Inputs {
			if w, ok := writer[v]; ok && !slices.Contains(needs[i], w) {
				needs[i] = append(needs[i], w)
			}
		}
		slices.Sort(needs[i])
	}
	fanWriter, ok := writer[fanout]
	if fanout == "" || !ok {
		fanWriter = -1
	}
	perRow := perRowSteps(steps, fanout, writer)
	rank := func(i int) int {
		switch {
		case perRow[i]:
			return 2
		case i == fanWriter:
			return 1
		}
		return 0
	}
	order, stuck := topoOrder(needs, rank)
	if len(stuck) > 0 {
		var names []string
		for _, i := range stuck {
			names = append(names, fmt.Sprintf("%s (%s)", steps[i].Place(), steps[i].Model))
		}
		if len(names) == 1 {
			bad("ensemble_scheduling: %s reads what it writes; a pipeline's steps form no cycle", names[0])
		} else {
			bad("ensemble_scheduling: %s wait on one another: each reads what another writes, directly or through other steps; a pipeline's steps form no cycle", strings.Join(names, ", "))
		}
		return nil
	}
	place := make([]int, len(steps)) // index in steps → place in order
	for k, i := range order {
		place[i] = k
	}
	e := &Ensemble{Fanout: fanout, FanoutStep: -1, FanoutWriter: -1}
	for k, i := range order {
		s := steps[i]
		s.Needs = nil
		for _, w := range needs[i] {
			s.Needs = append(s.Needs, place[w])
		}
		slices.Sort(s.Needs)
		e.Steps = append(e.Steps, s)
		if perRow[i] && e.FanoutStep < 0 {
			e.FanoutStep = k
		}
	}
	if fanWriter >= 0 {
		e.FanoutWriter = place[fanWriter]
	}
	if e.FanoutStep >= 0 {
		rowReads(e)
	}
	markBeside(e)
	return e
}

// rowReads sets, for a pipeline with a fan-out, what the steps from the
// fan-out on (each run once per row) read that was written before the
// fan-out or given by the request (Ensemble.RowReads: every row gets it
// whole), and the steps before the fan-out but its writer that write it
// (RowNeeds).
func rowReads(e *Ensemble) {
	after := map[string]bool{e.Fanout: true}
	for _, s := range e.Steps[e.FanoutStep:] {
		for _, v := range s.Outputs {
			after[v] = true
		}
	}
	for _, s := range e.Steps[e.FanoutStep:] {
		for _, v := range s.Inputs {
			if !after[v] && !slices.Contains(e.RowReads, v) {
				e.RowReads = append(e.RowReads, v)
			}
		}
		for _, w := range s.Needs {
			if w < e.FanoutStep && w != e.FanoutWriter && !slices.Contains(e.RowNeeds, w) {
				e.RowNeeds = append(e.RowNeeds, w)
			}
		}
	}
	slices.Sort(e.RowReads)
	slices.Sort(e.RowNeeds)
}

// perRowSteps marks, by index in steps (the written order), the steps
// that read the fan-out or what such a step writes, directly or through
// other steps: those run once per row of it.
func perRowSteps(steps []EnsembleStep, fanout string, writer map[string]int) []bool {
	perRow := make([]bool, len(steps))
	if fanout == "" {
		return perRow
	}
	for changed := true; changed; {
		changed = false
		for i, s := range steps {
			if perRow[i] {
				continue
			}
			for _, v := range s.Inputs {
				if w, ok := writer[v]; v == fanout || (ok && perRow[w]) {
					perRow[i], changed = true, true
					break
				}
			}
		}
	}
	return perRow
}

// topoOrder orders the steps (by index in the written order) so that
// each comes after those it needs, taking among those that may come next
// the one of the lowest rank, then the first written (Kahn's algorithm).
// stuck lists, in written order, the steps that wait on one another in a
// cycle (and any that only such steps wait on), when there are.
func topoOrder(needs [][]int, rank func(int) int) (order, stuck []int) {
	placed := make([]bool, len(needs))
	ready := func(i int) bool {
		for _, w := range needs[i] {
			if !placed[w] {
				return false
			}
		}
		return true
	}
	for len(order) < len(needs) {
		next := -1
		for i := range needs {
			if !placed[i] && ready(i) && (next < 0 || rank(i) < rank(next)) {
				next = i
			}
		}
		if next < 0 {
			break
		}
		placed[next] = true
		order = append(order, next)
	}
	if len(order) == len(needs) {
		return order, nil
	}
	// Leave out the steps no waiting step needs: what is left waits in a
	// cycle or between cycles.
	waiting := make([]bool, len(needs))
	for i := range needs {
		waiting[i] = !placed[i]
	}
	for changed := true; changed; {
		changed = false
		for i := range needs {
			if !waiting[i] {
				continue
			}
			needed := false
			for j := range needs {
				if waiting[j] && slices.Contains(needs[j], i) {
					needed = true
					break
				}
			}
			if !needed {
				waiting[i], changed = false, true
			}
		}
	}
	for i, w := range waiting {
		if w {
			stuck = append(stuck, i)
		}
	}
	return order, stuck
}

// markBeside marks the steps of e that may run beside the step before
// them (Beside): both before the fan-out or both after it, and neither
// needing the other, directly or through other steps, and where any may
// (Ensemble.Branches), Waits: which steps wait on each.
func markBeside(e *Ensemble) {
	ancestors := make([]map[int]bool, len(e.Steps))
	for k := range e.Steps {
		s := &e.Steps[k]
		ancestors[k] = map[int]bool{}
		for _, w := range s.Needs {
			ancestors[k][w] = true
			for a := range ancestors[w] {
				ancestors[k][a] = true
			}
		}
		s.Beside = k > 0 && k != e.FanoutStep && !ancestors[k][k-1]
	}
	if !e.Branches() {
		return
	}
	e.Waits = make([][]int, len(e.Steps))
	for k, s := range e.Steps {
		for _, w := range s.Needs {
			e.Waits[w] = append(e.Waits[w], k)
		}
	}
}
