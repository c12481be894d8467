package daemon

import (
	"context"
	"sync"
)

// gate lets one caller through at a time; its zero value is open. A
// caller whose context ends while it waits gives up.
type gate struct {
	once sync.Once
	ch   chan struct{}
}

// enter waits for the gate and passes it, or returns ctx's error.
func (g *gate) enter(ctx context.Context) error {
	g.once.Do(func() { g.ch = make(chan struct{}, 1) })
	select {
	case g.ch <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// leave opens the gate to the next caller.
func (g *gate) leave() { <-g.ch }
