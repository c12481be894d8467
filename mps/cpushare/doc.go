// Package cpushare cuts the CPU into gpu-lets: a size in percent becomes a
// number of whole cores, an Allocator hands out disjoint cores, and Apply pins
// every thread of the current process to its cores (the executor calls it at
// start, before ONNX Runtime creates its thread pool).
package cpushare
