package store

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestModelMemory(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, WithClock(newTestClock().Now))
	sha := shaOf("vgg")

	_, err := s.ModelMemory(ctx, sha, "cpu")
	require.ErrorIs(t, err, ErrNotFound, "nothing measured yet")

	run, err := s.StartRun(ctx, sha, "cpu", "")
	require.NoError(t, err)
	require.NoError(t, s.PutModelMemory(ctx, ModelMemory{ModelSHA: sha, DeviceType: "cpu", ResidentMB: 1438, RunID: run.ID}))
	got, err := s.ModelMemory(ctx, sha, "cpu")
	require.NoError(t, err)
	require.Equal(t, 1438.0, got.ResidentMB)
	require.Equal(t, run.ID, got.RunID)
	require.False(t, got.MeasuredAt.IsZero())

	require.NoError(t, s.PutModelMemory(ctx, ModelMemory{ModelSHA: sha, DeviceType: "cpu", ResidentMB: 900}))
	got, err = s.ModelMemory(ctx, sha, "cpu")
	require.NoError(t, err)
	require.Equal(t, 1438.0, got.ResidentMB, "a smaller measurement leaves the larger")
	require.Equal(t, run.ID, got.RunID)
	require.NoError(t, s.PutModelMemory(ctx, ModelMemory{ModelSHA: sha, DeviceType: "cpu", ResidentMB: 1500}))
	got, err = s.ModelMemory(ctx, sha, "cpu")
	require.NoError(t, err)
	require.Equal(t, 1500.0, got.ResidentMB, "a larger one replaces it")
	require.Zero(t, got.RunID)

	_, err = s.ModelMemory(ctx, sha, "nvidia-h100")
	require.ErrorIs(t, err, ErrNotFound, "per device type")

	mb, err := s.ExecutorMemory(ctx, "cpu")
	require.NoError(t, err)
	require.Zero(t, mb, "no executor's own memory measured yet")
	require.NoError(t, s.PutModelMemory(ctx, ModelMemory{ModelSHA: sha, DeviceType: "cpu", ResidentMB: 1460, ExecutorMB: 52}))
	got, err = s.ModelMemory(ctx, sha, "cpu")
	require.NoError(t, err)
	require.Equal(t, 1460.0, got.ResidentMB, "a measurement that tells the executor's own memory apart replaces one that did not")
	require.Equal(t, 1408.0, got.OwnMB())
	require.NoError(t, s.PutModelMemory(ctx, ModelMemory{ModelSHA: sha, DeviceType: "cpu", ResidentMB: 1500, ExecutorMB: 150}))
	got, err = s.ModelMemory(ctx, sha, "cpu")
	require.NoError(t, err)
	require.Equal(t, 1408.0, got.OwnMB(), "the model's own memory is compared: 1350 does not replace 1408")
	require.NoError(t, s.PutModelMemory(ctx, ModelMemory{ModelSHA: sha, DeviceType: "cpu", ResidentMB: 1450}))
	got, err = s.ModelMemory(ctx, sha, "cpu")
	require.NoError(t, err)
	require.Equal(t, 52.0, got.ExecutorMB, "nor does one that does not tell it apart and holds more in all")
	require.Equal(t, 1460.0, got.ResidentMB)
	require.NoError(t, s.PutModelMemory(ctx, ModelMemory{ModelSHA: sha, DeviceType: "cpu", ResidentMB: 1480}))
	got, err = s.ModelMemory(ctx, sha, "cpu")
	require.NoError(t, err)
	require.Equal(t, ModelMemory{ModelSHA: sha, DeviceType: "cpu", ResidentMB: 1480, ExecutorMB: 52, MeasuredAt: got.MeasuredAt}, got,
		"taken to hold the executor's 52 MB stored, 1428 of its own is more: it replaces the row and keeps those 52")
	require.NoError(t, s.PutModelMemory(ctx, ModelMemory{ModelSHA: shaOf("resnet18"), DeviceType: "cpu", ResidentMB: 600, ExecutorMB: 55}))
	mb, err = s.ExecutorMemory(ctx, "cpu")
	require.NoError(t, err)
	require.Equal(t, 55.0, mb, "the most measured")

	for _, bad := range []ModelMemory{
		{DeviceType: "cpu", ResidentMB: 1},
		{ModelSHA: sha, ResidentMB: 1},
		{ModelSHA: sha, DeviceType: "cpu"},
		{ModelSHA: sha, DeviceType: "cpu", ResidentMB: math.NaN()},
		{ModelSHA: sha, DeviceType: "cpu", ResidentMB: -3},
		{ModelSHA: sha, DeviceType: "cpu", ResidentMB: 1, RunID: -1},
		{ModelSHA: sha, DeviceType: "cpu", ResidentMB: 10, ExecutorMB: -1},
		{ModelSHA: sha, DeviceType: "cpu", ResidentMB: 10, ExecutorMB: 10},
		{ModelSHA: sha, DeviceType: "cpu", ResidentMB: 10, ExecutorMB: math.NaN()},
	} {
		require.ErrorIs(t, s.PutModelMemory(ctx, bad), ErrInvalid, "%+v", bad)
	}
}

// A database's summary says, per device type, how many of its models'
// memory was measured and what they need together; a file measured but
// no longer a model's is left out.
func TestSummarySaysTheMeasuredMemory(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	for _, m := range []struct {
		name string
		mb   float64
	}{{"vgg", 1115}, {"resnet18", 571}} {
		_, err := s.UpsertModel(ctx, ModelRecord{Name: m.name, Version: 1, SHA256: shaOf(m.name), SLOMS: 100, Platform: "onnxruntime_onnx"})
		require.NoError(t, err)
		require.NoError(t, s.PutModelMemory(ctx, ModelMemory{ModelSHA: shaOf(m.name), DeviceType: "cpu", ResidentMB: m.mb}))
	}
	require.NoError(t, s.PutModelMemory(ctx, ModelMemory{ModelSHA: shaOf("vgg"), DeviceType: "nvidia-h100", ResidentMB: 900}))
	require.NoError(t, s.PutModelMemory(ctx, ModelMemory{ModelSHA: shaOf("an old file"), DeviceType: "cpu", ResidentMB: 5000}))
	sum, err := s.Summary(ctx)
	require.NoError(t, err)
	require.Equal(t, []TypeMemory{{DeviceType: "cpu", Models: 2, MB: 1686, WithExecutor: 2}, {DeviceType: "nvidia-h100", Models: 1, MB: 900, WithExecutor: 1}}, sum.Memory)

	// With the executor's own memory told apart: each model's own, and one
	// executor's; a model measured before counts its executor's itself.
	require.NoError(t, s.PutModelMemory(ctx, ModelMemory{ModelSHA: shaOf("vgg"), DeviceType: "cpu", ResidentMB: 1115, ExecutorMB: 50}))
	sum, err = s.Summary(ctx)
	require.NoError(t, err)
	require.Equal(t, TypeMemory{DeviceType: "cpu", Models: 2, MB: 1065 + 571 + 50, WithExecutor: 1}, sum.Memory[0], "resnet18 counts its executor's")
	require.NoError(t, s.PutModelMemory(ctx, ModelMemory{ModelSHA: shaOf("resnet18"), DeviceType: "cpu", ResidentMB: 571, ExecutorMB: 52}))
	sum, err = s.Summary(ctx)
	require.NoError(t, err)
	require.Equal(t, TypeMemory{DeviceType: "cpu", Models: 2, MB: 1065 + 519 + 52}, sum.Memory[0])
}
