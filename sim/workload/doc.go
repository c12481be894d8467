// Package workload reads the workload file (DESIGN.md §11): the devices of
// a node and the demand on it, for `gpuletd plan`, `gpuletd simulate` and the
// benchmarks. Decoding is strict (an unknown field is an error naming its
// line), Validate names the field, the value and what is allowed, and Input
// turns a workload into planner input from the reference profile sets
// (profiler/refset). Arrival processes, phases, duration and policy are
// parsed and validated here for the simulator; the planner does not use
// them.
package workload
