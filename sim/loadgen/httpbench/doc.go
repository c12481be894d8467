// Package httpbench measures what gpuletd serve's HTTP path costs: it runs
// the daemon as a child process and, in this process, a bare net/http
// server that answers the daemon's bytes, drives both with the same
// open-loop generator (package loadgen) and compares their latency, the
// time the executor accounts for, and the CPU the daemon and its executors
// spend per request.
package httpbench
