package mps

import (
	"slices"
)

// ComputeCapabilities are the distinct compute capabilities ("9.0") of the
// NVIDIA GPUs among devs, sorted; none where there is none, or where NVML
// did not say.
func ComputeCapabilities(devs []Device) []string {
	var out []string
	for _, d := range devs {
		if d.Kind == KindNVIDIA && d.ComputeCapability != "" && !slices.Contains(out, d.ComputeCapability) {
			out = append(out, d.ComputeCapability)
		}
	}
	slices.Sort(out)
	return out
}
