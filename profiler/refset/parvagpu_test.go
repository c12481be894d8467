package refset

import (
	"bytes"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"
)

// TestParvaGPUPointsComeFromSegments checks the mapping of segmentPoints on
// the embedded set: every profile point is a measured segment (B = procs ×
// batch, time = batch / throughput) or the stand-in at B = 1, points rise
// strictly in batch and time, and every size serves a batch of one.
func TestParvaGPUPointsComeFromSegments(t *testing.T) {
	s := loadSet(t, SetParvaGPUA100)
	require.Equal(t, "A100-80GB", s.MIGModel)
	emb, err := Embedded(SetParvaGPUA100)
	require.NoError(t, err)
	src, err := DecodeSource(bytes.NewReader(emb), "parvagpu-a100.ref")
	require.NoError(t, err)
	require.Len(t, src.Segments, 1747, "measured rows (zeros are left out)")
	type key struct {
		model       string
		size, b, pr int
	}
	measured := map[key]float64{}
	for _, g := range src.Segments {
		size, err := segmentSize(g.GPCs)
		require.NoError(t, err)
		k := key{g.Model, size, g.Procs * g.Batch, g.Procs}
		ms := 1000 * float64(g.Batch) / g.Throughput
		if old, ok := measured[k]; !ok || ms < old {
			measured[k] = ms
		}
	}
	for _, m := range s.Models {
		for _, size := range s.Sizes {
			_, ok := m.Profile.Latency(1, size)
			require.True(t, ok, "%s at %d%% serves a batch of one", m.Name, size)
		}
		prevSize, prevB, prevMS := 0, 0, 0.0
		for _, p := range m.Profile.Points() {
			require.GreaterOrEqual(t, p.Procs, 1)
			if p.Size == prevSize {
				require.Greater(t, p.Batch, prevB)
				require.GreaterOrEqual(t, p.P50MS, prevMS)
			}
			prevSize, prevB, prevMS = p.Size, p.Batch, p.P50MS
			ms, ok := measured[key{m.Name, p.Size, p.Batch, p.Procs}]
			if p.Batch == 1 {
				// Measured, or a faster larger segment standing in.
				require.True(t, !ok || p.P50MS <= ms+1e-9, "%s b=1 p=%d", m.Name, p.Size)
				continue
			}
			require.True(t, ok, "%s b=%d p=%d is no measured segment", m.Name, p.Batch, p.Size)
			require.InDelta(t, ms, p.P50MS, 1e-9, "%s b=%d p=%d", m.Name, p.Batch, p.Size)
		}
	}
	// bert on 7 GPCs: a batch of 8 is served fastest by 4 processes of
	// batch 2 side by side.
	bert, _ := s.Model("bert")
	l, ok := bert.Profile.Latency(8, 100)
	require.True(t, ok)
	require.Equal(t, 4, bert.Profile.Procs(8, 100))
	require.InDelta(t, measured[key{"bert", 100, 8, 4}], l, 1e-9)
}

func TestParseParvaGPURejects(t *testing.T) {
	const header = "Mig instance,Batch size,Workload Number,Throughput,Latency\n"
	good := header + "1,1,1,74.408,0.013\n1,2,1,85.926,0.023\n"
	files := func(bert string) fstest.MapFS {
		fs := fstest.MapFS{}
		for _, m := range []string{"bert", "densenet121", "densenet169", "densenet201", "inceptionv3", "mobilenetv2",
			"resnet101", "resnet152", "resnet50", "vgg16", "vgg19"} {
			fs[m+".csv"] = &fstest.MapFile{Data: []byte(good)}
		}
		fs["bert.csv"] = &fstest.MapFile{Data: []byte(bert)}
		return fs
	}
	src, err := ParseParvaGPU(files(good+"1,4,5,0,0\n"), SetParvaGPUA100)
	require.NoError(t, err)
	require.Len(t, src.Segments, 22, "the zero row is left out")
	tests := []struct{ name, bert, want string }{
		{"header", "a,b,c,d,e\n1,1,1,1,1\n", "header is"},
		{"no such instance", header + "5,1,1,74.4,0.013\n", "no MIG instance size"},
		{"half zero", header + "1,1,1,0,0.013\n", "both or neither"},
		{"twice", good + "1,1,1,74.408,0.013\n", "given twice"},
		{"negative", header + "1,1,1,-3,0.013\n", "not a number"},
		{"short row", header + "1,1,1,3\n", "wrong number of fields"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseParvaGPU(files(tc.bert), SetParvaGPUA100)
			require.ErrorIs(t, err, ErrFormat)
			require.Contains(t, err.Error(), tc.want)
			require.Contains(t, err.Error(), "bert.csv")
		})
	}
	fs := files(good)
	delete(fs, "vgg19.csv")
	_, err = ParseParvaGPU(fs, SetParvaGPUA100)
	require.ErrorIs(t, err, ErrFormat)
	_, err = ParseParvaGPU(files(good), SetIgniterV100)
	require.ErrorIs(t, err, ErrUnknownSet)
}

func TestSegmentRecordsRoundTrip(t *testing.T) {
	src := &Source{Meta: catalog[SetParvaGPUA100], Models: []ModelName{{Name: "bert", Label: "bert"}},
		Segments: []SegmentPoint{{Model: "bert", GPCs: 3, Batch: 8, Procs: 2, Throughput: 123.25, LatencyMS: 65}}}
	text := encode(t, src)
	back, err := DecodeSource(strings.NewReader(text), "x.ref")
	require.NoError(t, err)
	require.Equal(t, src.Segments, back.Segments)
	_, err = DecodeSource(strings.NewReader(strings.Replace(text, "end 0 0 0 1", "end 0 0 0", 1)), "x.ref")
	require.ErrorIs(t, err, ErrFormat)
	_, err = DecodeSource(strings.NewReader(strings.Replace(text, "segment bert 3 ", "segment bert 5 ", 1)), "x.ref")
	require.ErrorContains(t, err, "no MIG instance size")
	_, err = DecodeSource(strings.NewReader(strings.Replace(text, "segment bert", "segment gpt", 1)), "x.ref")
	require.ErrorContains(t, err, "not declared")
}
