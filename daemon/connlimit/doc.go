// Package connlimit bounds what HTTP clients can hold of the daemon: how
// many connections are open at once (Listener, which keeps a few places
// more for health checks and scrapes) and how many request body bytes are
// held in memory at once (Budget). Both keep counters for the
// daemon's metrics.
package connlimit
