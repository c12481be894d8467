package mps

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/gpus"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// gpuMock is one of go-nvml's mock devices with what the mock leaves out
// filled in: MIG device handles (UUIDs and per-instance processes), running
// processes, utilisation and the compute mode.
type gpuMock struct {
	*server.Device
	mu          sync.Mutex
	procs       []nvml.ProcessInfo // what the whole GPU reports
	procsErr    nvml.Return        // non-SUCCESS: the whole GPU cannot report
	migProcsOff bool               // MIG handles cannot report processes
	computeMode nvml.ComputeMode
	modeSets    []nvml.ComputeMode
}

// newServer makes a mock server of n GPUs of one configuration, each
// completed as gpuMock.
func newServer(t *testing.T, cfg gpus.Config, n int) (*server.Server, []*gpuMock) {
	t.Helper()
	var s *server.Server
	if strings.Contains(cfg.Name, "H100") {
		s = dgxh100.NewWithGPUs(gpus.Multiple(n, cfg)...)
	} else {
		s = dgxa100.NewWithGPUs(gpus.Multiple(n, cfg)...)
	}
	out := make([]*gpuMock, n)
	for i, d := range s.Devices {
		out[i] = completeMock(d.(*server.Device))
	}
	return s, out
}

func completeMock(d *server.Device) *gpuMock {
	g := &gpuMock{Device: d}
	d.MemoryInfo.Free = d.MemoryInfo.Total / 2
	d.MemoryInfo.Used = d.MemoryInfo.Total - d.MemoryInfo.Free
	d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.procsErr != nvml.SUCCESS {
			return nil, g.procsErr
		}
		return slices.Clone(g.procs), nvml.SUCCESS
	}
	d.GetMPSComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.SUCCESS }
	d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
		if d.MigMode == nvml.DEVICE_MIG_ENABLE {
			return nvml.Utilization{}, nvml.ERROR_NOT_SUPPORTED
		}
		return nvml.Utilization{Gpu: 37, Memory: 12}, nvml.SUCCESS
	}
	d.GetComputeModeFunc = func() (nvml.ComputeMode, nvml.Return) {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.computeMode, nvml.SUCCESS
	}
	d.SetComputeModeFunc = func(m nvml.ComputeMode) nvml.Return {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.computeMode = m
		g.modeSets = append(g.modeSets, m)
		return nvml.SUCCESS
	}
	d.GetMaxMigDeviceCountFunc = func() (int, nvml.Return) { return 7, nvml.SUCCESS }
	d.GetMigDeviceHandleByIndexFunc = func(i int) (nvml.Device, nvml.Return) {
		cis := g.computeInstances()
		if i < 0 || i >= len(cis) {
			return nil, nvml.ERROR_NOT_FOUND
		}
		return g.migHandle(cis[i]), nvml.SUCCESS
	}
	return g
}

// computeInstances lists the mock's compute instances in a stable order.
func (g *gpuMock) computeInstances() []*server.ComputeInstance {
	g.RLock()
	gis := make([]*server.GpuInstance, 0, len(g.GpuInstances))
	for gi := range g.GpuInstances {
		gis = append(gis, gi)
	}
	g.RUnlock()
	slices.SortFunc(gis, func(a, b *server.GpuInstance) int { return cmp.Compare(a.Info.Id, b.Info.Id) })
	var out []*server.ComputeInstance
	for _, gi := range gis {
		gi.RLock()
		var cis []*server.ComputeInstance
		for ci := range gi.ComputeInstances {
			cis = append(cis, ci)
		}
		gi.RUnlock()
		slices.SortFunc(cis, func(a, b *server.ComputeInstance) int { return cmp.Compare(a.Info.Id, b.Info.Id) })
		out = append(out, cis...)
	}
	return out
}

// migUUID is the UUID the mock gives a compute instance.
func (g *gpuMock) migUUID(gi, ci uint32) string {
	return fmt.Sprintf("MIG-%s-%d-%d", strings.TrimPrefix(g.UUID, "GPU-")[:8], gi, ci)
}

func (g *gpuMock) migHandle(ci *server.ComputeInstance) nvml.Device {
	giID := ci.Info.GpuInstance.(*server.GpuInstance).Info.Id
	h := &mock.Device{}
	h.GetGpuInstanceIdFunc = func() (int, nvml.Return) { return int(giID), nvml.SUCCESS }
	h.GetComputeInstanceIdFunc = func() (int, nvml.Return) { return int(ci.Info.Id), nvml.SUCCESS }
	h.GetUUIDFunc = func() (string, nvml.Return) { return g.migUUID(giID, ci.Info.Id), nvml.SUCCESS }
	h.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.migProcsOff {
			return nil, nvml.ERROR_NOT_SUPPORTED
		}
		var out []nvml.ProcessInfo
		for _, p := range g.procs {
			if p.GpuInstanceId == giID && p.ComputeInstanceId == ci.Info.Id {
				out = append(out, p)
			}
		}
		return out, nvml.SUCCESS
	}
	h.GetMPSComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.SUCCESS }
	return h
}

func (g *gpuMock) setProcs(procs ...nvml.ProcessInfo) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.procs = procs
}

// enableMIG turns MIG mode on and creates GPU instances of the profile ids
// at the starts given, each with one spanning compute instance.
func (g *gpuMock) enableMIG(t *testing.T, layout ...[2]int) {
	t.Helper()
	g.MigMode = nvml.DEVICE_MIG_ENABLE
	for _, l := range layout {
		info, ret := g.GetGpuInstanceProfileInfo(l[0])
		if ret != nvml.SUCCESS {
			t.Fatalf("profile %d: %v", l[0], ret)
		}
		places, _ := g.GetGpuInstancePossiblePlacements(&info)
		size := places[0].Size
		gi, ret := g.CreateGpuInstanceWithPlacement(&info, &nvml.GpuInstancePlacement{Start: uint32(l[1]), Size: size})
		if ret != nvml.SUCCESS {
			t.Fatalf("create GPU instance: %v", ret)
		}
		for cid := range nvml.COMPUTE_INSTANCE_PROFILE_COUNT {
			cp, ret := gi.GetComputeInstanceProfileInfo(cid, nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
			if ret == nvml.SUCCESS && cp.SliceCount == info.SliceCount {
				if _, ret := gi.CreateComputeInstance(&cp); ret != nvml.SUCCESS {
					t.Fatalf("create compute instance: %v", ret)
				}
				break
			}
		}
	}
}

// layout summarises the mock's GPU instances as "profile@start", ordered by start.
func (g *gpuMock) layout() []string {
	g.RLock()
	defer g.RUnlock()
	type inst struct {
		start uint32
		s     string
	}
	var all []inst
	for gi := range g.GpuInstances {
		info, _ := g.GetGpuInstanceProfileInfo(int(gi.Info.ProfileId))
		all = append(all, inst{gi.Info.Placement.Start, fmt.Sprintf("%s@%d", profileName(info), gi.Info.Placement.Start)})
	}
	slices.SortFunc(all, func(a, b inst) int { return cmp.Compare(a.start, b.start) })
	out := make([]string, len(all))
	for i, a := range all {
		out[i] = a.s
	}
	return out
}
