package modelzoo_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/modelzoo"
)

func TestNamesAndLookup(t *testing.T) {
	require.Equal(t, []string{"lenet5", "mlp", "resnet18", "vgg"}, modelzoo.Names())
	require.ElementsMatch(t, modelzoo.Names(), modelzoo.DemoModels())

	wantProfile := map[string]string{"lenet5": "alexnet", "resnet18": "resnet50", "vgg": "vgg19", "mlp": "alexnet"}
	for _, name := range modelzoo.Names() {
		m, err := modelzoo.Lookup(name)
		require.NoError(t, err)
		require.Equal(t, name, m.Name)
		require.Equal(t, wantProfile[name], m.Profile)
		require.NotEmpty(t, m.Description)
		require.Greater(t, m.SLO, time.Duration(0))
		require.Positive(t, m.MaxBatchSize)
		require.Equal(t, int64(-1), m.InputShape[0])
		require.Equal(t, int64(-1), m.OutputShape[0])
	}
}

func TestLookupReturnsCopies(t *testing.T) {
	m, err := modelzoo.Lookup("mlp")
	require.NoError(t, err)
	m.InputShape[1] = 1
	again, err := modelzoo.Lookup("mlp")
	require.NoError(t, err)
	require.Equal(t, []int64{-1, 784}, again.InputShape)
}

func TestUnknownModel(t *testing.T) {
	_, err := modelzoo.Lookup("alexnet")
	require.ErrorIs(t, err, modelzoo.ErrUnknownModel)
	require.Contains(t, err.Error(), `"alexnet"`)
	_, err = modelzoo.Build("resnet50", 1)
	require.ErrorIs(t, err, modelzoo.ErrUnknownModel)
	_, err = modelzoo.BuildBytes("", 1)
	require.ErrorIs(t, err, modelzoo.ErrUnknownModel)
}
