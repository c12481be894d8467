package profiler

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/gpulet/gpuletd/gpulet"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpulet/gpuletd/profiler/refset"
	"github.com/stretchr/testify/require"
)

// emulatedResult profiles a stand-in model on an emulated igniter-v100.
func emulatedResult(t *testing.T) Result {
	t.Helper()
	m := testModel("resnet18")
	m.Curve = "resnet50"
	res, err := Measure(context.Background(), Job{Model: m, Device: emulatedDevice(refset.SetIgniterV100), Batches: []int{1, 8, 32}, Store: openStore(t)})
	require.NoError(t, err)
	return res
}

func TestWriteTable(t *testing.T) {
	res := emulatedResult(t)
	var b bytes.Buffer
	require.NoError(t, WriteTable(&b, res))
	out := b.String()
	for _, want := range []string{
		"resnet18 on emu0 (device type igniter-v100): emulated:igniter-v100, run 1",
		"p \\ b", "50%", "fit ℓ(b) = α·b + β", "SLO 50 ms (largest b with 2·L ≤ SLO): knee",
		"batch 32 (b / L(b,p)): knee", "solo utilisation", "igniter-v100/igniter-v100",
	} {
		require.Contains(t, out, want)
	}
	pt, _ := res.Point(50, 8)
	require.Contains(t, out, ms(pt.P50MS)+" / -", "p99 of an emulated point is unknown")

	// The JSON form has null for unknown values and the knees.
	js, err := json.Marshal(res)
	require.NoError(t, err)
	require.Contains(t, string(js), `"p99_ms":null`)
	var back map[string]any
	require.NoError(t, json.Unmarshal(js, &back))
	require.Contains(t, back, "knees")
}

func TestWritePlot(t *testing.T) {
	res := emulatedResult(t)
	dir := t.TempDir()
	svg := filepath.Join(dir, "lat.svg")
	require.NoError(t, WritePlot(res, svg))
	b, err := os.ReadFile(svg)
	require.NoError(t, err)
	require.True(t, bytes.Contains(b, []byte("<svg")))
	require.Contains(t, string(b), "knee")
	require.Contains(t, string(b), "p = 50%")

	png := filepath.Join(dir, "lat.PNG")
	require.NoError(t, WritePlot(res, png))
	b, err = os.ReadFile(png)
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(b, []byte("\x89PNG")))

	err = WritePlot(res, filepath.Join(dir, "lat.pdf"))
	require.ErrorIs(t, err, ErrPlotFormat)
	_, err = os.Stat(filepath.Join(dir, "lat.pdf"))
	require.True(t, os.IsNotExist(err), "nothing written for a format it cannot draw")
}

func TestProgressBar(t *testing.T) {
	var plain bytes.Buffer
	pb := NewProgressBar(&plain, false)
	pb.Update(Progress{Phase: "solo", Done: 0, Total: 4, Size: 50, Batch: 1, Samples: 3})
	pb.Update(Progress{Phase: "solo", Done: 1, Total: 4, Size: 50, Batch: 1, Samples: 20, Finished: true, P50MS: 1.25, Stable: true})
	pb.Update(Progress{Phase: "solo", Done: 2, Total: 4, Size: 50, Batch: 2, Samples: 9, Finished: true, P50MS: 2.5})
	pb.Close()
	require.Equal(t, "solo 1/4: p=50% b=1: p50 1.25 ms, 20 samples\nsolo 2/4: p=50% b=2: p50 2.5 ms, 9 samples (capped)\n", plain.String())

	var term bytes.Buffer
	tb := NewProgressBar(&term, true)
	tb.Update(Progress{Phase: "solo", Done: 2, Total: 4, Size: 100, Batch: 8, Samples: 7})
	tb.Close()
	require.Contains(t, term.String(), "\r\x1b[K")
	require.Contains(t, term.String(), strings.Repeat("█", 15)+strings.Repeat("·", 15))
	require.Contains(t, term.String(), "2/4 p=100% b=8, 7 samples")
	require.True(t, strings.HasSuffix(term.String(), "\n"))
}

func TestWriteKnees(t *testing.T) {
	set, err := refset.Load(refset.SetIgniterV100)
	require.NoError(t, err)
	k, err := Knees(set, []int{8, 32})
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, WriteKnees(&b, k))
	require.Contains(t, b.String(), "knees of the affordable-rate curves b / L(b,p) on igniter-v100")
	require.Equal(t, 1+1+8, strings.Count(b.String(), "\n"), "title, header, 4 models × 2 batches")
}

func TestWriteKneesKeepsColumnsWhereASizeIsMissing(t *testing.T) {
	k := SetKnees{Set: "s", Sizes: []int{20, 50, 100}, Models: []ModelKnees{{Model: "m", Batches: []BatchKnee{{Batch: 8,
		Curve: gpulet.KneeCurve{Knee: 50, Points: []gpulet.KneePoint{{Size: 20, Rate: 100}, {Size: 50, Rate: 200, Curvature: 1.5}}}}}}}}
	var b bytes.Buffer
	require.NoError(t, WriteKnees(&b, k))
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Len(t, lines, 3)
	row := strings.Fields(lines[2])
	require.Equal(t, []string{"m", "8", "50%", "100/s", "200/s", "-", "1.500"}, row, "the 100%% column shows '-'")
}

func TestWriteTableSaysTheMemoryMeasured(t *testing.T) {
	ctx := context.Background()
	f := &fakeLauncher{alpha: 2, beta: 1}
	res, err := Measure(ctx, Job{Model: testModel("lenet5"), Device: cpuDevice(), Batches: []int{1, 2}, Store: openStore(t), Launcher: f, Rule: fastRule()})
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, WriteTable(&b, res))
	out := b.String()
	require.Contains(t, out, "executor 50%: fake, 1 thread(s), cores [0], at most 150 MB resident\n")
	require.Contains(t, out, "host memory: 200 MB (an executor's peak resident memory with the model alone")
}
