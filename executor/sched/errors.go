package sched

import "errors"

var (
	// ErrUnknownModel is returned for a model id the scheduler does not serve.
	ErrUnknownModel = errors.New("unknown model")
	// ErrModelExists is returned when a model id is added twice.
	ErrModelExists = errors.New("model already present")
	// ErrBadModelID is returned for a model id beyond MaxModels.
	ErrBadModelID = errors.New("model id out of range")
	// ErrBadLatency is returned for a latency table that cannot be used.
	ErrBadLatency = errors.New("bad latency table")
	// ErrBadPolicy is returned for a policy string or value that is not valid.
	ErrBadPolicy = errors.New("bad scheduling policy")
	// ErrNoBatch is returned by BatchDone when no batch with that sequence
	// number is running (none at all, or it was preempted).
	ErrNoBatch = errors.New("no such running batch")
	// ErrNoTarget is returned by Route when no target may take requests.
	ErrNoTarget = errors.New("no routable target")
	// ErrBadConfig is returned for a simulation or benchmark setting that is
	// out of range.
	ErrBadConfig = errors.New("bad configuration")
	// ErrTimeOrder is returned by the simulator when a source yields a request
	// that arrives before the previous one.
	ErrTimeOrder = errors.New("arrivals out of order")
)
