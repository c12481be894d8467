package mps

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.uber.org/zap"
)

// noInstance is NVML's "no GPU/compute instance" id in a ProcessInfo.
const noInstance = 0xFFFFFFFF

// Discover lists the NVIDIA GPUs of an initialised NVML: identity, memory,
// compute capability, MIG state, utilisation and processes. Partition
// fields (Backend, Sizes, MaxGpulets) are left for BuildInventory. A GPU NVML
// cannot describe is still listed, with HealthFailed and the reason, so that a
// config naming it gets a clear answer; only a failing device count is an
// error.
func Discover(lib nvml.Interface, log *zap.Logger) ([]Device, error) {
	n, err := call("get device count", lib.DeviceGetCount)
	if err != nil {
		return nil, fmt.Errorf("discover NVIDIA GPUs: %w", err)
	}
	out := make([]Device, 0, n)
	for i := range n {
		d := Device{ID: fmt.Sprintf("gpu%d", i), Index: i, Kind: KindNVIDIA, Health: HealthOK}
		h, err := call(fmt.Sprintf("get handle of GPU %d", i), func() (nvml.Device, nvml.Return) { return lib.DeviceGetHandleByIndex(i) })
		if err == nil {
			err = describe(h, &d, log)
		}
		if err != nil {
			log.Warn("cannot describe NVIDIA GPU", zap.String("device", d.ID), zap.Error(err))
			d.Health, d.HealthDetail = HealthFailed, err.Error()
		}
		out = append(out, d)
	}
	return out, nil
}

// describe fills the static and dynamic fields of d from NVML. Name and UUID
// are required; everything else is left unknown when NVML does not say.
func describe(h nvml.Device, d *Device, log *zap.Logger) error {
	var err error
	if d.Name, err = call("get name", h.GetName); err != nil {
		return err
	}
	if d.UUID, err = call("get UUID", h.GetUUID); err != nil {
		return err
	}
	d.Type = TypeFromName(d.Name)
	if err := guard("get compute capability", func() nvml.Return {
		major, minor, ret := h.GetCudaComputeCapability()
		d.ComputeCapability = fmt.Sprintf("%d.%d", major, minor)
		return ret
	}); err != nil {
		d.ComputeCapability = ""
		log.Debug("no compute capability", zap.String("device", d.ID), zap.Error(err))
	}
	if mode, err := call("get compute mode", h.GetComputeMode); err == nil {
		d.ComputeMode = computeModeName(mode)
	}
	mig, err := readMIGState(h)
	switch {
	case err == nil:
		d.MIG = mig
	case notSupported(err):
	default:
		log.Warn("cannot read MIG state", zap.String("device", d.ID), zap.Error(err))
	}
	refresh(h, d, log)
	return nil
}

// refresh re-reads what changes while a device runs: free memory,
// utilisation, power, processes and, on MIG, the instances.
func refresh(h nvml.Device, d *Device, log *zap.Logger) {
	mem, err := call("get memory info", h.GetMemoryInfo)
	switch lost := lostWords(err); {
	case err == nil:
		d.MemoryTotal, d.MemoryFree = mem.Total, mem.Free
	case lost != "":
		// A GPU lost stays lost until it is reset or the host
		// rebooted: failed for the daemon's life (refresh skips it).
		d.Health, d.HealthDetail = HealthFailed, lost
		log.Error("NVIDIA GPU lost", zap.String("device", d.ID), zap.String("uuid", d.UUID), zap.String("why", lost))
		return
	default:
		log.Debug("no memory info", zap.String("device", d.ID), zap.Error(err))
	}
	readRemap(h, d, log)
	if u, err := call("get utilization", h.GetUtilizationRates); err == nil {
		d.Utilization = &Utilization{GPU: int(u.Gpu), Memory: int(u.Memory)}
	} else {
		d.Utilization = nil // not supported in MIG mode, for one
	}
	readPower(h, d)
	procs, procErr := processes(h)
	if procErr != nil {
		log.Debug("no process list", zap.String("device", d.ID), zap.Error(procErr))
	}
	d.Processes = procs
	if d.MIG != nil && d.MIG.Enabled {
		insts, _, err := readMIGInstances(h, procs, procErr == nil)
		if err != nil {
			log.Warn("cannot read MIG instances", zap.String("device", d.ID), zap.Error(err))
		} else {
			d.MIG.Instances = insts
		}
	}
}

// processes lists the compute and MPS processes on a device, once each.
func processes(h nvml.Device) ([]GPUProcess, error) {
	compute, err := call("get compute processes", h.GetComputeRunningProcesses)
	if err != nil {
		return nil, err
	}
	seen := map[uint32]bool{}
	var out []GPUProcess
	add := func(list []nvml.ProcessInfo) {
		for _, p := range list {
			if seen[p.Pid] {
				continue
			}
			seen[p.Pid] = true
			out = append(out, GPUProcess{
				PID: int(p.Pid), UsedMemory: usedMemory(p.UsedGpuMemory),
				GPUInstance: instanceID(p.GpuInstanceId), ComputeInstance: instanceID(p.ComputeInstanceId),
			})
		}
	}
	add(compute)
	if mpsProcs, err := call("get MPS processes", h.GetMPSComputeRunningProcesses); err == nil {
		add(mpsProcs)
	}
	return out, nil
}

// usedMemory is a process's GPU memory as NVML gives it, 0 where NVML says
// it is not available (all bits set: what some drivers give for MPS
// clients and processes in containers, which a reader would otherwise take
// for 16 EiB).
func usedMemory(v uint64) uint64 {
	if v == math.MaxUint64 {
		return 0
	}
	return v
}

func instanceID(v uint32) int {
	if v == noInstance {
		return -1
	}
	return int(v)
}

// TypeFromName turns an NVML product name into the device type latency
// profiles are keyed by: lower case, words joined by '-', the vendor dropped
// ("NVIDIA H100 80GB HBM3" → "h100-80gb-hbm3").
func TypeFromName(name string) string {
	words := strings.FieldsFunc(strings.ToLower(name), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	out := words[:0]
	for _, w := range words {
		if w != "nvidia" {
			out = append(out, w)
		}
	}
	if len(out) == 0 {
		return "gpu"
	}
	return strings.Join(out, "-")
}

// untilReset ends the health detail of a GPU that failed until a reset.
const untilReset = "nothing more runs on it until it is reset (nvidia-smi -r) or the host rebooted"

// lostWords says what to do about a GPU whose NVML call failed with err
// because the GPU can no longer be used (it fell off the bus, or waits for
// a reset); "" for any other failure.
func lostWords(err error) string {
	switch {
	case errors.Is(err, nvml.ERROR_GPU_IS_LOST):
		return fmt.Sprintf("the GPU is lost, fallen off the bus (%v; the kernel log says which Xid): %s", err, untilReset)
	case errors.Is(err, nvml.ERROR_RESET_REQUIRED):
		return fmt.Sprintf("the GPU needs a reset (%v): %s", err, untilReset)
	}
	return ""
}

// remapPending begins the health detail of a GPU whose memory rows wait to
// be remapped.
const remapPending = "memory rows wait to be remapped"

// readRemap reads a GPU's row remapping (A100 and later: rows of memory
// with uncorrectable errors are remapped at the next reset). Rows waiting
// for it degrade the device until they are remapped; a remapping that
// failed fails the device, for good. GPUs that do not remap rows leave d
// as it is.
func readRemap(h nvml.Device, d *Device, log *zap.Logger) {
	var unc int
	var pending, failed bool
	err := guard("get remapped rows", func() nvml.Return {
		var ret nvml.Return
		_, unc, pending, failed, ret = h.GetRemappedRows()
		return ret
	})
	if err != nil {
		if !notSupported(err) {
			log.Debug("no row remapping state", zap.String("device", d.ID), zap.Error(err))
		}
		return
	}
	ours := d.Health == HealthDegraded && strings.HasPrefix(d.HealthDetail, remapPending)
	switch {
	case failed && d.Health != HealthFailed:
		d.Health, d.HealthDetail = HealthFailed, "a memory row remapping failed: the GPU has memory errors it cannot remap, and needs service"
		log.Error("NVIDIA GPU failed", zap.String("device", d.ID), zap.String("why", d.HealthDetail))
	case pending && d.Health == HealthOK:
		d.Health = HealthDegraded
		d.HealthDetail = fmt.Sprintf("%s after uncorrectable memory errors (%d rows so far): reset the GPU (nvidia-smi -r) when nothing runs on it", remapPending, unc)
		log.Warn("NVIDIA GPU degraded", zap.String("device", d.ID), zap.String("why", d.HealthDetail))
	case !pending && !failed && ours:
		d.Health, d.HealthDetail = HealthOK, ""
		log.Info("NVIDIA GPU's memory rows remapped", zap.String("device", d.ID))
	}
}
