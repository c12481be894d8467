package execenv

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func lookupIn(env []string) func(string) (string, bool) {
	m := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		env  Env
		want []string // variables that must be present, exactly
		not  []string // variables that must be absent
	}{
		{
			name: "mps",
			env: Env{DeviceID: "gpu0", Kind: KindNVIDIA, Type: "h100-80gb-hbm3", Partition: PartitionMPS, Size: 40,
				VisibleDevices: "GPU-abc", MPSPipeDir: "/run/gpuletd/mps/gpu0/pipe", ActiveThreadPercentage: 40, PinnedMemMB: 2048},
			want: []string{"CUDA_VISIBLE_DEVICES=GPU-abc", "CUDA_MPS_PIPE_DIRECTORY=/run/gpuletd/mps/gpu0/pipe",
				"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=40", "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=2048M", "GPULETD_GPULET_SIZE=40"},
			not: []string{VarCPUCores, VarEmulated},
		},
		{
			name: "mig",
			env:  Env{DeviceID: "gpu1", Kind: KindNVIDIA, Type: "a100-sxm4-40gb", Partition: PartitionMIG, Size: 43, VisibleDevices: "MIG-123"},
			want: []string{"CUDA_VISIBLE_DEVICES=MIG-123", "GPULETD_PARTITION=mig"},
			not:  []string{VarMPSPipeDirectory, VarMPSActiveThreadPercentage, VarMPSPinnedDeviceMemLimit, VarGPUMemoryLimitMB},
		},
		{
			name: "mps-inside-mig",
			env: Env{DeviceID: "gpu1", Kind: KindNVIDIA, Type: "a100-sxm4-40gb", Partition: PartitionMIG, Size: 43, VisibleDevices: "MIG-123",
				MPSPipeDir: "/run/gpuletd/mps/MIG-123/pipe", ActiveThreadPercentage: 50, MemoryLimitMB: 9000},
			want: []string{"CUDA_VISIBLE_DEVICES=MIG-123", "GPULETD_PARTITION=mig", "CUDA_MPS_PIPE_DIRECTORY=/run/gpuletd/mps/MIG-123/pipe",
				"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50", "GPULETD_GPU_MEMORY_LIMIT_MB=9000"},
			not: []string{VarMPSPinnedDeviceMemLimit},
		},
		{
			name: "cpu",
			env:  Env{DeviceID: "cpu", Kind: KindCPU, Type: "cpu", Partition: PartitionCPU, Size: 50, Cores: []int{1}, IntraOpThreads: 1},
			want: []string{"CUDA_VISIBLE_DEVICES=", "GPULETD_CPU_CORES=1", "GPULETD_INTRA_OP_THREADS=1"},
			not:  []string{VarMPSPipeDirectory},
		},
		{
			name: "emulated",
			env:  Env{DeviceID: "emu0", Kind: KindEmulated, Type: "igniter-v100", Partition: PartitionMPS, Size: 20, Emulated: "igniter-v100", MemoryMB: 16384},
			want: []string{"CUDA_VISIBLE_DEVICES=", "GPULETD_EMULATED_DEVICE=igniter-v100", "GPULETD_DEVICE_MEMORY_MB=16384"},
			not:  []string{VarMPSPipeDirectory, VarMPSActiveThreadPercentage},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			enc := tt.env.Encode()
			require.IsIncreasing(t, enc)
			for _, w := range tt.want {
				require.Contains(t, enc, w)
			}
			for _, n := range tt.not {
				for _, kv := range enc {
					require.False(t, strings.HasPrefix(kv, n+"="), "%s must not be set", n)
				}
			}
			got, err := Decode(lookupIn(enc))
			require.NoError(t, err)
			require.Equal(t, tt.env, got)
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	base := []string{"GPULETD_DEVICE=cpu", "GPULETD_DEVICE_KIND=cpu", "GPULETD_PARTITION=cpu", "GPULETD_GPULET_SIZE=50",
		"GPULETD_CPU_CORES=0", "GPULETD_INTRA_OP_THREADS=1"}
	_, err := Decode(lookupIn(base))
	require.NoError(t, err)
	tests := []struct {
		name    string
		change  string
		wantMsg string
	}{
		{"no device", "GPULETD_DEVICE=", "GPULETD_DEVICE is not set"},
		{"bad size", "GPULETD_GPULET_SIZE=0", `GPULETD_GPULET_SIZE="0"`},
		{"bad cores", "GPULETD_CPU_CORES=x", "GPULETD_CPU_CORES"},
		{"bad threads", "GPULETD_INTRA_OP_THREADS=-2", "GPULETD_INTRA_OP_THREADS"},
		{"bad kind", "GPULETD_DEVICE_KIND=tpu", `GPULETD_DEVICE_KIND="tpu"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := append([]string{}, base...)
			env = append(env, tt.change) // a later value wins in lookupIn
			_, err := Decode(lookupIn(env))
			require.ErrorIs(t, err, ErrBadEnv)
			require.ErrorContains(t, err, tt.wantMsg)
		})
	}
	mps := []string{"GPULETD_DEVICE=gpu0", "GPULETD_DEVICE_KIND=nvidia", "GPULETD_PARTITION=mps", "GPULETD_GPULET_SIZE=50",
		"CUDA_VISIBLE_DEVICES=GPU-1", "CUDA_MPS_PIPE_DIRECTORY=/p", "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50", "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=1G"}
	_, err = Decode(lookupIn(mps))
	require.ErrorContains(t, err, "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT")
}

func TestApplyCPUIgnoresOtherKinds(t *testing.T) {
	require.NoError(t, Env{Kind: KindNVIDIA}.ApplyCPU())
}
