package refset

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseMeasured(t *testing.T) {
	in := strings.Join([]string{
		`{"kind": "meta", "gpu": "NVIDIA H100 80GB HBM3"}`,
		`{"kind": "point", "model": "ResNet50", "size": 50, "batch": 8, "p50_ms": 3.78}`,
		`{"kind": "point", "model": "resnet50", "size": 100, "batch": 8, "p50_ms": 3.1}`,
		`{"kind": "util", "model": "resnet50", "size": 50, "batch": 8, "metric": "dram", "value": 2.9, "source": "nvml-gpm"}`,
		`{"kind": "util", "model": "resnet50", "size": 50, "batch": 8, "metric": "l2", "value": null, "source": "unknown"}`,
		`{"kind": "pair", "model_a": "resnet50", "size_a": 50, "batch_a": 8, "coloc_a_ms": 3.8, "model_b": "resnet50", "size_b": 50, "batch_b": 8, "coloc_b_ms": 3.9}`,
		`{"kind": "executor", "model": "resnet50", "size": 50, "sm_count": 66}`,
	}, "\n")
	src, err := ParseMeasured(strings.NewReader(in), SetH100Measured)
	require.NoError(t, err)
	require.Equal(t, []ModelName{{Name: "resnet50", Label: "resnet50"}}, src.Models)
	require.Len(t, src.Points, 2)
	require.Equal(t, 50, src.Points[0].Size, "sorted by model, batch, size")
	require.Equal(t, 2.9, src.Points[0].DRAM)
	require.True(t, math.IsNaN(src.Points[0].L2), "a null utilisation is unknown")
	require.True(t, math.IsNaN(src.Points[1].DRAM), "no util record: unknown")
	require.Equal(t, []CoLocation{{Model1: "resnet50", Model2: "resnet50", Batch1: 8, Batch2: 8, Size1: 50, Size2: 50,
		Latency1MS: 3.8, Latency2MS: 3.9}}, src.Pairs)
	var buf bytes.Buffer
	require.NoError(t, src.Encode(&buf))
	require.Contains(t, buf.String(), "point resnet50 8 50 3.78 - 2.9\n")
}

func TestParseMeasuredRejects(t *testing.T) {
	point := `{"kind": "point", "model": "m", "size": 50, "batch": 8, "p50_ms": 3}`
	tests := []struct {
		name, in, want string
	}{
		{"not JSON", "{", "line 1: malformed reference data: not a JSON object"},
		{"unknown kind", `{"kind": "curve"}`, `unknown record kind "curve"`},
		{"size not in the set", `{"kind": "point", "model": "m", "size": 70, "batch": 8, "p50_ms": 3}`, "size 70 is not one of the set's sizes"},
		{"batch too large", `{"kind": "point", "model": "m", "size": 50, "batch": 128, "p50_ms": 3}`, "batch 128 is outside 1..64"},
		{"zero latency", `{"kind": "point", "model": "m", "size": 50, "batch": 8, "p50_ms": 0}`, "is not a positive latency"},
		{"twice", point + "\n" + point, "line 2: malformed reference data: point m b=8 p=50 appears twice"},
		{"bad metric", point + "\n" + `{"kind": "util", "model": "m", "size": 50, "batch": 8, "metric": "ipc", "value": 1}`, `util metric "ipc"`},
		{"negative util", point + "\n" + `{"kind": "util", "model": "m", "size": 50, "batch": 8, "metric": "l2", "value": -1}`, "is not a percentage"},
		{"pair of an unknown model", point + "\n" + `{"kind": "pair", "model_a": "m", "size_a": 50, "batch_a": 8, "coloc_a_ms": 3, "model_b": "x", "size_b": 50, "batch_b": 8, "coloc_b_ms": 3}`, "a pair of m and x, which have no solo points"},
		{"no points", `{"kind": "meta"}`, "no point records"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseMeasured(strings.NewReader(tt.in), SetH100Measured)
			require.ErrorIs(t, err, ErrFormat)
			require.ErrorContains(t, err, tt.want)
		})
	}
	_, err := ParseMeasured(strings.NewReader(point), "tpu-v9")
	require.ErrorIs(t, err, ErrUnknownSet)
}
