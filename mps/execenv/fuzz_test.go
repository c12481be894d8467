package execenv

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzDecode feeds Decode arbitrary environments (one KEY=value per line):
// it must never panic, and whatever it accepts must survive Encode and
// Decode unchanged.
func FuzzDecode(f *testing.F) {
	f.Add("GPULETD_DEVICE=cpu\nGPULETD_DEVICE_KIND=cpu\nGPULETD_PARTITION=cpu\nGPULETD_GPULET_SIZE=50\nGPULETD_CPU_CORES=1,0\nGPULETD_INTRA_OP_THREADS=2")
	f.Add("GPULETD_DEVICE=gpu0\nGPULETD_DEVICE_KIND=nvidia\nGPULETD_PARTITION=mps\nGPULETD_GPULET_SIZE=40\nCUDA_VISIBLE_DEVICES=GPU-1\nCUDA_MPS_PIPE_DIRECTORY=/p\nCUDA_MPS_ACTIVE_THREAD_PERCENTAGE=40\nCUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=512M")
	f.Add("GPULETD_DEVICE=emu0\nGPULETD_DEVICE_KIND=emulated\nGPULETD_PARTITION=mps\nGPULETD_GPULET_SIZE=20\nGPULETD_EMULATED_DEVICE=igniter-v100\nGPULETD_DEVICE_MEMORY_MB=16384")
	f.Fuzz(func(t *testing.T, in string) {
		env := strings.Split(in, "\n")
		e, err := Decode(lookupIn(env))
		if err != nil {
			require.ErrorIs(t, err, ErrBadEnv)
			return
		}
		again, err := Decode(lookupIn(e.Encode()))
		require.NoError(t, err)
		require.Equal(t, e, again)
	})
}
