package mps

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/gpulet/migrules"
)

// ApplyMIGLayout makes a GPU's MIG instances match want: one GPU instance per
// entry (a profile name such as "3g.40gb" or a bare slice count such as
// "3g"), each with one compute instance spanning it. Instances that already
// match are kept; the others are destroyed; the missing ones are created at
// placements the GPU allows. Before it changes anything it refuses a layout
// the hardware cannot make (ErrMIGLayout), a GPU not in MIG mode
// (ErrMIGNotEnabled), and destroying an instance that has running processes,
// that the caller says is busy, or whose processes NVML cannot tell
// (ErrMIGInUse). busy holds MIG UUIDs in use by gpu-lets. gpuName is the
// GPU's NVML name, used to check the layout against migrules' table as well.
// It returns the instances after the change.
func ApplyMIGLayout(h nvml.Device, gpuName string, want []string, busy map[string]bool, log *zap.Logger) ([]MIGInstance, error) {
	fail := func(err error) ([]MIGInstance, error) {
		return nil, fmt.Errorf("apply MIG layout %v on %s: %w", want, gpuName, err)
	}
	st, err := readMIGState(h)
	if err != nil {
		if notSupported(err) {
			return fail(fmt.Errorf("%w: the GPU does not support MIG", ErrMIGNotEnabled))
		}
		return fail(err)
	}
	if !st.Enabled || st.Pending != st.Enabled {
		return fail(fmt.Errorf("%w: enabled=%v, after reset=%v", ErrMIGNotEnabled, st.Enabled, st.Pending))
	}

	// Resolve names with the hardware's own profiles.
	hw := rulesFromProfiles(gpuName, st.Profiles)
	byName := map[string]MIGProfile{}
	for _, p := range st.Profiles {
		byName[p.Name] = p
	}
	names := make([]string, len(want))
	for i, w := range want {
		p, err := hw.Profile(w)
		if err != nil {
			return fail(fmt.Errorf("%w: %w", ErrMIGLayout, err))
		}
		names[i] = p.Name()
	}
	// The published table as a second opinion, where there is one.
	if table, err := migrules.Lookup(gpuName); err == nil {
		if err := table.Validate(names); errors.Is(err, migrules.ErrInfeasible) {
			return fail(fmt.Errorf("%w: %w", ErrMIGLayout, err))
		} else if err != nil {
			log.Debug("MIG table does not know the profiles; using the GPU's placements only", zap.Error(err))
		}
	}
	if _, err := hw.Place(names, nil); err != nil {
		return fail(fmt.Errorf("%w: %w", ErrMIGLayout, err))
	}

	gis, err := listGPUInstances(h)
	if err != nil {
		return fail(err)
	}
	parent, perr := processes(h)
	insts, known, err := readMIGInstances(h, parent, perr == nil)
	if err != nil {
		return fail(err)
	}

	// Keep instances that already are what is wanted, then place the rest
	// beside them; if they cannot be placed so, start from an empty GPU.
	keep, todo := matchInstances(gis, names)
	fixed := make([]migrules.Placement, 0, len(gis))
	for _, g := range gis {
		if keep[g.info.Id] {
			fixed = append(fixed, migrules.Placement{Profile: profileName(g.profile), Start: int(g.info.Placement.Start), Size: int(g.info.Placement.Size)})
		}
	}
	newNames := make([]string, len(todo))
	for i, k := range todo {
		newNames[i] = names[k]
	}
	places, err := hw.Place(newNames, fixed)
	if err != nil {
		keep, newNames = map[uint32]bool{}, names
		if places, err = hw.Place(names, nil); err != nil {
			return fail(fmt.Errorf("%w: %w", ErrMIGLayout, err))
		}
	}

	var destroy []gpuInstance
	for _, g := range gis {
		if !keep[g.info.Id] {
			destroy = append(destroy, g)
		}
	}
	if err := checkNotInUse(destroy, insts, known, busy); err != nil {
		return fail(err)
	}

	for _, g := range destroy {
		for _, c := range g.cis {
			if err := guard("destroy compute instance", c.handle.Destroy); err != nil {
				return fail(fmt.Errorf("destroy compute instance %d of GPU instance %d: %w", c.info.Id, g.info.Id, err))
			}
		}
		if err := guard("destroy GPU instance", g.handle.Destroy); err != nil {
			return fail(fmt.Errorf("destroy GPU instance %d (%s): %w", g.info.Id, profileName(g.profile), err))
		}
		log.Info("MIG GPU instance destroyed", zap.Uint32("gpu_instance", g.info.Id), zap.String("profile", profileName(g.profile)),
			zap.Uint32("start", g.info.Placement.Start))
	}
	for i, pl := range places {
		if err := createInstance(h, byName[newNames[i]], pl, log); err != nil {
			return fail(err)
		}
	}
	out, _, err := readMIGInstances(h, parent, perr == nil)
	if err != nil {
		return fail(err)
	}
	return out, nil
}

// matchInstances picks, for each wanted profile, an existing GPU instance of
// that profile with one compute instance spanning it. It returns the kept
// GPU instance ids and the indexes of want left to create.
func matchInstances(gis []gpuInstance, want []string) (map[uint32]bool, []int) {
	keep := map[uint32]bool{}
	var todo []int
	for i, name := range want {
		found := false
		for _, g := range gis {
			if keep[g.info.Id] || profileName(g.profile) != name {
				continue
			}
			if len(g.cis) != 1 || g.cis[0].profile.SliceCount != g.profile.SliceCount {
				continue // not one spanning compute instance: rebuild it
			}
			keep[g.info.Id], found = true, true
			break
		}
		if !found {
			todo = append(todo, i)
		}
	}
	return keep, todo
}

// checkNotInUse refuses to destroy GPU instances that run processes, that
// gpu-lets use, or whose processes are unknown.
func checkNotInUse(destroy []gpuInstance, insts []MIGInstance, known map[int]bool, busy map[string]bool) error {
	var problems []string
	for _, g := range destroy {
		id := int(g.info.Id)
		if !known[id] {
			problems = append(problems, fmt.Sprintf("GPU instance %d (%s): NVML cannot tell its processes", id, profileName(g.profile)))
			continue
		}
		for _, in := range insts {
			if in.GPUInstance != id {
				continue
			}
			if len(in.Processes) > 0 {
				pids := make([]string, len(in.Processes))
				for i, p := range in.Processes {
					pids[i] = fmt.Sprint(p.PID)
				}
				problems = append(problems, fmt.Sprintf("GPU instance %d (%s) runs pid %s", id, in.Profile, strings.Join(pids, ", ")))
			}
			if in.UUID != "" && busy[in.UUID] {
				problems = append(problems, fmt.Sprintf("GPU instance %d (%s, %s) holds a gpu-let", id, in.Profile, in.UUID))
			}
		}
	}
	if len(problems) > 0 {
		slices.Sort(problems)
		problems = slices.Compact(problems)
		return fmt.Errorf("%w: %s", ErrMIGInUse, strings.Join(problems, "; "))
	}
	return nil
}

// createInstance makes a GPU instance at a placement and one compute
// instance spanning it; a GPU instance whose compute instance fails is
// destroyed again.
func createInstance(h nvml.Device, prof MIGProfile, pl migrules.Placement, log *zap.Logger) error {
	info, err := call("get GPU instance profile", func() (nvml.GpuInstanceProfileInfo, nvml.Return) {
		return h.GetGpuInstanceProfileInfo(prof.ID)
	})
	if err != nil {
		return fmt.Errorf("create GPU instance %s: %w", prof.Name, err)
	}
	place := nvml.GpuInstancePlacement{Start: uint32(pl.Start), Size: uint32(pl.Size)}
	gi, err := call("create GPU instance", func() (nvml.GpuInstance, nvml.Return) {
		return h.CreateGpuInstanceWithPlacement(&info, &place)
	})
	if err != nil {
		return fmt.Errorf("create GPU instance %s at %d: %w", prof.Name, pl.Start, err)
	}
	var ciInfo nvml.ComputeInstanceProfileInfo
	found := false
	// Ascending ids meet the plain profile of a slice count before its variants.
	for cid := 0; cid < nvml.COMPUTE_INSTANCE_PROFILE_COUNT && !found; cid++ {
		cp, err := call("get compute instance profile", func() (nvml.ComputeInstanceProfileInfo, nvml.Return) {
			return gi.GetComputeInstanceProfileInfo(cid, nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
		})
		if err == nil && cp.SliceCount == info.SliceCount {
			ciInfo, found = cp, true
		}
	}
	var ciErr error
	if !found {
		ciErr = fmt.Errorf("%w: no compute instance profile spans %s", ErrMIGLayout, prof.Name)
	} else {
		_, ciErr = call("create compute instance", func() (nvml.ComputeInstance, nvml.Return) { return gi.CreateComputeInstance(&ciInfo) })
	}
	if ciErr != nil {
		if err := guard("destroy GPU instance", gi.Destroy); err != nil {
			log.Error("cannot destroy GPU instance left without a compute instance", zap.String("profile", prof.Name), zap.Error(err))
		}
		return fmt.Errorf("create compute instance in %s at %d: %w", prof.Name, pl.Start, ciErr)
	}
	log.Info("MIG instance created", zap.String("profile", prof.Name), zap.Int("start", pl.Start))
	return nil
}
