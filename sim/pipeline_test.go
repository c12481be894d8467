package sim

import (
	"context"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/control"
	"github.com/gpulet/gpuletd/sim/workload"
	"github.com/stretchr/testify/require"
)

// trafficWorkload is Loki's traffic pipeline on gpus loki-1080ti GPUs at
// rate frames/s (Poisson), re-planned every 5 s.
func trafficWorkload(gpus int, rate float64, sc control.PipelineScaling, dur time.Duration) *workload.Workload {
	reorg, start := workload.Duration(5*time.Second), workload.Duration(time.Second)
	return &workload.Workload{
		Devices:    []workload.Device{{Profiles: "loki-1080ti", Count: gpus}},
		Pipelines:  []workload.Pipeline{{Builtin: "traffic-analysis", Rate: rate, Scaling: string(sc), MinAccuracy: 0.9}},
		Duration:   workload.Duration(dur),
		Seed:       7,
		Reorganize: &reorg, Startup: &start,
	}
}

// TestPipelineServesTraffic: well within what full accuracy carries, every
// request goes through the detector and its cars through the classifier,
// at full accuracy, and nearly all end by the 250 ms SLO. Every task
// request is answered once (run's recorder), and a detector request makes
// on average yolov5x's 17.8 classifier requests.
func TestPipelineServesTraffic(t *testing.T) {
	w := trafficWorkload(8, 15, control.ScaleJointly, 20*time.Second)
	res, _ := run(t, w, Options{})
	require.Len(t, res.Pipelines, 1)
	p := res.Pipelines[0]
	require.Equal(t, "traffic-analysis", p.Name)
	require.InDelta(t, 300, float64(p.Requests), 60)
	require.Equal(t, p.Requests, p.Good+p.Late+p.Dropped)
	require.GreaterOrEqual(t, p.SLOAttainment, 0.99)
	require.InDelta(t, p.FullAccuracy, p.Accuracy, 1e-9, "full accuracy: hardware scaling only")
	var det, cls uint64
	for _, m := range res.Models {
		switch m.Name {
		case "yolov5x":
			det = m.Requests
		case "efficientnet-b6":
			cls = m.Requests
		default:
			require.Zero(t, m.Requests, "%s serves nothing at full accuracy", m.Name)
		}
	}
	require.Equal(t, p.Requests, det)
	require.InEpsilon(t, 17.8, float64(cls)/float64(det), 0.1)
	require.Less(t, p.MeanWorkers, 8.0, "hardware scaling needs fewer than every GPU")

	again, err := Run(context.Background(), w, Options{})
	require.NoError(t, err)
	require.Equal(t, res.Pipelines, again.Pipelines, "the same workload repeats")
}

// TestPipelineAccuracyScaling: at about twice what full accuracy carries on
// the GPUs, gpuletd serves nearly everything at a lower accuracy, no lower
// than the floor; hardware scaling alone keeps full accuracy and drops what
// its GPUs cannot carry, early.
func TestPipelineAccuracyScaling(t *testing.T) {
	gp, _ := run(t, trafficWorkload(8, 80, control.ScaleJointly, 40*time.Second), Options{})
	hw, _ := run(t, trafficWorkload(8, 80, control.ScaleHardware, 40*time.Second), Options{})
	g, h := gp.Pipelines[0], hw.Pipelines[0]
	require.GreaterOrEqual(t, g.SLOAttainment, 0.98)
	require.Less(t, g.Accuracy, g.FullAccuracy)
	require.GreaterOrEqual(t, g.Accuracy, 0.9*g.FullAccuracy-1e-9)
	require.Less(t, h.SLOAttainment, 0.8)
	require.Greater(t, h.Dropped, 20*h.Late, "what hardware scaling cannot carry is dropped early, not served late")
	require.InDelta(t, h.FullAccuracy, h.Accuracy, 1e-9)
	require.NotEmpty(t, gp.Plans)
	require.Equal(t, "start", gp.Plans[0].Reason)
}
