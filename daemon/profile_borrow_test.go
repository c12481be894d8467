package daemon

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/mps"
	"github.com/gpulet/gpuletd/profiler/store"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

// lendingNode is historyNode with a CPU device and a profile book.
func lendingNode(t *testing.T) (*node, *store.Store, mps.Device) {
	t.Helper()
	n, st := historyNode(t)
	devices, err := mps.New(mps.Options{Spec: mps.Spec{Mode: mps.ModeCPU}, CPUs: []int{0}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, devices.Close(context.Background())) })
	n.devices, n.book = devices, newProfileBook(st)
	cpu, err := devices.Inventory().Device("cpu")
	require.NoError(t, err)
	return n, st, cpu
}

// mlpOnTheCPU is lendingNode serving mlp (m) with a one-second SLO,
// profiled on its CPU at 2 ms a request.
func mlpOnTheCPU(t *testing.T) (n *node, m *repository.Model, cpu mps.Device) {
	t.Helper()
	n, st, cpu := lendingNode(t)
	n.catalog = newCatalog([]string{t.TempDir()}, testRepositoryOptions(0), st, n.events, zap.NewNop())
	m = mlpFile("c", 2_000_000)
	m.Version, m.Config.SLO = 1, config.Duration(time.Second)
	require.NoError(t, n.catalog.add(context.Background(), m))
	putProfile(t, st, m, cpu.Type, 2)
	return n, m, cpu
}

// mlpFile is a model file of mlp with the given sha256 (one hex digit
// repeated) and size.
func mlpFile(digit string, bytes int64, in ...repository.TensorSpec) *repository.Model {
	if in == nil {
		in = []repository.TensorSpec{{Name: "input", DataType: "FP32", Dims: []int64{784}}}
	}
	return &repository.Model{Name: "mlp", Platform: "onnxruntime", SHA256: strings.Repeat(digit, 64), Bytes: bytes,
		Inputs: in, Outputs: []repository.TensorSpec{{Name: "output", DataType: "FP32", Dims: []int64{10}}}}
}

func putProfile(t *testing.T, st *store.Store, m *repository.Model, deviceType string, p50 float64) {
	t.Helper()
	var pts []store.LatencyPoint
	for _, b := range []int{1, 2, 4} {
		pts = append(pts, store.LatencyPoint{ModelSHA: m.SHA256, DeviceType: deviceType, Size: 100, Batch: b,
			P50MS: p50 * float64(b), P99MS: math.NaN(), MeanMS: math.NaN(), Samples: 10, Complete: true, MeasuredAt: time.Now()})
	}
	require.NoError(t, st.PutLatency(context.Background(), pts))
}

// A served model whose file is replaced by one with other weights (the same
// tensors, about the same size) is placed with the old file's profile until
// its own is measured, and says so; a file that is another network is not.
func TestANewFileOfAServedModelBorrowsItsProfile(t *testing.T) {
	ctx := context.Background()
	n, st, cpu := lendingNode(t)
	old := mlpFile("a", 1_000_000)
	putProfile(t, st, old, cpu.Type, 2)

	cases := []struct {
		name string
		next *repository.Model
		lent bool
	}{
		{"new weights", mlpFile("b", 1_040_000), true},
		{"the same file again", mlpFile("a", 1_000_000), false},
		{"twice the size", mlpFile("c", 2_000_000), false},
		{"other inputs", mlpFile("d", 1_000_000, repository.TensorSpec{Name: "input", DataType: "FP32", Dims: []int64{28, 28}}), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lent := n.lendProfile(ctx, old, tc.next)
			if !tc.lent {
				require.Empty(t, lent)
				if tc.next.SHA256 != old.SHA256 {
					_, err := n.book.profile(ctx, tc.next, cpu)
					require.ErrorIs(t, err, errNoProfile)
					require.Nil(t, n.borrowedProfile(ctx, tc.next, cpu))
				}
				return
			}
			require.Equal(t, []string{cpu.Type}, lent)
			p, err := n.book.profile(ctx, tc.next, cpu)
			require.NoError(t, err)
			ms, ok := p.Latency(2, 100)
			require.True(t, ok)
			require.InDelta(t, 4, ms, 1e-9, "the old file's points")
			b := n.borrowedProfile(ctx, tc.next, cpu)
			require.NotNil(t, b)
			require.Equal(t, old.SHA256, b.FromSHA256)
			require.Equal(t, "gpuletd profile mlp --device cpu", b.Fix)
		})
	}
	evs := askEventList(t, n, "?kind="+EventProfileJob)
	require.Len(t, evs, 1)
	require.Equal(t, "warning", evs[0].Severity)
	require.Contains(t, evs[0].Message, "mlp's new file (sha256 bbbbbbbbbbbb) has no latency profile on cpu yet: it is placed with the profile of the file it replaces (sha256 aaaaaaaaaaaa)")
	require.Contains(t, evs[0].Message, "until measured with `gpuletd profile mlp --device cpu`")

	// A third file borrows what the second borrowed: the first's profile.
	third := mlpFile("e", 990_000)
	require.Equal(t, []string{cpu.Type}, n.lendProfile(ctx, mlpFile("b", 1_040_000), third))
	require.Equal(t, old.SHA256, n.borrowedProfile(ctx, third, cpu).FromSHA256)

	// Measured, its own profile wins.
	putProfile(t, st, third, cpu.Type, 3)
	p, err := n.book.profile(ctx, third, cpu)
	require.NoError(t, err)
	ms, _ := p.Latency(2, 100)
	require.InDelta(t, 6, ms, 1e-9)
	require.Nil(t, n.borrowedProfile(ctx, third, cpu))
	require.Empty(t, n.lendProfile(ctx, old, mlpFile("e", 990_000)), "a file with a profile of its own borrows none")
}
