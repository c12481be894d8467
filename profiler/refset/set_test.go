package refset

import (
	"bytes"
	"errors"
	"io/fs"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNamesAndLoad(t *testing.T) {
	require.Equal(t, []string{SetH100Measured, SetIgniterV100, SetLoki1080Ti, SetParvaGPUA100, SetShepherdV100, SetSymphony1080Ti, SetSymphonyA100}, Names())
	tests := []struct {
		name         string
		models       int
		partitioning string
		sizes        []int
		memGiB       float64
		withSLO      bool
		pairs        int
		maxBatch     int
		origin       string
	}{
		{SetIgniterV100, 4, PartitionMPS, []int{20, 40, 50, 60, 80, 100}, 16, false, 750, 32, "../shared/data/"},
		{SetH100Measured, 7, PartitionMPS, []int{10, 20, 30, 40, 50, 60, 80, 100}, 80, false, 66, 64, "profiler/refset/measured/"},
		{SetSymphonyA100, 37, PartitionNone, []int{100}, 40, true, 0, 32, "../shared/data/"},
		{SetSymphony1080Ti, 35, PartitionNone, []int{100}, 11, true, 0, 32, "../shared/data/"},
		{SetShepherdV100, 17, PartitionNone, []int{100}, 16, false, 0, 32, "../shared/data/"},
		{SetLoki1080Ti, 12, PartitionNone, []int{100}, 11, false, 0, 64, "../shared/data/"},
		// A segment's batch is its processes' batches added up: no one
		// largest batch (0: not checked).
		{SetParvaGPUA100, 11, PartitionMIG, []int{14, 29, 43, 57, 100}, 80, false, 0, 0, "../shared/data/"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := loadSet(t, tc.name)
			require.Equal(t, tc.name, s.Name)
			require.Equal(t, tc.name, s.DeviceType)
			require.Len(t, s.Models, tc.models)
			require.Equal(t, tc.partitioning, s.Partitioning)
			require.Equal(t, tc.sizes, s.Sizes)
			require.Equal(t, tc.memGiB, s.MemoryGiB)
			require.Len(t, s.Pairs, tc.pairs)
			require.True(t, strings.HasPrefix(s.Source, tc.origin), s.Source)
			for _, m := range s.Models {
				require.Equal(t, tc.withSLO, m.SLOMS > 0, m.Name)
				require.Equal(t, tc.name, m.Profile.DeviceType)
				if tc.maxBatch > 0 {
					require.Equal(t, tc.maxBatch, m.Profile.MaxBatch(100), m.Name)
				}
				mb, known := FootprintMB(m.Name)
				require.True(t, known, "parameter count of %s", m.Name)
				require.Equal(t, mb, m.Profile.MemoryMB)
				got, ok := s.Model(m.Name)
				require.True(t, ok)
				require.Same(t, m, got)
			}
		})
	}
	_, err := Load("tpu-v9")
	require.ErrorIs(t, err, ErrUnknownSet)
}

func TestWholeGPUProfilesFollowAlphaBeta(t *testing.T) {
	s := loadSet(t, SetSymphonyA100)
	m, ok := s.Model("resnet50")
	require.True(t, ok)
	// Symphony Table 4: ResNet50 α 0.268, β 5.172, SLO 20 ms on the A100.
	require.Equal(t, LinearModel{Model: "resnet50", AlphaMS: 0.268, BetaMS: 5.172, SLOMS: 20}, m.Linear)
	for _, b := range []int{1, 7, 32} {
		l, ok := m.Profile.Latency(b, 100)
		require.True(t, ok)
		require.InDelta(t, 0.268*float64(b)+5.172, l, 1e-12)
	}
	_, ok = m.Profile.Latency(1, 50)
	require.False(t, ok, "whole-GPU sets have no partitions")
	require.Empty(t, m.DerivedPoints())

	sh := loadSet(t, SetShepherdV100)
	inc, ok := sh.Model("inception-v3")
	require.True(t, ok)
	require.Equal(t, "Inception v3", inc.Label)
}

func TestIgniterProfiles(t *testing.T) {
	s := loadSet(t, SetIgniterV100)
	require.Equal(t, []string{"alexnet", "resnet50", "vgg19", "ssd"}, s.ModelNames())
	for _, m := range s.Models {
		derived := m.DerivedPoints()
		require.Len(t, derived, 31, "b = 2..32 at p = 100")
		for _, pt := range derived {
			require.Equal(t, 100, pt.Size)
			require.True(t, m.IsDerived(pt.Batch, 100))
			require.True(t, math.IsNaN(pt.Util.L2))
			l80, _ := m.Profile.Latency(pt.Batch, 80)
			require.LessOrEqual(t, pt.P50MS, l80, "%s b=%d: more SMs never slower", m.Name, pt.Batch)
		}
		require.False(t, m.IsDerived(1, 100), "batch 1 at 100 percent is measured")
		require.False(t, m.IsDerived(8, 80))
		u, ok := m.Profile.Utilisation(8, 40)
		require.True(t, ok)
		require.False(t, math.IsNaN(u.L2))
		require.False(t, math.IsNaN(u.DRAM))
		require.True(t, math.IsNaN(u.SM), "iGniter did not measure SM utilisation")
	}
	// A measured point, straight from the source (line 5 of the jsonl).
	r, _ := s.Model("resnet50")
	l, ok := r.Profile.Latency(1, 20)
	require.True(t, ok)
	require.Equal(t, 4.25815375350141, l)
}

func TestInterferenceSamples(t *testing.T) {
	s := loadSet(t, SetIgniterV100)
	samples, err := s.InterferenceSamples()
	require.NoError(t, err)
	require.Len(t, samples, 1500)
	for i, x := range samples {
		require.Equal(t, i/2, x.Pair)
		require.Equal(t, 100, x.Self.Size+x.Other.Size)
		require.Greater(t, x.Factor(), 1.0, "iGniter measured a slowdown for every pair")
		require.Less(t, x.Factor(), 1.3)
		require.False(t, math.IsNaN(x.Self.Util.DRAM))
		require.False(t, math.IsNaN(x.Self.SerialMS))
		require.Greater(t, x.Self.SerialMS, 0.0)
	}
	first := s.Pairs[0]
	require.Equal(t, first.Latency1MS, samples[0].CoLocatedMS)
	require.Equal(t, first.Latency2MS, samples[1].CoLocatedMS)
	require.Equal(t, first.Model2, samples[1].Self.Model)

	_, err = loadSet(t, SetShepherdV100).Side("resnet50", 4, 50)
	require.ErrorIs(t, err, ErrNoPoint)
	_, err = s.Side("lenet", 4, 50)
	require.ErrorIs(t, err, ErrNoPoint)
}

// TestEmbeddedMatchesSources re-converts the original files and compares
// them with the embedded ones. Only this comparison needs the shared data
// folder; it is skipped when the folder is absent.
func TestEmbeddedMatchesSources(t *testing.T) {
	if _, err := os.Stat(sharedData); errors.Is(err, fs.ErrNotExist) {
		t.Skipf("%s is absent: embedded files not compared with their sources", sharedData)
	}
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			origin, err := Origin(name)
			require.NoError(t, err)
			var buf bytes.Buffer
			require.NoError(t, ConvertOrigin(name, OriginFile(origin, sharedData, "."), &buf))
			emb, err := Embedded(name)
			require.NoError(t, err)
			require.Equal(t, string(emb), buf.String(), "run `go generate ./profiler/refset`")
		})
	}
}

func TestBuildRejects(t *testing.T) {
	src := miniSource(t)
	src.Pairs[0].Model2 = "zz"
	_, err := Build(src)
	require.ErrorIs(t, err, ErrFormat)

	src = miniSource(t)
	src.Points = append(src.Points, src.Points[0])
	_, err = Build(src)
	require.ErrorContains(t, err, "given twice")

	src = miniSource(t)
	src.Models = append(src.Models, ModelName{Name: "cc", Label: "cc"})
	_, err = Build(src)
	require.ErrorContains(t, err, "model cc")
}

func TestLoadReportsCorruptEmbeddedFile(t *testing.T) {
	// Load and DecodeSource share one path; a damaged copy of an embedded
	// file is reported with its name and line.
	emb, err := Embedded(SetShepherdV100)
	require.NoError(t, err)
	damaged := strings.Replace(string(emb), "linear resnet18 0.22", "linear resnet18 0.2.2", 1)
	_, err = DecodeSource(strings.NewReader(damaged), "data/shepherd-v100.ref")
	require.ErrorIs(t, err, ErrFormat)
	require.Contains(t, err.Error(), "data/shepherd-v100.ref line ")
	require.Contains(t, err.Error(), `alpha_ms "0.2.2"`)
}

func TestConvertUnknownSet(t *testing.T) {
	var buf bytes.Buffer
	require.ErrorIs(t, Convert("tpu-v9", strings.NewReader(""), &buf), ErrUnknownSet)
	_, err := Origin("tpu-v9")
	require.ErrorIs(t, err, ErrUnknownSet)
	_, err = Embedded("tpu-v9")
	require.ErrorIs(t, err, ErrUnknownSet)
	require.ErrorIs(t, ConvertIgniter(strings.NewReader("{"), &buf), ErrFormat)
}
