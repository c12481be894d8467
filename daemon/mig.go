package daemon

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/gpulet/migrules"
	"github.com/gpulet/gpuletd/mps"
)

// migDevices is what choosing a MIG instance needs of the device layer
// (*mps.Manager).
type migDevices interface {
	FreeMIGInstances(deviceID string) ([]mps.MIGInstance, error)
	ApplyMIG(deviceID string, want []string) ([]mps.MIGInstance, error)
}

// migReconfigurable says whether the configuration lets gpuletd change the
// MIG instances of dev (partitioning.mig_reconfigure: "all", its index or
// its UUID).
func migReconfigurable(allowed []string, dev mps.Device) bool {
	return slices.ContainsFunc(allowed, func(a string) bool {
		return a == "all" || a == strconv.Itoa(dev.Index) || a == dev.ID || (dev.UUID != "" && a == dev.UUID)
	})
}

// migLayout is the MIG profiles a plan wants on one GPU, one per gpu-let.
func migLayout(gp *gpulet.GPUPlan) []string {
	var out []string
	for _, l := range gp.GPULets {
		if l.MIGProfile != "" {
			out = append(out, l.MIGProfile)
		} else {
			out = append(out, fmt.Sprintf("%dg", sizeSlices(l.Size)))
		}
	}
	return out
}

// sizeSlices is the compute slice count of a MIG gpu-let size in percent
// (one slice of seven is 14%).
func sizeSlices(size int) int { return max(1, (size*7+50)/100) }

// fits says whether a MIG instance is the one a gpu-let of the plan asks for.
func fits(in mps.MIGInstance, l gpulet.GPULet) bool {
	if l.MIGProfile != "" {
		return migrules.SameProfile(in.Profile, l.MIGProfile) || strings.HasPrefix(in.Profile, l.MIGProfile+".")
	}
	return in.Size == l.Size
}

// chooseMIGInstance finds the free instance a MIG gpu-let runs on. When
// there is none and the GPU may be changed, it lays the GPU out as the plan
// wants (instances that match are kept; busy ones are never destroyed) and
// looks again. It returns the instance's UUID and whether the layout changed.
func chooseMIGInstance(devs migDevices, dev mps.Device, l gpulet.GPULet, layout []string, reconfigure bool) (string, bool, error) {
	pick := func() (string, []mps.MIGInstance, error) {
		free, err := devs.FreeMIGInstances(dev.ID)
		if err != nil {
			return "", nil, err
		}
		for _, in := range free {
			if fits(in, l) {
				return in.UUID, free, nil
			}
		}
		return "", free, nil
	}
	uuid, free, err := pick()
	if err != nil || uuid != "" {
		return uuid, false, err
	}
	want := l.MIGProfile
	if want == "" {
		want = fmt.Sprintf("%d%%", l.Size)
	}
	if !reconfigure {
		var have []string
		for _, in := range free {
			have = append(have, in.Profile)
		}
		return "", false, fmt.Errorf("no free MIG instance %s on %s (free: %s) and partitioning.mig_reconfigure does not let gpuletd change its instances: create one (nvidia-smi mig -cgi … -C) or allow it",
			want, dev.ID, orNone(have))
	}
	if _, err := devs.ApplyMIG(dev.ID, layout); err != nil {
		return "", false, fmt.Errorf("lay out MIG instances %v on %s: %w", layout, dev.ID, err)
	}
	uuid, _, err = pick()
	if err == nil && uuid == "" {
		err = fmt.Errorf("no free MIG instance %s on %s after laying out %v", want, dev.ID, layout)
	}
	return uuid, true, err
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// memoryLimitMB is the GPU memory cap of an MPS gpu-let's engine: the GPU's
// memory less what the plan gives the other gpu-lets on it, so one gpu-let
// can never take what the others were planned to use. 0 (no cap) when the
// plan does not know the models' memory, on MIG (the instance bounds it)
// and off NVIDIA GPUs.
func memoryLimitMB(dev mps.Device, l gpulet.GPULet, gp *gpulet.GPUPlan) int {
	if dev.Kind != mps.KindNVIDIA || dev.Backend == mps.BackendMIG || gp == nil || gp.MemoryMB <= 0 {
		return 0
	}
	mine := 0.0
	for _, m := range l.Models {
		mine += m.MemoryMB
	}
	if mine <= 0 {
		return 0
	}
	limit := gp.MemoryMB - (gp.MemoryUsedMB - mine)
	if limit < mine {
		return 0
	}
	return int(limit)
}
