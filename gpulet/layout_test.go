package gpulet

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLayoutAndShape(t *testing.T) {
	p := &Plan{GPUs: []GPUPlan{
		{ID: "gpu0", GPULets: []GPULet{
			{Size: 40, Models: []Placement{{Name: "resnet50", Batch: 8, Rate: 120.4}}},
			{Size: 60, Models: []Placement{{Name: "ssd", Batch: 2, Rate: 40}, {Name: "bert", Batch: 4, Rate: 9.6}}},
		}},
		{ID: "gpu1"},
	}}
	require.Equal(t, "gpu0: 40%[resnet50×8@120/s] 60%[bert×4@10/s ssd×2@40/s]", p.Layout())
	require.Equal(t, "gpu0: 40%[resnet50] 60%[bert ssd]", p.Shape())
	require.Equal(t, "gpu0: 40%[resnet50×8] 60%[bert×4 ssd×2]", p.Arrangement())
	require.Equal(t, "nothing placed", (&Plan{}).Layout())
}
