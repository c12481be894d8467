package mps

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpulet/gpuletd/gpulet/migrules"
)

// MIGProfile is one GPU-instance profile as the GPU itself reports it.
type MIGProfile struct {
	// ID is NVML's profile id (nvml.GPU_INSTANCE_PROFILE_*).
	ID int `json:"id"`
	// Name is NVIDIA's name, e.g. "3g.40gb".
	Name string `json:"name"`
	// Slices is the compute slice count; Size the gpu-let size in percent.
	Slices int `json:"slices"`
	Size   int `json:"size"`
	// MemoryMB and SMCount are the instance's memory and multiprocessors.
	MemoryMB uint64 `json:"memory_mb"`
	SMCount  int    `json:"sm_count"`
	// MaxInstances is how many instances of the profile the GPU can hold.
	MaxInstances int `json:"max_instances"`
	// Starts and Span are the allowed placements: Span memory slots from a Start.
	Starts []int `json:"starts"`
	Span   int   `json:"span"`
	// Base marks the plain profile of its slice count (no media-extension or
	// extra-memory variant); gpu-let sizes come from base profiles.
	Base bool `json:"base"`
}

// baseProfileIDs are NVML's plain GPU-instance profile ids.
var baseProfileIDs = map[int]bool{
	nvml.GPU_INSTANCE_PROFILE_1_SLICE: true, nvml.GPU_INSTANCE_PROFILE_2_SLICE: true,
	nvml.GPU_INSTANCE_PROFILE_3_SLICE: true, nvml.GPU_INSTANCE_PROFILE_4_SLICE: true,
	nvml.GPU_INSTANCE_PROFILE_6_SLICE: true, nvml.GPU_INSTANCE_PROFILE_7_SLICE: true,
	nvml.GPU_INSTANCE_PROFILE_8_SLICE: true,
}

// profileSuffix is the name suffix NVIDIA gives a profile variant.
func profileSuffix(id int) string {
	switch id {
	case nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV1, nvml.GPU_INSTANCE_PROFILE_2_SLICE_REV1:
		return "+me"
	case nvml.GPU_INSTANCE_PROFILE_1_SLICE_NO_ME, nvml.GPU_INSTANCE_PROFILE_2_SLICE_NO_ME:
		return "-me"
	case nvml.GPU_INSTANCE_PROFILE_1_SLICE_ALL_ME, nvml.GPU_INSTANCE_PROFILE_2_SLICE_ALL_ME:
		return "+me.all"
	case nvml.GPU_INSTANCE_PROFILE_1_SLICE_GFX, nvml.GPU_INSTANCE_PROFILE_2_SLICE_GFX,
		nvml.GPU_INSTANCE_PROFILE_4_SLICE_GFX, nvml.GPU_INSTANCE_PROFILE_3_SLICE_GFX:
		return "+gfx"
	}
	return ""
}

// profileName names a profile from its info: "<slices>g.<GB>gb<suffix>",
// the memory rounded up to whole GB as NVIDIA's names are (4864 MB → 5gb).
func profileName(info nvml.GpuInstanceProfileInfo) string {
	return migrules.Profile{
		Slices:   int(info.SliceCount),
		MemoryGB: int((info.MemorySizeMB + 1023) / 1024),
		Suffix:   profileSuffix(int(info.Id)),
	}.Name()
}

// readMIGState reads the MIG mode and the profiles of a GPU; instances are
// read by refresh. A GPU without MIG gives an error notSupported accepts.
func readMIGState(h nvml.Device) (*MIGState, error) {
	var cur, pend int
	if err := guard("get MIG mode", func() nvml.Return {
		var ret nvml.Return
		cur, pend, ret = h.GetMigMode()
		return ret
	}); err != nil {
		return nil, err
	}
	profiles, err := readMIGProfiles(h)
	if err != nil {
		return nil, err
	}
	return &MIGState{
		Enabled:  cur == nvml.DEVICE_MIG_ENABLE,
		Pending:  pend == nvml.DEVICE_MIG_ENABLE,
		Profiles: profiles,
	}, nil
}

// readMIGProfiles lists the GPU-instance profiles the GPU supports, by id.
func readMIGProfiles(h nvml.Device) ([]MIGProfile, error) {
	var out []MIGProfile
	for id := range nvml.GPU_INSTANCE_PROFILE_COUNT {
		info, err := call("get GPU instance profile", func() (nvml.GpuInstanceProfileInfo, nvml.Return) {
			return h.GetGpuInstanceProfileInfo(id)
		})
		if err != nil {
			continue // not supported on this GPU
		}
		places, err := call("get GPU instance placements", func() ([]nvml.GpuInstancePlacement, nvml.Return) {
			return h.GetGpuInstancePossiblePlacements(&info)
		})
		if err != nil {
			return nil, fmt.Errorf("read MIG profile %d: %w", id, err)
		}
		p := MIGProfile{
			ID: id, Name: profileName(info), Slices: int(info.SliceCount),
			MemoryMB: info.MemorySizeMB, SMCount: int(info.MultiprocessorCount),
			MaxInstances: int(info.InstanceCount), Base: baseProfileIDs[id],
		}
		for _, pl := range places {
			p.Starts = append(p.Starts, int(pl.Start))
			p.Span = int(pl.Size)
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("read MIG profiles: %w: %w", ErrNVML, nvml.ERROR_NOT_SUPPORTED)
	}
	total := 0
	for _, p := range out {
		total = max(total, p.Slices)
	}
	for i := range out {
		out[i].Size = migrules.SizePercent(out[i].Slices, total)
	}
	return out, nil
}

// rulesFromProfiles turns the profiles a GPU reports into a migrules table,
// so that placements are searched with the hardware's own rules.
func rulesFromProfiles(model string, profiles []MIGProfile) migrules.GPU {
	g := migrules.GPU{Model: model}
	for _, p := range profiles {
		g.ComputeSlices = max(g.ComputeSlices, p.Slices)
		for _, s := range p.Starts {
			g.MemorySlots = max(g.MemorySlots, s+p.Span)
		}
		g.Profiles = append(g.Profiles, migrules.Profile{
			Slices: p.Slices, MemoryGB: int((p.MemoryMB + 1023) / 1024), Suffix: profileSuffix(p.ID),
			Size: p.Span, Starts: slices.Clone(p.Starts), MaxCount: p.MaxInstances, Base: p.Base,
		})
	}
	return g
}

// gpuInstance is one GPU instance with its compute instances, as read from NVML.
type gpuInstance struct {
	handle  nvml.GpuInstance
	info    nvml.GpuInstanceInfo
	profile nvml.GpuInstanceProfileInfo
	cis     []computeInstance
}

type computeInstance struct {
	handle  nvml.ComputeInstance
	info    nvml.ComputeInstanceInfo
	profile nvml.ComputeInstanceProfileInfo
}

// listGPUInstances reads every GPU instance and its compute instances.
func listGPUInstances(h nvml.Device) ([]gpuInstance, error) {
	var out []gpuInstance
	for id := range nvml.GPU_INSTANCE_PROFILE_COUNT {
		info, err := call("get GPU instance profile", func() (nvml.GpuInstanceProfileInfo, nvml.Return) {
			return h.GetGpuInstanceProfileInfo(id)
		})
		if err != nil {
			continue
		}
		gis, err := call("get GPU instances", func() ([]nvml.GpuInstance, nvml.Return) { return h.GetGpuInstances(&info) })
		if err != nil {
			return nil, fmt.Errorf("list GPU instances of profile %s: %w", profileName(info), err)
		}
		for _, gi := range gis {
			giInfo, err := call("get GPU instance info", gi.GetInfo)
			if err != nil {
				return nil, err
			}
			g := gpuInstance{handle: gi, info: giInfo, profile: info}
			for cid := range nvml.COMPUTE_INSTANCE_PROFILE_COUNT {
				cp, err := call("get compute instance profile", func() (nvml.ComputeInstanceProfileInfo, nvml.Return) {
					return gi.GetComputeInstanceProfileInfo(cid, nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
				})
				if err != nil {
					continue
				}
				cis, err := call("get compute instances", func() ([]nvml.ComputeInstance, nvml.Return) { return gi.GetComputeInstances(&cp) })
				if err != nil {
					return nil, fmt.Errorf("list compute instances of GPU instance %d: %w", giInfo.Id, err)
				}
				for _, ci := range cis {
					ciInfo, err := call("get compute instance info", ci.GetInfo)
					if err != nil {
						return nil, err
					}
					g.cis = append(g.cis, computeInstance{handle: ci, info: ciInfo, profile: cp})
				}
			}
			slices.SortFunc(g.cis, func(a, b computeInstance) int { return cmp.Compare(a.info.Id, b.info.Id) })
			out = append(out, g)
		}
	}
	slices.SortFunc(out, func(a, b gpuInstance) int {
		return cmp.Or(cmp.Compare(a.info.Placement.Start, b.info.Placement.Start), cmp.Compare(a.info.Id, b.info.Id))
	})
	return out, nil
}

// migHandle is what a MIG device handle tells about its instance.
type migHandle struct {
	uuid    string
	procs   []GPUProcess
	procsOK bool
}

// migHandles maps (GPU instance, compute instance) to the MIG device handle's
// UUID and processes. Drivers or mocks that do not support it give an empty map.
func migHandles(h nvml.Device) map[[2]int]migHandle {
	out := map[[2]int]migHandle{}
	n, err := call("get max MIG device count", h.GetMaxMigDeviceCount)
	if err != nil {
		return out
	}
	for i := range n {
		mh, err := call("get MIG device handle", func() (nvml.Device, nvml.Return) { return h.GetMigDeviceHandleByIndex(i) })
		if err != nil {
			continue // fewer instances than the maximum
		}
		gi, err1 := call("get GPU instance id", mh.GetGpuInstanceId)
		ci, err2 := call("get compute instance id", mh.GetComputeInstanceId)
		if err1 != nil || err2 != nil {
			continue
		}
		m := migHandle{}
		m.uuid, _ = call("get MIG UUID", mh.GetUUID)
		if procs, err := processes(mh); err == nil {
			m.procs, m.procsOK = procs, true
		}
		out[[2]int{gi, ci}] = m
	}
	return out
}

// readMIGInstances lists the compute instances of a GPU in MIG mode with
// their UUIDs and processes. parent are the processes the whole GPU's handle
// reported; parentOK says whether it could report them. known says, per GPU
// instance id, whether its processes are known for certain — callers that
// destroy instances refuse those that are not.
func readMIGInstances(h nvml.Device, parent []GPUProcess, parentOK bool) ([]MIGInstance, map[int]bool, error) {
	gis, err := listGPUInstances(h)
	if err != nil {
		return nil, nil, err
	}
	handles := migHandles(h)
	total := 0
	if profs, err := readMIGProfiles(h); err == nil {
		for _, p := range profs {
			total = max(total, p.Slices)
		}
	}
	// A process the whole GPU reports without an instance could be anywhere.
	ambiguous := !parentOK
	for _, p := range parent {
		if p.GPUInstance < 0 {
			ambiguous = true
		}
	}
	known := map[int]bool{}
	var out []MIGInstance
	for _, g := range gis {
		giID := int(g.info.Id)
		known[giID] = true
		add := func(in MIGInstance, key [2]int) {
			m, ok := handles[key]
			in.UUID = m.uuid
			seen := map[int]bool{}
			for _, p := range parent {
				if p.GPUInstance == giID && (key[1] < 0 || p.ComputeInstance == key[1]) && !seen[p.PID] {
					seen[p.PID] = true
					in.Processes = append(in.Processes, p)
				}
			}
			for _, p := range m.procs {
				if !seen[p.PID] {
					seen[p.PID] = true
					in.Processes = append(in.Processes, p)
				}
			}
			// A GPU instance without compute instances runs nothing.
			if ambiguous && key[1] >= 0 && !(ok && m.procsOK) {
				known[giID] = false
			}
			out = append(out, in)
		}
		base := MIGInstance{
			GPUInstance: giID, ComputeInstance: -1, Profile: profileName(g.profile), ProfileID: int(g.profile.Id),
			Slices: int(g.profile.SliceCount), Start: int(g.info.Placement.Start), Span: int(g.info.Placement.Size),
			SMCount: int(g.profile.MultiprocessorCount), MemoryMB: g.profile.MemorySizeMB,
		}
		base.Size = migrules.SizePercent(base.Slices, total)
		if len(g.cis) == 0 {
			add(base, [2]int{giID, -1})
			continue
		}
		for _, c := range g.cis {
			in := base
			in.ComputeInstance = int(c.info.Id)
			in.Slices = int(c.profile.SliceCount)
			in.Size = migrules.SizePercent(in.Slices, total)
			in.SMCount = int(c.profile.MultiprocessorCount)
			add(in, [2]int{giID, in.ComputeInstance})
		}
	}
	return out, known, nil
}
