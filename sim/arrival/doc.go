// Package arrival generates the arrival processes of workloads: Poisson,
// Gamma (bursty or smooth, by shape or coefficient of variation) and the
// replay of real request timestamps from a trace, each as a stream of
// inter-arrival gaps at a target mean rate.
//
// Everything here is pure and seeded: the same spec, rate and seed give the
// same gaps. The only input is ReadTrace, which decodes a trace from an
// io.Reader; opening files is the caller's business.
package arrival
