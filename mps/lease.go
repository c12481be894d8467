package mps

import (
	"fmt"
	"slices"
	"sync"
)

// Lease is a gpu-let's hold on its device: CPU cores, an MPS client slot, a
// MIG instance. Release gives it back; an executor's environment comes with it.
type Lease struct {
	gpulet  Gpulet
	env     []string
	release func()
	once    sync.Once
}

// Gpulet is the leased gpu-let, with the cores a CPU gpu-let got.
func (l *Lease) Gpulet() Gpulet {
	g := l.gpulet
	g.Cores = slices.Clone(g.Cores)
	return g
}

// Env is the executor's environment (see Inventory.ExecutorEnv).
func (l *Lease) Env() []string { return slices.Clone(l.env) }

// Release gives the resources back; later calls do nothing.
func (l *Lease) Release() { l.once.Do(l.release) }

// Lease reserves what an executor for g needs and returns its environment.
// A CPU gpu-let gets cores no other lease holds, but those it may take over
// (Gpulet.TakeOver); an MPS gpu-let takes one of the GPU's MaxMPSClients
// client slots (the 49th is refused with ErrMPSClientLimit); a MIG gpu-let
// marks its instance busy so that ApplyMIG will not destroy it.
func (m *Manager) Lease(g Gpulet) (*Lease, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	d, err := m.inv.Device(g.Device)
	if err != nil {
		return nil, fmt.Errorf("lease gpu-let %s: %w", g.ID, err)
	}
	if d.Health == HealthFailed {
		return nil, fmt.Errorf("lease gpu-let %s: %w: %s has failed: %s", g.ID, ErrBadGpulet, d.ID, d.HealthDetail)
	}
	g.Cores = slices.Clone(g.Cores)
	var undo []func()
	rollback := func() {
		for _, f := range slices.Backward(undo) {
			f()
		}
	}
	switch {
	case d.Kind == KindCPU:
		if len(g.Cores) > 0 {
			return nil, fmt.Errorf("lease gpu-let %s: %w: cores are allocated by the lease, not given", g.ID, ErrBadGpulet)
		}
		if g.Shared {
			cores, err := m.cpu.Borrow(g.Size)
			if err != nil {
				return nil, fmt.Errorf("lease gpu-let %s on %s: %w", g.ID, d.ID, err)
			}
			g.Cores = cores
			break
		}
		cores, err := m.cpu.Allocate(g.ID, g.Size, g.TakeOver...)
		if err != nil {
			return nil, fmt.Errorf("lease gpu-let %s on %s: %w", g.ID, d.ID, err)
		}
		g.Cores = cores
		undo = append(undo, func() { m.cpu.Release(g.ID, cores) })
	case d.Kind == KindNVIDIA && d.Backend == BackendMPS:
		if n := m.leases[d.ID]; n >= MaxMPSClients {
			return nil, fmt.Errorf("lease gpu-let %s on %s: %w: %d MPS clients already (MPS serves at most %d per GPU)",
				g.ID, d.ID, ErrMPSClientLimit, n, MaxMPSClients)
		}
	case d.Backend == BackendMIG:
		share := g.migPercent()
		if held := m.migShare[g.MIGInstance]; g.MIGInstance != "" && held+share > 100 {
			return nil, fmt.Errorf("lease gpu-let %s on %s: %w: MIG instance %s is leased already (%d%% held, %d%% asked)",
				g.ID, d.ID, ErrBadGpulet, g.MIGInstance, held, share)
		}
	}
	inv := m.inv.Clone()
	m.foldMIGLocked(&inv)
	env, err := inv.ExecutorEnv(g)
	if err != nil {
		rollback()
		return nil, fmt.Errorf("lease gpu-let %s: %w", g.ID, err)
	}
	m.leases[d.ID]++
	undo = append(undo, func() { m.leases[d.ID]-- })
	if g.MIGInstance != "" {
		uuid, share := g.MIGInstance, g.migPercent()
		m.migShare[uuid] += share
		undo = append(undo, func() {
			if m.migShare[uuid] -= share; m.migShare[uuid] <= 0 {
				delete(m.migShare, uuid)
			}
		})
	}
	return &Lease{gpulet: g, env: env, release: func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		rollback()
	}}, nil
}
