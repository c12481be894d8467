package daemon

// beginStop marks the node as stopping: readiness and the health service
// turn false, and the long-lived calls a reader holds open (the event
// stream, a gRPC ModelStreamInfer without a request in flight) end, so
// that the servers' graceful stop waits only for requests. They kept it
// for its whole grace before, which left the executors none.
func (n *node) beginStop() {
	n.stopping.Store(true)
	if n.stopped != nil {
		close(n.stopped)
	}
	n.events.endSubscriptions()
}
