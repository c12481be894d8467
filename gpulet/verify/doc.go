// Package verify checks plans independently of the planner that made them:
// against a physics (an emulated device's measured or modelled latencies, or
// a real one's), not against the planner's own arithmetic. Check reports
// every rule a plan breaks: a model's worst-case latency at its assigned
// rate beyond its SLO, a gpu-let that cannot keep up with its rate, sizes
// over 100%, a MIG layout the hardware refuses, memory over the GPU's, or
// rate that is neither placed nor reported unscheduled.
package verify
