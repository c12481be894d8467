package migrules

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Sentinel errors; match them with errors.Is.
var (
	// ErrUnknownModel: no MIG table for this GPU model.
	ErrUnknownModel = errors.New("no MIG table for this GPU model")
	// ErrUnknownProfile: the GPU has no such profile.
	ErrUnknownProfile = errors.New("no such MIG profile")
	// ErrInfeasible: the profiles cannot be placed on one GPU together.
	ErrInfeasible = errors.New("MIG layout cannot be made")
)

// Profile is one GPU-instance profile of a GPU model, such as 3g.40gb.
type Profile struct {
	// Slices is the number of compute slices (the "3" of 3g.40gb).
	Slices int
	// MemoryGB is the memory as the profile name states it (the "40" of 3g.40gb).
	MemoryGB int
	// Suffix marks a variant: "+me" (media extensions), "" for none.
	Suffix string
	// Size is how many memory slots an instance of the profile occupies.
	Size int
	// Starts are the memory slots an instance may start at.
	Starts []int
	// MaxCount caps the instances of this profile on one GPU; 0 means the
	// placements alone bound it.
	MaxCount int
	// Base marks the profile a bare slice count ("3g") means.
	Base bool
}

// Name is the profile's name as NVIDIA writes it, e.g. "3g.40gb" or "1g.10gb+me".
func (p Profile) Name() string {
	return fmt.Sprintf("%dg.%dgb%s", p.Slices, p.MemoryGB, p.Suffix)
}

// GPU is the MIG table of one GPU model.
type GPU struct {
	// Model is the table's name, e.g. "A100-40GB".
	Model string
	// ComputeSlices is the number of compute slices of the whole GPU (7).
	ComputeSlices int
	// MemorySlots is the number of memory slots placements are made in (8).
	MemorySlots int
	// Profiles are the GPU-instance profiles.
	Profiles []Profile
}

// Models lists the model names with a MIG table.
func Models() []string {
	out := make([]string, len(known))
	for i, g := range known {
		out[i] = g.Model
	}
	return out
}

// Lookup returns the MIG table for a model name (one of Models) or for the
// name NVML reports for a device ("NVIDIA A100-SXM4-40GB", "NVIDIA H100 80GB
// HBM3"). The result is a copy the caller may change.
func Lookup(name string) (GPU, error) {
	for _, g := range known {
		if strings.EqualFold(name, g.Model) {
			return g.clone(), nil
		}
	}
	u := strings.ToUpper(name)
	var model string
	switch {
	case strings.Contains(u, "A100") && strings.Contains(u, "80GB"):
		model = A100_80GB
	case strings.Contains(u, "A100") && strings.Contains(u, "40GB"):
		model = A100_40GB
	case strings.Contains(u, "H100") && !strings.Contains(u, "NVL") &&
		!strings.Contains(u, "94GB") && !strings.Contains(u, "96GB"):
		model = H100_80GB
	default:
		return GPU{}, fmt.Errorf("look up MIG table for %q: %w (known: %s)", name, ErrUnknownModel, strings.Join(Models(), ", "))
	}
	return Lookup(model)
}

func (g GPU) clone() GPU {
	c := g
	c.Profiles = make([]Profile, len(g.Profiles))
	for i, p := range g.Profiles {
		p.Starts = slices.Clone(p.Starts)
		c.Profiles[i] = p
	}
	return c
}

// Profile finds a profile by its full name ("3g.40gb"; a name SameProfile
// matches, where no name is equal) or by a bare slice count ("3g"), which
// means the base profile with that many slices.
func (g GPU) Profile(name string) (Profile, error) {
	for _, p := range g.Profiles {
		if p.Name() == name {
			return p, nil
		}
	}
	if n, ok := strings.CutSuffix(name, "g"); ok {
		if s, err := strconv.Atoi(n); err == nil {
			for _, p := range g.Profiles {
				if p.Base && p.Slices == s {
					return p, nil
				}
			}
		}
	}
	if want, err := ParseName(name); err == nil {
		for _, p := range g.Profiles {
			if closeProfiles(p, want) {
				return p, nil
			}
		}
	}
	return Profile{}, fmt.Errorf("find profile %q on %s: %w (profiles: %s)", name, g.Model, ErrUnknownProfile, strings.Join(g.ProfileNames(), ", "))
}

// ProfileNames lists the full names of the GPU's profiles.
func (g GPU) ProfileNames() []string {
	out := make([]string, len(g.Profiles))
	for i, p := range g.Profiles {
		out[i] = p.Name()
	}
	return out
}

// SizePercent converts a slice count to a gpu-let size in percent of the GPU's
// compute, rounded: on a 7-slice GPU 1g is 14, 2g 29, 3g 43, 4g 57 and 7g 100.
func SizePercent(slices, total int) int {
	if total <= 0 {
		return 0
	}
	return int(math.Round(float64(slices) * 100 / float64(total)))
}

// Percent is the profile's size in percent of the GPU's compute.
func (g GPU) Percent(p Profile) int { return SizePercent(p.Slices, g.ComputeSlices) }

// Sizes lists the gpu-let sizes (percent) the base profiles make, ascending.
func (g GPU) Sizes() []int {
	var out []int
	for _, p := range g.Profiles {
		if p.Base {
			out = append(out, g.Percent(p))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ProfileForSize returns the base profile whose size in percent is size.
func (g GPU) ProfileForSize(size int) (Profile, error) {
	for _, p := range g.Profiles {
		if p.Base && g.Percent(p) == size {
			return p, nil
		}
	}
	return Profile{}, fmt.Errorf("find profile of %d%% on %s: %w (sizes: %v)", size, g.Model, ErrUnknownProfile, g.Sizes())
}

// ValidLayout says whether the profiles (full names or bare slice counts) can
// be made together on one empty GPU of the model; nil means they can.
func ValidLayout(model string, profiles []string) error {
	g, err := Lookup(model)
	if err != nil {
		return err
	}
	return g.Validate(profiles)
}

// Validate says whether the profiles can be made together on one empty GPU.
func (g GPU) Validate(profiles []string) error {
	_, err := g.Place(profiles, nil)
	return err
}
