package planbench

import (
	"sync"
	"testing"

	"github.com/gpulet/gpuletd/profiler/refset"
	"github.com/stretchr/testify/require"
)

var igniterSet = sync.OnceValues(func() (*refset.Set, error) { return refset.Load(refset.SetIgniterV100) })

func igniterNode(t testing.TB, gpus int) *Node {
	t.Helper()
	set, err := igniterSet()
	require.NoError(t, err)
	n, err := NewNode(set, gpus)
	require.NoError(t, err)
	return n
}
