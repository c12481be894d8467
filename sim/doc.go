// Package sim simulates a whole gpuletd node in virtual time and runs the
// experiments behind `gpuletd simulate` and `gpuletd bench`.
//
// [Run] takes a workload file (package workload: devices, models, arrival
// processes, rate phases, the planner's period) and runs the node's real
// code on it: the planner (gpulet.Run) at the start and every reorganize
// period on EWMA-measured rates, as the daemon's planner loop does; the
// router (sched.Route) over the gpu-lets serving each model, weighted by the
// plan, on the state the daemon's router would have (each gpu-let's state at
// most PublishInterval old, and as every batch's answers leave it, with the
// router's own predictions in between); and in every gpu-let the scheduling
// core (sched.Scheduler) with the chosen policy, its batches ended and
// calibrated through the executor's call (Scheduler.BatchEnded). Only the
// GPUs are emulated: a batch takes the reference set's solo time L(b,p)
// (refset.Physics) times a seeded jitter, slowed while a neighbouring
// gpu-let of the same GPU runs (the physics' co-located latency), and each
// executor calibrates ℓ(b) against measured batch times as the real one
// does. Arrivals come from package arrival
// (Poisson, Gamma, replayed traces), one stream per model. A plan change
// starts new gpu-lets beside the old ones; they serve after a startup delay,
// then the routes switch and the gpu-lets the plan drops drain.
//
// The result counts every request exactly once (within its SLO, late, or
// rejected with a reason) and gives goodput, SLO attainment, per-model
// latency percentiles and batch sizes, GPU busy fractions and the sum of the
// gpu-let sizes in use over time, the plans applied and the SLO violations
// per window. The same workload and seed give the same result.
//
// The experiments (RunTable2, RunDeferredVsEager, RunFlatTop,
// RunGpuletVsTemporal, RunFluctuation) reproduce the papers' measurements
// with MaxGoodput, a search for the largest offered rate that keeps 99% of
// the requests within their SLO.
package sim
