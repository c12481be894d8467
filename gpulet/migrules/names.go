package migrules

import (
	"fmt"
	"regexp"
	"strconv"
)

// Profile names across sources. The planner's tables carry NVIDIA's
// published names (7g.80gb on an A100 80GB); a GPU that gpuletd reads names
// its profiles from the memory NVML reports, rounded up to whole GB, and
// that memory is not always the published figure (go-nvml's A100 80GB mock
// reports 80,384 MB for the whole-GPU profile, 7g.79gb by that rounding).
// Two names are the same profile when slices and variant agree and the
// memory differs by at most a GB; no GPU has two profiles that close (the
// 1g.10gb and 1g.20gb of an A100 80GB are 10 GB apart).

// memoryToleranceGB is how far two names' memory may differ and still name
// the same profile.
const memoryToleranceGB = 1

var nameRE = regexp.MustCompile(`^([0-9]+)g\.([0-9]+)gb(.*)$`)

// ParseName reads a full profile name ("3g.40gb", "1g.10gb+me") into its
// slices, memory and suffix (the other fields are left zero).
func ParseName(name string) (Profile, error) {
	m := nameRE.FindStringSubmatch(name)
	if m == nil {
		return Profile{}, fmt.Errorf("parse MIG profile name %q: %w: want <slices>g.<GB>gb[suffix]", name, ErrUnknownProfile)
	}
	s, err1 := strconv.Atoi(m[1])
	g, err2 := strconv.Atoi(m[2])
	if err1 != nil || err2 != nil {
		return Profile{}, fmt.Errorf("parse MIG profile name %q: %w", name, ErrUnknownProfile)
	}
	return Profile{Slices: s, MemoryGB: g, Suffix: m[3]}, nil
}

// SameProfile says whether two full names name the same profile: equal, or
// the same slices and variant with memory at most a GB apart.
func SameProfile(a, b string) bool {
	if a == b {
		return true
	}
	pa, err := ParseName(a)
	if err != nil {
		return false
	}
	pb, err := ParseName(b)
	if err != nil {
		return false
	}
	return closeProfiles(pa, pb)
}

// closeProfiles says whether two profiles have the same slices and variant
// and memory at most a GB apart.
func closeProfiles(a, b Profile) bool {
	return a.Slices == b.Slices && a.Suffix == b.Suffix && abs(a.MemoryGB-b.MemoryGB) <= memoryToleranceGB
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
