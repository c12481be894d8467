// Package planbench runs the planner experiments behind `gpuletd bench
// schedulability`, `gpuletd bench maxrate` and `gpuletd bench planner` on the
// reference profile sets (profiler/refset): every planner of package gpulet
// on the same node, the same demands and the same interference model, with
// results in the JSON the CLI prints.
package planbench
