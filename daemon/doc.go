// Package daemon is gpuletd serve: configuration, lifecycle, the KServe v2 and
// admin HTTP APIs, the router, the executor supervisor, the planner loop and
// metrics wiring. Algorithms live in the packages below it.
package daemon
