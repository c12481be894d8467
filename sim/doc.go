// Package sim simulates a whole node in virtual time with the real scheduling
// core, router and planners, generates workloads, replays traces and runs the
// experiments behind gpuletd simulate and gpuletd bench.
package sim
