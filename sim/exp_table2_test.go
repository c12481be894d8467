package sim

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The staggered bound by hand (Symphony §3.3): ResNet50, (1 + 1/8)·ℓ(b) ≤ 25
// gives ℓ(b) ≤ 22.22, b = 16, ℓ(16) = 21.92 ms, 8·16/21.92 ms = 5 839 req/s;
// InceptionResNetV2, ℓ(b) ≤ 62.22, b = 8, ℓ(8) = 59.09 ms, 1 083 req/s.
// Both are Symphony Table 2's analytic columns.
func TestStaggeredBound(t *testing.T) {
	for _, m := range Table2Models {
		b, rate := StaggeredBound(m.AlphaMS, m.BetaMS, m.SLOMS, Table2GPUs)
		require.InDelta(t, m.Bound, rate, 0.5, m.Name)
		want := map[string]int{"resnet50": 16, "inceptionresnetv2": 8}[m.Name]
		require.Equal(t, want, b, m.Name)
	}
	b, rate := StaggeredBound(10, 10, 5, 8)
	require.Zero(t, b, "no batch fits")
	require.Zero(t, rate)
}
