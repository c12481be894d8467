package engine

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFixedBatchRepeatsAndDiffersPerRow(t *testing.T) {
	initORT(t)
	cpu := newCPU(t, 1)
	path := zooModel(t, "mlp")
	a, err := FixedBatch(context.Background(), cpu, "mlp", path, 4)
	require.NoError(t, err)
	require.Len(t, a, 4*10, "mlp answers 10 values per request")
	b, err := FixedBatch(context.Background(), cpu, "mlp", path, 4)
	require.NoError(t, err)
	require.Equal(t, a, b, "the input is fixed")
	require.NotEqual(t, a[:10], a[10:20], "every row gets its own input")
	_, err = FixedBatch(context.Background(), cpu, "mlp", path+".missing", 4)
	require.Error(t, err)
}
