// Package mps is the device layer: NVML discovery, the MPS control daemon, MIG
// instances, CPU core partitions and emulated GPUs, and the environment an
// executor needs for its gpu-let. It never decides placement.
package mps
