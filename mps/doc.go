// Package mps is the device layer: NVML discovery, the MPS control daemon, MIG
// instances, CPU core partitions and emulated GPUs, and the environment an
// executor needs for its gpu-let. It never decides placement.
//
// The daemon uses it through a Manager:
//
//	m, err := mps.New(mps.Options{Spec: spec, NVML: nvml.New(), Logger: log})
//	err = m.Start(ctx)             // MPS control daemons, supervised until Close
//	inv := m.Inventory()           // devices, sizes, health, MIG instances, MPS state
//	lease, err := m.Lease(mps.Gpulet{ID: "g1", Device: "gpu0", Size: 40})
//	cmd.Env = append(os.Environ(), lease.Env()...) // the executor's environment
//	lease.Release()                // when the executor has exited
//	insts, err := m.ApplyMIG("gpu1", []string{"4g", "3g"})
//	err = m.Close(ctx)             // quits MPS, restores compute modes, shuts NVML down
//
// Without a usable NVML (no driver, no libnvidia-ml.so.1) there are no
// NVIDIA devices, which is logged, and an error only when the Spec demands
// them. The pieces are usable alone: Discover, BuildInventory,
// Inventory.ExecutorEnv, ControlDaemon and Supervisor, ApplyMIGLayout.
// Sub-packages hold what other packages need without NVML: migrules (MIG
// profile tables and placement, for the planner), cpushare (core shares and
// pinning) and execenv (the environment contract, for the executor).
package mps
