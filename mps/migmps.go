package mps

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"go.uber.org/zap"
)

// migMPS is an MPS control daemon gpuletd runs inside one MIG instance, so
// that several executors share the instance by thread percentage.
type migMPS struct {
	device  string
	cd      *ControlDaemon
	sup     *Supervisor
	cancel  context.CancelFunc
	stopped sync.WaitGroup
}

// StartMIGMPS starts an MPS control daemon inside the MIG instance uuid of
// deviceID (once; later calls return the running one's pipe directory). Its
// pipes and logs live under <runtime_dir>/mps/<uuid>/. A MIG gpu-let with a
// MIGShare then runs as an MPS client of that daemon. The daemon is stopped
// when no lease holds the instance and its layout changes, and at Close.
func (m *Manager) StartMIGMPS(ctx context.Context, deviceID, uuid string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return "", ErrClosed
	}
	if mm, ok := m.migMPS[uuid]; ok {
		return mm.cd.cfg.PipeDir, nil
	}
	d, err := m.inv.Device(deviceID)
	if err != nil {
		return "", fmt.Errorf("start MPS in MIG instance %s: %w", uuid, err)
	}
	if d.Backend != BackendMIG || d.MIG == nil {
		return "", fmt.Errorf("start MPS in MIG instance %s: %w: %s is partitioned with %s", uuid, ErrMIGNotEnabled, deviceID, d.Backend)
	}
	found := false
	for _, in := range d.MIG.Instances {
		found = found || (in.UUID == uuid && in.ComputeInstance >= 0)
	}
	if !found {
		return "", fmt.Errorf("start MPS in MIG instance %s: %w: no such compute instance on %s", uuid, ErrBadGpulet, deviceID)
	}
	ms := m.spec.MPS
	dir := filepath.Join(m.spec.RuntimeDir, "mps", uuid)
	cd := NewControlDaemon(ControlConfig{
		DeviceID: deviceID + "/" + uuid, Binary: ms.ControlBinary,
		PipeDir: filepath.Join(dir, "pipe"), LogDir: filepath.Join(dir, "log"),
		VisibleDevices: uuid, Foreground: ms.Foreground, QueryTimeout: ms.QueryTimeout, StartTimeout: ms.StartTimeout,
	}, m.runner, m.log.Named("mps"))
	if err := cd.Prepare(); err != nil {
		return "", fmt.Errorf("start MPS in MIG instance %s: %w", uuid, err)
	}
	if err := cd.Start(ctx); err != nil {
		return "", fmt.Errorf("start MPS in MIG instance %s: %w", uuid, err)
	}
	supCtx, cancel := context.WithCancel(context.Background())
	mm := &migMPS{device: deviceID, cd: cd, cancel: cancel,
		sup: NewSupervisor(cd, ms.HealthInterval, Backoff{Min: ms.BackoffMin, Max: ms.BackoffMax}, m.log.Named("mps"))}
	mm.stopped.Go(func() { mm.sup.Run(supCtx) })
	m.migMPS[uuid] = mm
	m.log.Info("MPS control daemon started inside MIG instance", zap.String("device", deviceID), zap.String("instance", uuid),
		zap.String("pipe_dir", cd.cfg.PipeDir))
	return cd.cfg.PipeDir, nil
}

// stopMIGMPSLocked stops the MIG instances' MPS daemons that keep(uuid)
// rejects; m.mu is held.
func (m *Manager) stopMIGMPSLocked(ctx context.Context, keep func(uuid string) bool) error {
	var errs []error
	for uuid, mm := range m.migMPS {
		if keep(uuid) {
			continue
		}
		mm.cancel()
		mm.stopped.Wait()
		mm.sup.markStopped()
		if err := mm.cd.Quit(ctx); err != nil {
			errs = append(errs, fmt.Errorf("stop MPS in MIG instance %s: %w", uuid, err))
		}
		delete(m.migMPS, uuid)
	}
	return errors.Join(errs...)
}

// FreeMIGInstances lists deviceID's compute instances that have a UUID and
// that no gpu-let leases.
func (m *Manager) FreeMIGInstances(deviceID string) ([]MIGInstance, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, err := m.inv.Device(deviceID)
	if err != nil {
		return nil, err
	}
	if d.MIG == nil {
		return nil, nil
	}
	var out []MIGInstance
	for _, in := range d.MIG.Instances {
		if in.ComputeInstance >= 0 && in.UUID != "" && m.migShare[in.UUID] == 0 {
			out = append(out, in)
		}
	}
	return out, nil
}

// foldMIGLocked writes leases and MPS daemons into inv's MIG instances;
// m.mu is held.
func (m *Manager) foldMIGLocked(inv *Inventory) {
	for i := range inv.Devices {
		d := &inv.Devices[i]
		if d.MIG == nil {
			continue
		}
		for j := range d.MIG.Instances {
			in := &d.MIG.Instances[j]
			in.Leased = m.migShare[in.UUID]
			if mm, ok := m.migMPS[in.UUID]; ok {
				in.MPSPipeDir = mm.cd.cfg.PipeDir
			}
		}
	}
}
