package interference

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRandomSplit(t *testing.T) {
	samples := synthSamples(100, 1, paperFactor) // 100 pairs, 200 samples
	train, test := RandomSplit(samples, TrainFraction, 42)
	require.Len(t, train, 140)
	require.Len(t, test, 60)
	side := map[int]string{}
	for _, s := range train {
		side[s.Pair] = "train"
	}
	for _, s := range test {
		require.NotEqual(t, "train", side[s.Pair], "pair %d on both sides", s.Pair)
	}

	again, _ := RandomSplit(samples, TrainFraction, 42)
	require.Equal(t, train, again, "same seed, same split")
	other, _ := RandomSplit(samples, TrainFraction, 43)
	require.NotEqual(t, train, other, "another seed, another split")

	all, none := RandomSplit(samples, 1, 1)
	require.Len(t, all, 200)
	require.Empty(t, none)
}

func TestLeaveOneModelOut(t *testing.T) {
	samples := synthSamples(100, 1, paperFactor)
	folds := LeaveOneModelOut(samples)
	require.Len(t, folds, 4)
	tested := 0
	for i, f := range folds {
		require.Equal(t, []string{"m0", "m1", "m2", "m3"}[i], f.Held)
		require.Len(t, f.Train, len(samples)-len(f.Test))
		for _, s := range f.Train {
			require.NotEqual(t, f.Held, s.Self.Model)
			require.NotEqual(t, f.Held, s.Other.Model)
		}
		for _, s := range f.Test {
			require.True(t, s.Self.Model == f.Held || s.Other.Model == f.Held)
		}
		tested += len(f.Test)
	}
	require.Equal(t, 2*len(samples), tested, "every sample is tested once per model in it")
}
