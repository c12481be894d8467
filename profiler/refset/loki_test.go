package refset

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func lokiRows(models []string, batches []int) string {
	var b strings.Builder
	b.WriteString(",model,accelerator,batch_size,avg_runtime,50th_pct_runtime\n")
	i := 0
	for _, m := range models {
		for _, bs := range batches {
			b.WriteString(strings.Join([]string{strconv.Itoa(i), m, "1080ti", strconv.Itoa(bs), "0.01", "0.0" + strconv.Itoa(bs)}, ",") + "\n")
			i++
		}
	}
	return b.String()
}

func lokiModels() []string {
	return []string{"yolov5n", "yolov5s", "yolov5m", "yolov5l", "yolov5x",
		"eb0_checkpoint_150epochs", "eb1_checkpoint_150epochs", "eb2_checkpoint_150epochs", "eb3_checkpoint_150epochs",
		"eb4_checkpoint_150epochs", "eb5_checkpoint_150epochs", "eb6_checkpoint_150epochs"}
}

func TestParseLokiRuntimes(t *testing.T) {
	src, err := ParseLokiRuntimes(strings.NewReader(lokiRows(lokiModels(), lokiBatches)), SetLoki1080Ti)
	require.NoError(t, err)
	require.Len(t, src.Models, 12)
	require.Equal(t, ModelName{Name: "efficientnet-b3", Label: "efficientnet-b3"}, src.Models[8])
	require.Len(t, src.Points, 12*len(lokiBatches))
	// 50th_pct_runtime is seconds; the point is milliseconds.
	require.InDelta(t, 0.04*1000, src.Points[2].LatencyMS, 1e-9)
	require.Equal(t, 4, src.Points[2].Batch)
	require.Equal(t, 100, src.Points[2].Size)

	tests := []struct {
		name, csv, want string
	}{
		{"no median column", ",model,batch_size\n0,yolov5n,1\n", `no "50th_pct_runtime" column`},
		{"bad batch", lokiRows([]string{"yolov5n"}, []int{3}), "batch size \"3\" is not one of"},
		{"missing batches", lokiRows(lokiModels(), lokiBatches[:6]), "has 6 of the 7 batch sizes"},
		{"missing model", lokiRows(lokiModels()[:11], lokiBatches), "11 models, the profiled table has 12"},
		{"twice", lokiRows([]string{"yolov5n", "yolov5n"}, []int{1}), "given twice"},
		{"negative", ",model,batch_size,50th_pct_runtime\n0,yolov5n,1,-0.5\n", "not a positive number of seconds"},
		{"empty", "", "no header"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseLokiRuntimes(strings.NewReader(tc.csv), SetLoki1080Ti)
			require.ErrorIs(t, err, ErrFormat)
			require.ErrorContains(t, err, tc.want)
		})
	}
	_, err = ParseLokiRuntimes(strings.NewReader(""), SetIgniterV100)
	require.ErrorIs(t, err, ErrUnknownSet)
}

func TestLokiSetKeepsTheMedians(t *testing.T) {
	s := loadSet(t, SetLoki1080Ti)
	m, ok := s.Model("yolov5x")
	require.True(t, ok)
	// Loki's runtimes-1080ti.csv: yolov5x, batch 8, 50th percentile
	// 0.2704453468322754 s.
	ms, ok := m.Profile.Latency(8, 100)
	require.True(t, ok)
	require.InDelta(t, 270.4453468322754, ms, 1e-9)
	require.Equal(t, 64, m.Profile.MaxBatch(100))
	fp, known := FootprintMB("efficientnet-b6")
	require.True(t, known)
	require.Greater(t, fp, 512.0)
}
