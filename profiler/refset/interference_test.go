package refset

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpulet/gpuletd/interference"
	"github.com/stretchr/testify/require"
)

// The interference model on the real iGniter V100 pairs (1,500 samples from
// 750 measured co-locations). Floors: the gpu-let paper reports p90 10.26%
// for its linear model on a random 70/30 split (section 4.4, seed
// 003_e70036d3681c5c75.txt); the best model must reach p90 ≤ 5% when every
// model is held out in turn. Measured (seed 1): paper random p90 5.64%,
// LOMO p90 6.86%; best ("launch") LOMO p90 4.83%, random p90 4.69%.
func TestInterferenceFloorsOnIgniter(t *testing.T) {
	samples, err := loadSet(t, SetIgniterV100).InterferenceSamples()
	require.NoError(t, err)
	rep, err := interference.Bench(samples, interference.DefaultSeed)
	require.NoError(t, err)
	t.Logf("paper %+v", rep.Paper)
	t.Logf("best %s %+v", rep.Best.Name, rep.Best.SplitQuantiles)
	require.LessOrEqual(t, rep.Paper.Random.P90, 0.1026)
	require.LessOrEqual(t, rep.Best.LOMO.P90, 0.05)
	require.LessOrEqual(t, rep.Best.Random.P90, rep.Paper.Random.P90)
	require.Less(t, rep.Best.LOMO.P90, rep.Paper.LOMO.P90)
	require.NotEqual(t, interference.PaperName, rep.Best.Name)

	// The paper's model stays within its published figure on other seeds too.
	for seed := uint64(2); seed <= 6; seed++ {
		e, err := interference.HeldOutRandom(samples, interference.Paper(), seed)
		require.NoError(t, err)
		require.LessOrEqual(t, e.Quantile(0.9), 0.1026, "seed %d", seed)
	}
}

func TestTrainedModelOnIgniter(t *testing.T) {
	ph := igniterPhysics(t)
	m := ph.Model()
	require.Equal(t, 1500, m.Stats.Samples)
	require.Contains(t, m.Stats.HeldOut, interference.SplitLOMO)
	require.Greater(t, m.Stats.R2, 0.3)
	require.Equal(t, 1.0, m.MinFactor, "every iGniter pair slowed down")
	b, err := json.Marshal(m)
	require.NoError(t, err)
	var back interference.Model
	require.NoError(t, json.Unmarshal(b, &back))
	samples, _ := ph.Set().InterferenceSamples()
	for _, s := range samples[:50] {
		require.Equal(t, m.Predict(s), back.Predict(s))
	}
}

func TestBenchInterferenceFromFile(t *testing.T) {
	// The mini fixture has too few pairs for any model: a clear error, not a
	// report.
	_, err := BenchInterference(strings.NewReader(readFixture(t, "igniter-mini.jsonl")), 1)
	require.ErrorIs(t, err, interference.ErrNoCandidate)
	_, err = BenchInterference(strings.NewReader("{"), 1)
	require.ErrorIs(t, err, ErrFormat)
	_, err = BenchInterferenceSet(loadSet(t, SetShepherdV100), 1)
	require.ErrorIs(t, err, ErrNoInterference)

	path := filepath.Join(sharedData, "igniter", "v100-mps-profile.jsonl")
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("%s is absent: the file path of the bench is not compared", path)
	}
	require.NoError(t, err)
	defer f.Close()
	fromFile, err := BenchInterference(f, 1)
	require.NoError(t, err)
	embedded, err := BenchInterferenceSet(loadSet(t, SetIgniterV100), 1)
	require.NoError(t, err)
	require.Equal(t, embedded, fromFile)
}
