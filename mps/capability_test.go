package mps

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestComputeCapabilities(t *testing.T) {
	for _, tc := range []struct {
		name string
		devs []Device
		want []string
	}{
		{"the CPU", []Device{{Kind: KindCPU}}, nil},
		{"emulated GPUs", []Device{{Kind: KindEmulated}, {Kind: KindEmulated}}, nil},
		{"alike GPUs", []Device{{Kind: KindNVIDIA, ComputeCapability: "9.0"}, {Kind: KindNVIDIA, ComputeCapability: "9.0"}}, []string{"9.0"}},
		{"two kinds of GPU and the CPU", []Device{{Kind: KindNVIDIA, ComputeCapability: "9.0"}, {Kind: KindCPU},
			{Kind: KindNVIDIA, ComputeCapability: "8.0"}, {Kind: KindNVIDIA, ComputeCapability: "9.0"}}, []string{"8.0", "9.0"}},
		{"a GPU NVML could not describe", []Device{{Kind: KindNVIDIA}, {Kind: KindNVIDIA, ComputeCapability: "8.0"}}, []string{"8.0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, ComputeCapabilities(tc.devs))
		})
	}
}
