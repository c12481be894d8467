// Package profiler measures latency curves L(b,p), utilisations and
// co-location pairs, fits curves to them, and keeps them in the SQLite store.
//
// Measure runs one Job: a model on a device over partition sizes × batch
// sizes. On the CPU and on NVIDIA GPUs it starts one real executor per size
// (ProcessLauncher: the device layer leases the core share or the MPS share,
// so the share is real), loads the model with warm-up batches, and samples
// the engine time of batches of b rows until a StopRule is met: the 95%
// distribution-free confidence intervals of the median (±2%) and of the p99
// (±10%), with caps on samples and time. Each point goes to the store as soon
// as it is measured, keyed by the model file's sha256 and the device type,
// inside a profile run; a complete stored profile is reused unless the job is
// forced. A cancelled job keeps what it measured and marks the run
// incomplete. On emulated devices the reference set's physics is read
// instead (the result's Source says so).
//
// Around the measurements: FitLine (ℓ(b) = α·b + β per size, with R² and the
// largest relative error), KneeAtBatch and Knees (the knee of the
// affordable-rate curve b / L(b,p), computed by gpulet.Knee, the planner's
// MAXEFFICIENTPARTITION), utilisation meters (NCU for Nsight Compute, GPM for
// NVML GPU performance monitoring; unknown values stay NaN, stored as NULL),
// co-locations of a model with itself on two gpu-lets, ImportSet (a
// reference set into the store as an emulated device type), WriteTable,
// WritePlot and ProgressBar for `gpuletd profile`.
package profiler
