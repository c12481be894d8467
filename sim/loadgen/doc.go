// Package loadgen is an open-loop HTTP load generator for KServe v2
// inference servers such as gpuletd serve.
//
// Requests leave on the schedule an arrival process (package arrival) draws,
// whether or not earlier requests have been answered: a slow server never
// slows the send rate. A bounded pool of workers carries the requests; when
// every worker is busy the request is counted as dropped by the client and
// the schedule goes on. Latencies go into HDR histograms; the report gives
// counts by status, goodput (answers within the model's SLO per second), SLO
// attainment, latency percentiles, the achieved send rate and how late the
// requests left against their schedule.
package loadgen
