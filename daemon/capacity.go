package daemon

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/gpulet/gpuletd/control"
	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/mps"
	"go.uber.org/zap"
)

// capacityBudget bounds one capacity search (a dozen plans or so); past it
// the figure found so far is kept as a lower bound.
const capacityBudget = 2 * time.Second

// capacityStatus says how far the load the plan in force was made for may
// grow, in the same mix of models, before the planner can no longer place
// all of it on the node's GPUs: its planned capacity.
type capacityStatus struct {
	// Ratio is the largest factor of the planned load placed in full (a
	// model with no traffic stays at its minimum: control.Capacity).
	Ratio float64 `json:"ratio"`
	// Load is the load planned for, in req/s: every model's measured rate,
	// at least the planner's minimum (control.PlannedLoad).
	Load float64 `json:"load"`
	// Rate is the load at Ratio: req/s in all, in the same mix.
	Rate float64 `json:"rate"`
	// AtLeast: Ratio is a lower bound; the search ran out of time, or the
	// load still fit at the largest factor it tries (gpulet.MaxScale).
	AtLeast bool `json:"at_least,omitempty"`
	// CPU: the node's devices include the CPU. The request path (the
	// daemon, the executors' reading and writing) runs on its cores. The
	// search counts the executors' share once measured (ExecutorPathUS),
	// not the daemon's (DaemonPathUS), which shares the cores too, so such a
	// node serves less than Rate; a sweep (gpuletd load --rate-range)
	// measures what it serves.
	CPU bool `json:"cpu,omitempty"`
	// ExecutorPathUS and DaemonPathUS are the request path's CPU per
	// request, µs (request_path.go), where CPU: the executors', which the
	// search counted, and the daemon's, which it did not; 0 before they
	// were measured.
	ExecutorPathUS float64 `json:"executor_path_us,omitempty"`
	DaemonPathUS   float64 `json:"daemon_path_us,omitempty"`
	// At is when the load was planned.
	At time.Time `json:"at"`
}

// capacityBook keeps the newest capacity measured.
type capacityBook struct {
	mu  sync.Mutex
	at  time.Time       // when the load of cur was planned
	cur *capacityStatus // nil: none (no plan with load yet, or no model left)
}

// set keeps c, the capacity of the load planned at at (nil: none), unless
// one of a later plan is kept already (two re-plans measure at once).
func (b *capacityBook) set(at time.Time, c *capacityStatus) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !at.Before(b.at) {
		b.at, b.cur = at, c
	}
}

// get is the newest capacity measured, nil before the first.
func (b *capacityBook) get() *capacityStatus {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cur == nil {
		return nil
	}
	c := *b.cur
	return &c
}

// measureCapacity finds the planned capacity of the load in was planned
// for (control.Capacity, with the configured planner, within
// capacityBudget) and keeps it for the status and the metrics; in holds
// no model that fits at no rate (replanLocked leaves those out:
// control.Placeable). No model, or no device, leaves none.
func (n *node) measureCapacity(ctx context.Context, in gpulet.Input) {
	at := time.Now()
	c, err := n.capacityOf(ctx, in, n.algorithm())
	if err != nil || ctx.Err() != nil {
		n.log.Debug("planned capacity not measured", zap.Error(err))
		return
	}
	n.capacity.set(at, c)
	if c != nil {
		n.log.Debug("planned capacity", zap.Float64("ratio", c.Ratio), zap.Float64("load", c.Load), zap.Bool("at_least", c.AtLeast), zap.Duration("took", time.Since(c.At)))
	}
}

// capacityOf is the planned capacity of the load in (control.Capacity with
// the planner algo, within capacityBudget); nil for no load or no device.
func (n *node) capacityOf(ctx context.Context, in gpulet.Input, algo gpulet.Algo) (*capacityStatus, error) {
	at := time.Now()
	load := control.PlannedLoad(in)
	if load <= 0 || len(in.GPUs) == 0 {
		return nil, nil
	}
	cctx, cancel := context.WithTimeout(ctx, capacityBudget)
	defer cancel()
	ratio, atLeast, err := control.Capacity(cctx, algo, in, n.plannerOptions(algo))
	if err != nil {
		return nil, err
	}
	c := &capacityStatus{Ratio: ratio, Load: load, Rate: control.CapacityRate(in, ratio), AtLeast: atLeast,
		CPU: onCPU(in), At: at}
	if p := n.path.get(); c.CPU && p != nil {
		c.DaemonPathUS = p.DaemonUS
		if p.ExecutorsUS != nil {
			c.ExecutorPathUS = *p.ExecutorsUS
		}
	}
	return c, nil
}

// onCPU says that one of in's devices is the CPU (its type, whose
// profiles it plans with, is the CPU's).
func onCPU(in gpulet.Input) bool {
	return slices.ContainsFunc(in.GPUs, func(g gpulet.GPU) bool { return g.Type == mps.CPUType })
}
