package mps

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/internal/container"
	"github.com/gpulet/gpuletd/internal/cpucg"
	"github.com/gpulet/gpuletd/mps/cpushare"
)

// Options are what a Manager is built from.
type Options struct {
	// Spec is the device configuration.
	Spec Spec
	// NVML is the NVML library (nvml.New() in the daemon, a mock in tests).
	// nil means no NVIDIA GPU is looked for.
	NVML nvml.Interface
	// Runner runs nvidia-cuda-mps-control; nil means ExecRunner{}.
	Runner Runner
	// Logger is the device layer's logger; nil means no logs.
	Logger *zap.Logger
	// CPUs are the cores the CPU device may use; nil means this process's
	// affinity mask (cpushare.Online).
	CPUs []int
	// OnXid hears of each Xid error the driver reports for a GPU, from
	// Start to Close (watchXids); nil: they are logged and counted alone.
	OnXid func(XidEvent)
	// BorrowMPS says that the MPS control daemons of the spec's runtime
	// directory belong to another process: a daemon serving from it, beside
	// which `gpuletd profile` runs. Start uses them as they run and starts
	// none; they are never restarted nor quit, and no compute mode is
	// changed.
	BorrowMPS bool
}

// Manager owns the devices: NVML, the MPS control daemons and their
// supervision, MIG changes, the CPU core pool and the leases of gpu-lets.
// The daemon makes one with New, calls Start, and Close at the end. It is
// safe for concurrent use.
type Manager struct {
	spec   Spec
	runner Runner
	log    *zap.Logger
	lib    nvml.Interface
	nvmlUp bool

	mu       sync.Mutex
	inv      Inventory
	handles  map[string]nvml.Device
	cpu      *cpushare.Allocator
	leases   map[string]int // device id → gpu-lets leased
	migShare map[string]int // MIG UUID → percent leased
	migMPS   map[string]*migMPS
	daemons  []*ControlDaemon
	sups     map[string]*Supervisor // device id → its daemon's supervisor
	modes    map[string]nvml.ComputeMode
	onXid    func(XidEvent)
	borrow   bool // Options.BorrowMPS
	keepMPS  bool // KeepMPS was called
	stop     context.CancelFunc
	wg       sync.WaitGroup
	started  bool
	closed   bool
}

// needsNVML says whether the spec may use NVIDIA GPUs.
func (s Spec) needsNVML() bool {
	switch s.Mode {
	case ModeAuto, ModeNVIDIA:
		return true
	case ModeList:
		for _, e := range s.Entries {
			if e.Kind == KindNVIDIA {
				return true
			}
		}
	}
	return false
}

// New opens NVML when the spec may use GPUs, discovers the devices and
// builds the inventory. Without a usable NVML (no driver, no
// libnvidia-ml.so.1, Init failing) there are no NVIDIA devices: that is
// logged, and is an error (ErrNoNVIDIA) only when the spec demands them.
func New(opts Options) (*Manager, error) {
	log := opts.Logger
	if log == nil {
		log = zap.NewNop()
	}
	runner := opts.Runner
	if runner == nil {
		runner = ExecRunner{}
	}
	m := &Manager{
		spec: opts.Spec, runner: runner, log: log, lib: opts.NVML,
		handles: map[string]nvml.Device{}, leases: map[string]int{},
		migShare: map[string]int{}, migMPS: map[string]*migMPS{},
		sups: map[string]*Supervisor{}, modes: map[string]nvml.ComputeMode{}, onXid: opts.OnXid,
		borrow: opts.BorrowMPS,
	}
	m.spec.MPS = m.spec.MPS.withDefaults()
	if err := m.spec.check(); err != nil {
		return nil, fmt.Errorf("open devices: %w", err)
	}
	src := Sources{CPUName: cpuModelName(), CPUs: opts.CPUs}
	if src.CPUs == nil {
		cpus, err := cpushare.Online()
		if err != nil {
			return nil, fmt.Errorf("open devices: %w", err)
		}
		src.CPUs = cpus
		if l, err := cpucg.Self(); err != nil {
			log.Warn("CPU cgroup not read: its CPU limit, if any, is not counted", zap.Error(err))
		} else {
			src.CPULimit, src.CPULimitOf = l.CPUs, l.Of
		}
	}
	if m.spec.needsNVML() {
		src.GPUs, src.GPUsErr = m.openNVML()
	}
	inv, err := BuildInventory(m.spec, src, log)
	if err != nil {
		m.shutdownNVML()
		return nil, fmt.Errorf("open devices: %w", err)
	}
	m.inv = inv
	for _, d := range inv.Devices {
		if d.Kind == KindCPU {
			m.cpu = cpushare.NewAllocator(d.Cores)
		}
	}
	for _, d := range inv.Devices {
		log.Info("device", zap.String("id", d.ID), zap.String("kind", string(d.Kind)), zap.String("name", d.Name),
			zap.String("type", d.Type), zap.String("backend", string(d.Backend)), zap.Ints("sizes", d.Sizes),
			zap.String("health", string(d.Health)))
	}
	return m, nil
}

// openNVML initialises NVML and discovers the GPUs. Nothing but Init is
// called when Init fails: go-nvml can kill the process on calls into a
// library that did not load.
func (m *Manager) openNVML() ([]Device, error) {
	if m.lib == nil {
		return nil, errors.New("no NVML library given")
	}
	if err := guard("init NVML", m.lib.Init); err != nil {
		fix := "is the NVIDIA driver installed? libnvidia-ml.so.1 must be loadable"
		if container.Detect() {
			fix = container.GPUs
		}
		m.log.Warn("NVML unavailable: no NVIDIA GPU will be used ("+fix+")", zap.Error(err))
		return nil, err
	}
	m.nvmlUp = true
	if v, err := call("get driver version", m.lib.SystemGetDriverVersion); err == nil {
		m.log.Info("NVML initialised", zap.String("driver", v))
	}
	gpus, err := Discover(m.lib, m.log)
	if err != nil {
		m.log.Warn("NVIDIA GPUs cannot be listed", zap.Error(err))
		return nil, err
	}
	for _, d := range gpus {
		if h, err := call("get device handle", func() (nvml.Device, nvml.Return) { return m.lib.DeviceGetHandleByIndex(d.Index) }); err == nil {
			m.handles[d.ID] = h
		}
	}
	return gpus, nil
}

func (m *Manager) shutdownNVML() {
	if !m.nvmlUp {
		return
	}
	m.nvmlUp = false
	if err := guard("shut down NVML", m.lib.Shutdown); err != nil {
		m.log.Warn("NVML shutdown failed", zap.Error(err))
	}
}

// Start brings up MPS for every GPU partitioned with MPS: it prepares the
// pipe and log directories (failing at once, naming a directory that cannot
// be used), sets EXCLUSIVE_PROCESS when the spec allows it, starts (or
// checks, for an existing one) each control daemon and then supervises them
// until Close. If one fails to start, those already started are stopped.
func (m *Manager) Start(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	if m.started {
		return nil
	}
	ms := m.spec.MPS
	cfg := func(d Device) ControlConfig {
		return ControlConfig{
			DeviceID: d.ID, Binary: ms.ControlBinary, PipeDir: d.MPSPipeDir, LogDir: d.MPSLogDir,
			VisibleDevices: d.UUID, Foreground: ms.Foreground, QueryTimeout: ms.QueryTimeout, StartTimeout: ms.StartTimeout,
			Existing: m.borrow,
		}
	}
	var shared *ControlDaemon
	owner := map[*ControlDaemon][]string{}
	for _, d := range m.inv.Devices {
		if d.Kind != KindNVIDIA || d.Backend != BackendMPS || d.Health == HealthFailed {
			continue
		}
		var cd *ControlDaemon
		if ms.PipeDirectory != "" {
			if shared == nil {
				c := cfg(d)
				c.DeviceID, c.LogDir, c.VisibleDevices, c.Existing = "shared", "", "", true
				shared = NewControlDaemon(c, m.runner, m.log.Named("mps"))
				m.daemons = append(m.daemons, shared)
			}
			cd = shared
		} else {
			cd = NewControlDaemon(cfg(d), m.runner, m.log.Named("mps"))
			if err := cd.Prepare(); err != nil {
				m.daemons = nil
				return fmt.Errorf("start MPS: %w", err)
			}
			m.daemons = append(m.daemons, cd)
		}
		owner[cd] = append(owner[cd], d.ID)
	}
	for _, cd := range m.daemons {
		if ms.SetComputeMode && !cd.cfg.Existing {
			id := owner[cd][0]
			prev, err := setExclusiveProcess(m.handles[id])
			if err != nil {
				m.abortStart(ctx)
				return fmt.Errorf("start MPS on %s: %w", id, err)
			}
			m.modes[id] = prev
			m.log.Info("compute mode set to EXCLUSIVE_PROCESS", zap.String("device", id), zap.Int("previous", int(prev)))
		}
		if err := cd.Start(ctx); err != nil {
			m.abortStart(ctx)
			return fmt.Errorf("start MPS: %w", err)
		}
	}
	supCtx, cancel := context.WithCancel(context.Background())
	m.stop = cancel
	for _, cd := range m.daemons {
		sup := NewSupervisor(cd, ms.HealthInterval, Backoff{Min: ms.BackoffMin, Max: ms.BackoffMax}, m.log.Named("mps"))
		for _, id := range owner[cd] {
			m.sups[id] = sup
		}
		m.wg.Go(func() { sup.Run(supCtx) })
	}
	if m.nvmlUp && len(m.handles) > 0 {
		m.wg.Go(func() { m.watchXids(supCtx, m.onXid) })
	}
	m.started = true
	return nil
}

// abortStart stops what a failed Start began; m.mu is held.
func (m *Manager) abortStart(ctx context.Context) {
	for _, cd := range m.daemons {
		if err := cd.Quit(ctx); err != nil {
			m.log.Warn("cannot stop MPS control daemon after a failed start", zap.Error(err))
		}
	}
	m.daemons = nil
	m.restoreModes()
}

// restoreModes puts back compute modes Start changed; m.mu is held.
func (m *Manager) restoreModes() error {
	var errs []error
	for id, mode := range m.modes {
		if err := restoreComputeMode(m.handles[id], mode); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", id, err))
		}
		delete(m.modes, id)
	}
	return errors.Join(errs...)
}

// Close stops supervision, quits the MPS control daemons gpuletd started
// (none borrowed, none after KeepMPS), restores compute modes and shuts
// NVML down. Leases are not waited for:
// the daemon stops its executors first.
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	stop := m.stop
	m.mu.Unlock()
	if stop != nil {
		stop()
	}
	m.wg.Wait()

	m.mu.Lock()
	defer m.mu.Unlock()
	var errs []error
	if err := m.stopMIGMPSLocked(ctx, func(string) bool { return false }); err != nil {
		errs = append(errs, err)
	}
	if m.keepMPS {
		// MPS left to another process keeps the mode it runs under.
		clear(m.modes)
	} else {
		for _, cd := range m.daemons {
			if err := cd.Quit(ctx); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for _, sup := range m.sups {
		sup.markStopped()
	}
	if err := m.restoreModes(); err != nil {
		errs = append(errs, err)
	}
	m.shutdownNVML()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close devices: %w", err)
	}
	return nil
}

// KeepMPS makes Close leave the MPS control daemons Start began running,
// and the compute modes it set: another process has come to use them (a
// daemon started on the same runtime directory while `gpuletd profile`
// ran, which found them answering and took them over).
func (m *Manager) KeepMPS() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.keepMPS = true
}

// Inventory returns the devices now: NVML's memory, utilisation, processes
// and MIG instances re-read, MPS daemon states and leases folded into health.
func (m *Manager) Inventory() Inventory {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.closed {
		m.refreshLocked()
	}
	inv := m.inv.Clone()
	m.foldMIGLocked(&inv)
	for i := range inv.Devices {
		d := &inv.Devices[i]
		d.Leased = m.leases[d.ID]
		sup, ok := m.sups[d.ID]
		if !ok {
			continue
		}
		st := sup.Status()
		d.MPS = &st
		if d.Health == HealthFailed {
			continue
		}
		switch st.State {
		case MPSRestarting:
			d.Health, d.HealthDetail = HealthDegraded, "MPS control daemon is being restarted: "+st.LastError
		case MPSUnreachable:
			d.Health, d.HealthDetail = HealthFailed, "MPS control daemon does not answer: "+st.LastError
		case MPSStopped:
			d.Health, d.HealthDetail = HealthFailed, "MPS control daemon stopped"
		}
	}
	return inv
}

// refreshLocked re-reads NVML's dynamic fields; m.mu is held.
func (m *Manager) refreshLocked() {
	for i := range m.inv.Devices {
		d := &m.inv.Devices[i]
		if h, ok := m.handles[d.ID]; ok && d.Kind == KindNVIDIA && d.Health != HealthFailed {
			refresh(h, d, m.log)
		}
	}
}

// SetSMCount records a device's SM count, as an executor learned it.
func (m *Manager) SetSMCount(deviceID string, n int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range m.inv.Devices {
		if m.inv.Devices[i].ID == deviceID {
			m.inv.Devices[i].SMCount = n
			return nil
		}
	}
	return fmt.Errorf("set SM count: %w: %q", ErrUnknownDevice, deviceID)
}

// ApplyMIG changes a MIG GPU's instances to the profiles wanted (see
// ApplyMIGLayout); instances leased to gpu-lets are never destroyed.
func (m *Manager) ApplyMIG(deviceID string, want []string) ([]MIGInstance, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	d, err := m.inv.Device(deviceID)
	if err != nil {
		return nil, err
	}
	h, ok := m.handles[deviceID]
	if !ok || d.Backend != BackendMIG {
		return nil, fmt.Errorf("apply MIG layout on %s: %w: partitioned with %s", deviceID, ErrMIGNotEnabled, d.Backend)
	}
	// An MPS daemon inside an instance no gpu-let holds would count as a
	// process on it and block its destruction: stop those first.
	if err := m.stopMIGMPSLocked(context.Background(), func(uuid string) bool {
		return m.migShare[uuid] > 0 || m.migMPS[uuid].device != deviceID
	}); err != nil {
		return nil, fmt.Errorf("apply MIG layout on %s: %w", deviceID, err)
	}
	busy := make(map[string]bool, len(m.migShare))
	for uuid := range m.migShare {
		busy[uuid] = true
	}
	insts, err := ApplyMIGLayout(h, d.Name, want, busy, m.log.Named("mig").With(zap.String("device", deviceID)))
	m.refreshLocked()
	if err != nil {
		return nil, err
	}
	return slices.Clone(insts), nil
}
