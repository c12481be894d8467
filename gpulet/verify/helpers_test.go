package verify_test

import (
	"context"
	"testing"

	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/interference"
	"github.com/stretchr/testify/require"
)

type constFactor float64

func (c constFactor) Predict(interference.Sample) float64 { return float64(c) }

func runPlan(t testing.TB, algo gpulet.Algo, in gpulet.Input, opts gpulet.Options) *gpulet.Plan {
	t.Helper()
	p, err := gpulet.Run(context.Background(), algo, in, opts)
	require.NoError(t, err)
	return p
}
