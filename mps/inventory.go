package mps

import (
	"crypto/sha1"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"go.uber.org/zap"
)

// Sources are the facts BuildInventory builds from.
type Sources struct {
	// GPUs are the NVIDIA GPUs from Discover; empty when there are none.
	GPUs []Device
	// GPUsErr says why there are no GPUs (no library, Init failed), for messages.
	GPUsErr error
	// CPUs are the cores this process may use (cpushare.Online).
	CPUs []int
	// CPULimit is the CPU time this process's cgroup may use, in CPUs
	// (cpucg.Limit: docker run --cpus, a Kubernetes CPU limit, systemd's
	// CPUQuota=), 0 for none; CPULimitOf names the group that sets it.
	CPULimit   float64
	CPULimitOf string
	// CPUName is the CPU's model name, for display.
	CPUName string
}

// BuildInventory selects and describes the devices a Spec asks for: which
// ones, their partition backend, allowed sizes and gpu-let cap. Errors wrap
// ErrInvalidSpec (naming the field and value) or ErrNoNVIDIA.
func BuildInventory(spec Spec, src Sources, log *zap.Logger) (Inventory, error) {
	if err := spec.check(); err != nil {
		return Inventory{}, err
	}
	inv := Inventory{RuntimeDir: spec.RuntimeDir}
	noGPU := func(field string) error {
		why := "NVML found none"
		if src.GPUsErr != nil {
			why = src.GPUsErr.Error()
		}
		return fmt.Errorf("check %s: %w: %s", field, ErrNoNVIDIA, why)
	}
	addGPUs := func(devs []Device) error {
		for _, d := range devs {
			g, err := gpuDevice(spec, d, log)
			if err != nil {
				return err
			}
			inv.Devices = append(inv.Devices, g)
		}
		return nil
	}
	addCPU := func(field string) error {
		d, err := cpuDevice(spec, src, field, log)
		if err != nil {
			return err
		}
		inv.Devices = append(inv.Devices, d)
		return nil
	}

	switch spec.Mode {
	case ModeAuto:
		if len(src.GPUs) > 0 {
			if err := addGPUs(src.GPUs); err != nil {
				return Inventory{}, err
			}
			break
		}
		log.Info("no NVIDIA GPU: serving on the CPU", zap.NamedError("reason", src.GPUsErr))
		if err := addCPU("devices"); err != nil {
			return Inventory{}, err
		}
	case ModeNVIDIA:
		if len(src.GPUs) == 0 {
			return Inventory{}, noGPU("devices")
		}
		if err := addGPUs(src.GPUs); err != nil {
			return Inventory{}, err
		}
	case ModeCPU:
		if err := addCPU("devices"); err != nil {
			return Inventory{}, err
		}
	case ModeList:
		taken := map[string]string{}
		emu := 0
		for i, e := range spec.Entries {
			field := fmt.Sprintf("devices[%d]", i)
			switch e.Kind {
			case KindNVIDIA:
				if len(src.GPUs) == 0 {
					return Inventory{}, noGPU(field)
				}
				sel, err := selectGPUs(src.GPUs, e.GPUs, field)
				if err != nil {
					return Inventory{}, err
				}
				for _, d := range sel {
					if prev, dup := taken[d.ID]; dup {
						return Inventory{}, invalid(field+".gpus", d.ID, "already listed in %s", prev)
					}
					taken[d.ID] = field
				}
				if err := addGPUs(sel); err != nil {
					return Inventory{}, err
				}
			case KindCPU:
				if err := addCPU(field); err != nil {
					return Inventory{}, err
				}
			case KindEmulated:
				for range e.Count {
					d, err := emulatedDevice(spec, e, emu, field)
					if err != nil {
						return Inventory{}, err
					}
					inv.Devices = append(inv.Devices, d)
					emu++
				}
			}
		}
	}
	return inv, nil
}

// selectGPUs picks GPUs by NVML index or UUID (or a unique UUID prefix).
func selectGPUs(all []Device, want []string, field string) ([]Device, error) {
	if len(want) == 0 {
		return all, nil
	}
	known := make([]string, len(all))
	for i, d := range all {
		known[i] = fmt.Sprintf("%d %s", d.Index, d.UUID)
	}
	var out []Device
	for j, w := range want {
		f := fmt.Sprintf("%s.gpus[%d]", field, j)
		var match []Device
		if idx, err := strconv.Atoi(w); err == nil {
			for _, d := range all {
				if d.Index == idx {
					match = append(match, d)
				}
			}
		} else if w != "" {
			for _, d := range all {
				if strings.HasPrefix(d.UUID, w) {
					match = append(match, d)
				}
			}
		}
		switch len(match) {
		case 0:
			return nil, invalid(f, fmt.Sprintf("%q", w), "no such NVIDIA GPU (found %d: %s)", len(all), strings.Join(known, ", "))
		case 1:
			out = append(out, match[0])
		default:
			return nil, invalid(f, fmt.Sprintf("%q", w), "matches %d GPUs; give more of the UUID", len(match))
		}
	}
	return out, nil
}

// gpuDevice sets the partition fields of a discovered GPU.
func gpuDevice(spec Spec, d Device, log *zap.Logger) (Device, error) {
	d = d.clone()
	backend := spec.backend()
	if d.MIG != nil && d.MIG.Enabled && backend != BackendMIG {
		log.Warn("GPU is in MIG mode: partitioning it with MIG instances",
			zap.String("device", d.ID), zap.String("configured_backend", string(backend)))
		backend = BackendMIG
	}
	d.Backend = backend
	d.MaxGpulets = spec.maxGpulets()
	sizesField := "partitioning.sizes"
	switch backend {
	case BackendMPS:
		d.Sizes = mpsSizes(spec.Sizes)
		d.MaxGpulets = min(d.MaxGpulets, MaxMPSClients)
		switch {
		case spec.MPS.PipeDirectory != "":
			d.MPSPipeDir = spec.MPS.PipeDirectory
		case spec.RuntimeDir != "":
			d.MPSPipeDir = filepath.Join(spec.RuntimeDir, "mps", d.ID, "pipe")
			d.MPSLogDir = filepath.Join(spec.RuntimeDir, "mps", d.ID, "log")
		default:
			return Device{}, invalid("runtime_dir", `""`, "MPS on %s needs a runtime directory for its pipes (or mps.pipe_directory)", d.ID)
		}
	case BackendNone:
		if err := onlyWhole(spec.Sizes, sizesField); err != nil {
			return Device{}, err
		}
		d.Sizes = []int{100}
		d.MaxGpulets = 1
	case BackendMIG:
		if d.MIG == nil {
			return Device{}, invalid("partitioning.backend", backend, "%s (%s) does not support MIG", d.ID, d.Name)
		}
		if !d.MIG.Enabled {
			return Device{}, fmt.Errorf("check partitioning.backend mig: %w: %s (%s) is not in MIG mode: %w (enable it with nvidia-smi -i %d -mig 1 and reset the GPU)",
				ErrInvalidSpec, d.ID, d.UUID, ErrMIGNotEnabled, d.Index)
		}
		sizes := migSizes(d.MIG.Profiles)
		if spec.backend() == BackendMIG && len(spec.Sizes) > 0 {
			for i, s := range spec.Sizes {
				if !slices.Contains(sizes, s) {
					return Device{}, invalid(fmt.Sprintf("%s[%d]", sizesField, i), s, "MIG on %s (%s) makes sizes %v", d.ID, d.Name, sizes)
				}
			}
			sizes = mpsSizes(spec.Sizes)
		}
		d.Sizes = sizes
		most := 0
		for _, p := range d.MIG.Profiles {
			most = max(most, p.MaxInstances)
		}
		if most > 0 {
			d.MaxGpulets = min(d.MaxGpulets, most)
		}
	}
	if d.MIG != nil && d.MIG.Enabled != d.MIG.Pending && d.Health == HealthOK {
		d.Health, d.HealthDetail = HealthDegraded, fmt.Sprintf("MIG mode change pending (enabled=%v, after reset=%v): reset the GPU", d.MIG.Enabled, d.MIG.Pending)
	}
	return d, nil
}

// mpsSizes is the sorted set of sizes, DefaultMPSSizes when none are given.
func mpsSizes(sizes []int) []int {
	if len(sizes) == 0 {
		return slices.Clone(DefaultMPSSizes)
	}
	out := slices.Clone(sizes)
	slices.Sort(out)
	return slices.Compact(out)
}

// migSizes are the sizes of a GPU's base MIG profiles, ascending.
func migSizes(profiles []MIGProfile) []int {
	var out []int
	for _, p := range profiles {
		if p.Base {
			out = append(out, p.Size)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// onlyWhole refuses sizes other than 100 for devices that are not partitioned.
func onlyWhole(sizes []int, field string) error {
	for i, s := range sizes {
		if s != 100 {
			return invalid(fmt.Sprintf("%s[%d]", field, i), s, "backend none uses whole devices: only 100")
		}
	}
	return nil
}

// emulatedDevice makes the k-th emulated GPU of the inventory.
func emulatedDevice(spec Spec, e Entry, k int, field string) (Device, error) {
	d := Device{
		ID: fmt.Sprintf("emu%d", k), Index: k, Kind: KindEmulated,
		Name: "Emulated " + e.Profiles, Type: e.Profiles, Emulated: e.Profiles, TimeScale: e.TimeScale,
		UUID:        emulatedUUID(e.Profiles, k),
		MemoryTotal: uint64(e.MemoryGB * (1 << 30)),
		MaxGpulets:  spec.maxGpulets(), Health: HealthOK,
	}
	if scale := d.LatencyScale(); scale != 1 {
		// A slower copy of the set is another device type: its profiles
		// differ from the set's.
		d.Name += fmt.Sprintf(" at 1/%g speed", scale)
		d.Type += fmt.Sprintf("-x%g", scale)
	}
	d.MemoryFree = d.MemoryTotal
	switch spec.backend() {
	case BackendMPS:
		d.Backend, d.Sizes = BackendMPS, mpsSizes(spec.Sizes)
	case BackendNone:
		if err := onlyWhole(spec.Sizes, "partitioning.sizes"); err != nil {
			return Device{}, err
		}
		d.Backend, d.Sizes, d.MaxGpulets = BackendNone, []int{100}, 1
	default:
		return Device{}, invalid("partitioning.backend", spec.backend(), "emulated devices (%s) partition with mps or none", field)
	}
	return d, nil
}

// emulatedUUID is a stable UUID-shaped id for an emulated device, the same
// across restarts for the same set name and position.
func emulatedUUID(set string, k int) string {
	h := sha1.Sum([]byte(fmt.Sprintf("gpuletd-emulated/%s/%d", set, k)))
	return fmt.Sprintf("EMU-%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}
