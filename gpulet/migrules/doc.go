// Package migrules holds the MIG (Multi-Instance GPU) profile tables of the
// GPUs gpuletd knows — profile sizes, memory slots and allowed start slots — and
// the pure placement search that says whether a set of GPU-instance profiles
// fits on one GPU. It imports nothing hardware, so the planner can use it as a
// feasibility constraint and the device layer can check a layout before it
// touches a GPU.
package migrules
