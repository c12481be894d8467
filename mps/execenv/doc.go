// Package execenv is the contract between the daemon and an executor about
// the device a gpu-let runs on: the environment variables the daemon sets
// (CUDA_VISIBLE_DEVICES, the MPS variables, GPULETD_* for CPU cores and
// emulated devices), how they are written, and how the executor reads them
// back. It has no hardware dependency so the executor can import it cheaply.
package execenv
