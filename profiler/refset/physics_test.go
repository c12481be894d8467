package refset

import (
	"testing"

	"github.com/gpulet/gpuletd/interference"
	"github.com/stretchr/testify/require"
)

func igniterPhysics(t *testing.T) *Physics {
	t.Helper()
	ph, err := NewPhysics(loadSet(t, SetIgniterV100), nil)
	require.NoError(t, err)
	return ph
}

func TestPhysicsSolo(t *testing.T) {
	ph := igniterPhysics(t)
	got, err := ph.Solo(Placement{Model: "vgg19", Batch: 8, Size: 40})
	require.NoError(t, err)
	m, _ := ph.Set().Model("vgg19")
	want, _ := m.Profile.Latency(8, 40)
	require.Equal(t, want, got)

	derived, err := ph.Solo(Placement{Model: "vgg19", Batch: 8, Size: 100})
	require.NoError(t, err)
	require.Less(t, derived, got)

	_, err = ph.Solo(Placement{Model: "vgg19", Batch: 64, Size: 40})
	require.ErrorIs(t, err, ErrNoPoint)
	_, err = ph.Solo(Placement{Model: "lenet", Batch: 1, Size: 40})
	require.ErrorIs(t, err, ErrNoPoint)
}

func TestPhysicsCoLocatedMeasured(t *testing.T) {
	ph := igniterPhysics(t)
	// Line 17 of the iGniter file, first row: alexnet b=2 at 20% with
	// resnet50 b=2 at 80%: 2.7610640856844304 and 3.5690385860655733 ms.
	a := Placement{Model: "alexnet", Batch: 2, Size: 20}
	b := Placement{Model: "resnet50", Batch: 2, Size: 80}
	got, err := ph.CoLocated(a, b)
	require.NoError(t, err)
	require.Equal(t, SourceMeasured, got.Source)
	require.Equal(t, [2]float64{2.7610640856844304, 3.5690385860655733}, got.LatencyMS)
	require.Greater(t, got.Factor(0), 1.0)

	swapped, err := ph.CoLocated(b, a)
	require.NoError(t, err)
	require.Equal(t, SourceMeasured, swapped.Source)
	require.Equal(t, [2]float64{got.LatencyMS[1], got.LatencyMS[0]}, swapped.LatencyMS)
	require.Equal(t, [2]float64{got.SoloMS[1], got.SoloMS[0]}, swapped.SoloMS)
}

func TestPhysicsCoLocatedPredicted(t *testing.T) {
	ph := igniterPhysics(t)
	require.NotNil(t, ph.Model())
	tests := []struct {
		name string
		a, b Placement
	}{
		{"unmeasured batches", Placement{"alexnet", 3, 40}, Placement{"vgg19", 5, 60}},
		{"unmeasured split", Placement{"ssd", 4, 30}, Placement{"resnet50", 4, 70}},
		{"GPU not full", Placement{"ssd", 8, 20}, Placement{"vgg19", 8, 40}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ph.CoLocated(tc.a, tc.b)
			require.NoError(t, err)
			require.Equal(t, SourcePredicted, got.Source)
			for i, pl := range []Placement{tc.a, tc.b} {
				solo, err := ph.Solo(pl)
				require.NoError(t, err)
				require.Equal(t, solo, got.SoloMS[i])
				require.GreaterOrEqual(t, got.Factor(i), 1.0)
				require.Less(t, got.Factor(i), 1.5)
			}
			sa, _ := ph.Set().Side(tc.a.Model, tc.a.Batch, tc.a.Size)
			sb, _ := ph.Set().Side(tc.b.Model, tc.b.Batch, tc.b.Size)
			require.InDelta(t, got.SoloMS[0]*ph.Model().Predict(interference.Sample{Self: sa, Other: sb}), got.LatencyMS[0], 1e-12)
			again, err := ph.CoLocated(tc.a, tc.b)
			require.NoError(t, err)
			require.Equal(t, got, again, "pure: same question, same answer")
		})
	}
}

func TestPhysicsErrors(t *testing.T) {
	ph := igniterPhysics(t)
	_, err := ph.CoLocated(Placement{"alexnet", 2, 60}, Placement{"vgg19", 2, 60})
	require.ErrorIs(t, err, ErrOversubscribed)
	_, err = ph.CoLocated(Placement{"alexnet", 2, 10}, Placement{"vgg19", 2, 60})
	require.ErrorIs(t, err, ErrNoPoint, "alexnet has no batch 2 at 10%")

	whole, err := NewPhysics(loadSet(t, SetSymphony1080Ti), nil)
	require.NoError(t, err)
	require.Nil(t, whole.Model())
	_, err = whole.CoLocated(Placement{"resnet50", 2, 50}, Placement{"vgg19", 2, 50})
	require.ErrorIs(t, err, ErrNoPoint, "a whole-GPU set has no 50% profile")
	solo, err := whole.Solo(Placement{"resnet50", 4, 100})
	require.NoError(t, err)
	// Symphony Table 3: ResNet50 on a 1080 Ti, α 2.050, β 5.378.
	require.InDelta(t, 4*2.050+5.378, solo, 1e-12)
}

func TestPhysicsWithGivenModel(t *testing.T) {
	set := loadSet(t, SetIgniterV100)
	flat := &interference.Model{
		Spec:         interference.Spec{Name: "flat", Features: []string{interference.Const}, Target: interference.TargetFactor},
		Coefficients: []float64{1.25}, MinFactor: 1, MaxFactor: 2,
	}
	ph, err := NewPhysics(set, flat)
	require.NoError(t, err)
	got, err := ph.CoLocated(Placement{"alexnet", 3, 40}, Placement{"vgg19", 5, 60})
	require.NoError(t, err)
	require.InDelta(t, 1.25, got.Factor(0), 1e-12)
	require.InDelta(t, 1.25, got.Factor(1), 1e-12)
}
