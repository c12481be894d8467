// Package gpulet holds the gpu-let data model — GPUs, gpu-lets, model demands
// with their latency profiles L(b,p), placements and plans — and the planners
// that build plans: elastic partitioning (with and without the interference
// model), the SBP baseline and the exhaustive ideal. It does no I/O and imports
// no hardware package.
package gpulet
