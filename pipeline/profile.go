package pipeline

import "github.com/gpulet/gpuletd/profiler/refset"

// SetProfile gives the batch times of a reference set's models on a
// gpu-let of size percent (100: a whole GPU, Loki's worker).
func SetProfile(set *refset.Set, size int) ProfileFunc {
	return func(name string) (LatencyFunc, int, bool) {
		m, ok := set.Model(name)
		if !ok {
			return nil, 0, false
		}
		prof := m.Profile
		return func(b int) (float64, bool) { return prof.Latency(b, size) }, prof.MaxBatch(size), true
	}
}
