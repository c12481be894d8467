package daemon

import (
	"context"
	"testing"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/mps"
	"github.com/stretchr/testify/require"
)

// TestEmulatedTimeScale: an emulated GPU at 1/20 of its set's speed gives
// the planner (and through it the executors) every latency twenty times the
// set's, at every batch and size.
func TestEmulatedTimeScale(t *testing.T) {
	b := newProfileBook(nil)
	m := &repository.Model{Name: "r", Config: repository.ModelConfig{Profile: "resnet50"}}
	for _, tc := range []struct {
		name  string
		scale float64
		want  float64
	}{{"the set's speed", 0, 1}, {"also the set's", 1, 1}, {"20 times slower", 20, 20}, {"twice as fast", 0.5, 0.5}} {
		t.Run(tc.name, func(t *testing.T) {
			ref, err := b.profile(context.Background(), m, mps.Device{Kind: mps.KindEmulated, Type: "igniter-v100", Emulated: "igniter-v100"})
			require.NoError(t, err)
			got, err := b.profile(context.Background(), m, mps.Device{Kind: mps.KindEmulated, Type: "x", Emulated: "igniter-v100", TimeScale: tc.scale})
			require.NoError(t, err)
			rp, gp := ref.Points(), got.Points()
			require.Len(t, gp, len(rp))
			for i := range rp {
				require.Equal(t, rp[i].Batch, gp[i].Batch)
				require.Equal(t, rp[i].Size, gp[i].Size)
				require.InDelta(t, tc.want*rp[i].P50MS, gp[i].P50MS, 1e-9)
				require.InDelta(t, tc.want*rp[i].P99MS, gp[i].P99MS, 1e-9)
			}
		})
	}
}

// On an NVIDIA GPU a batching model runs one session per padded batch size,
// each with its copy of the weights, and its memory estimate counts them.
func TestMemoryEstimateCountsSessions(t *testing.T) {
	gpu := mps.Device{Kind: mps.KindNVIDIA}
	cpu := mps.Device{Kind: mps.KindCPU}
	tests := []struct {
		name     string
		dev      mps.Device
		maxBatch int
		sessions int
	}{
		{"cpu", cpu, 64, 1},
		{"gpu, no batching", gpu, 0, 1},
		{"gpu, batch of one", gpu, 1, 1},
		{"gpu, 5", gpu, 5, 4},   // 1 2 4 5
		{"gpu, 32", gpu, 32, 6}, // 1 2 4 8 16 32
		{"gpu, 64", gpu, 64, 7},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.sessions, sessionsOn(tc.dev, tc.maxBatch))
		})
	}
	mb := int64(100 << 20)
	require.InDelta(t, 456, estimateMemoryMB(mb, 1), 1e-9, "weights twice and 256 MB, as before")
	require.InDelta(t, 256+800, estimateMemoryMB(mb, 7), 1e-9)
}
