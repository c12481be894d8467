package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/internal/testbin"
	"github.com/gpulet/gpuletd/modelzoo"
	"github.com/gpulet/gpuletd/sim/loadgen"
)

// pipelineScaling is what the test reads of a pipeline in the status.
type pipelineScaling struct {
	Scaling  string  `json:"scaling"`
	Planned  float64 `json:"planned_accuracy"`
	Accuracy float64 `json:"accuracy"`
	Served   int     `json:"served"`
	Mix      [][]struct {
		Model string  `json:"model"`
		Share float64 `json:"share"`
	} `json:"mix"`
}

// pipelineScalingOf reads the pipeline's scaling from the admin status.
func pipelineScalingOf(ctx context.Context, base string) (pipelineScaling, error) {
	var st struct {
		Pipelines []struct {
			Name    string          `json:"name"`
			Scaling pipelineScaling `json:"scaling"`
		} `json:"pipelines"`
	}
	if err := adminGet(ctx, plainAPI(base), "/api/v1/status", &st); err != nil {
		return pipelineScaling{}, err
	}
	for _, p := range st.Pipelines {
		if p.Name == modelzoo.PipelineName {
			return p.Scaling, nil
		}
	}
	return pipelineScaling{}, os.ErrNotExist
}

// addParameters appends config.pbtxt parameters to a model folder's
// configuration.
func addParameters(t testing.TB, dir string, kv ...string) {
	t.Helper()
	path := filepath.Join(dir, "config.pbtxt")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	s := string(b)
	for i := 0; i < len(kv); i += 2 {
		s += `parameters { key: "` + kv[i] + `" value { string_value: "` + kv[i+1] + `" } }` + "\n"
	}
	require.NoError(t, os.WriteFile(path, []byte(s), 0o644))
}

// writeScalingRepo writes the modelzoo's pipeline (SLO 2 s, accuracy floor
// 0.5) with its step models timed as a detector and a classifier (resnet50
// and vgg19 of the igniter-v100 set) and, withLite, the classifier's
// cheaper variant labeler-lite (declared accuracy 0.8) timed as alexnet.
func writeScalingRepo(t testing.TB, withLite bool) string {
	t.Helper()
	repo := filepath.Join(t.TempDir(), "models")
	require.NoError(t, modelzoo.WritePipeline(repo, 5, "2s", withLite))
	addParameters(t, filepath.Join(repo, modelzoo.DetectorModel), "profile", "resnet50")
	addParameters(t, filepath.Join(repo, modelzoo.ClassifierModel), "profile", "vgg19")
	addParameters(t, filepath.Join(repo, modelzoo.PipelineName), "min_accuracy", "0.5")
	if withLite {
		addParameters(t, filepath.Join(repo, modelzoo.LiteClassifierModel), "profile", "alexnet")
	}
	return repo
}

// startScalingDaemon serves repo on one emulated V100 whose time runs four
// times slower than the reference set's (five 20% gpu-lets), re-planning
// every 2 s, and waits until the pipeline is ready.
func startScalingDaemon(t testing.TB, repo string) (base string, logs *testbin.SyncBuffer) {
	t.Helper()
	addr, logs := startDaemon(t, daemonEnv(t, "GPULETD_MODEL_REPOSITORY="+repo, "GPULETD_DEFAULT_SLO=1s",
		"GPULETD_SCHEDULER_REORGANIZE_PERIOD=2s",
		"GPULETD_DEVICES=[{kind: emulated, profiles: igniter-v100, count: 1, time_scale: 4}]"))
	base = "http://" + addr
	url := base + "/v2/models/" + modelzoo.PipelineName
	require.Eventually(t, func() bool { return do(t, "GET", url+"/ready", nil, nil).code == 200 },
		2*time.Minute, 200*time.Millisecond, "logs:\n%s", logs)
	return base, logs
}

// TestPipelineScalesAccuracy serves the modelzoo's pipeline (real ONNX
// graphs run by ONNX Runtime on the CPU) on an emulated V100 whose time is
// four times slower than the reference set's, the step models timed as a
// detector and a classifier (resnet50 and vgg19 from the set) and the
// classifier's variant labeler-lite (declared accuracy 0.8) as alexnet. At a rate the full models cannot carry on the
// node, the plan turns to accuracy scaling: part of the objects go to
// labeler-lite, and the accuracy of the requests served comes down to the
// plan's; once the load stops, the plan goes back to the full models.
func TestPipelineScalesAccuracy(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	base, logs := startScalingDaemon(t, writeScalingRepo(t, true))
	sc, err := pipelineScalingOf(t.Context(), base)
	require.NoError(t, err)
	require.Equal(t, "hardware", sc.Scaling, "idle: the full models")

	// 40 requests/s, 160 objects/s: above what the full models carry on
	// the node's five 20% gpu-lets (about 22 requests/s at this time scale,
	// 18 with the planner's headroom).
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan struct{})
	var loadOut bytes.Buffer
	go func() {
		defer close(done)
		run(ctx, []string{"load", "--url", base, "--model", modelzoo.PipelineName, "--rate", "40", "--duration", "60s", "--json"}, &loadOut, io.Discard)
	}()
	var under pipelineScaling
	require.Eventually(t, func() bool {
		under, err = pipelineScalingOf(t.Context(), base)
		return err == nil && under.Scaling == "accuracy" && under.Served > 0 && under.Accuracy < 0.999
	}, 45*time.Second, 250*time.Millisecond, "accuracy scaling under load; last %+v; logs:\n%s", under, logs)
	// The door follows the mix: the accuracy served drops to near the
	// plan's as the requests under it outnumber those before it.
	require.Eventually(t, func() bool {
		under, err = pipelineScalingOf(t.Context(), base)
		return err == nil && under.Scaling == "accuracy" && under.Accuracy < under.Planned+0.03
	}, 30*time.Second, 250*time.Millisecond, "served accuracy near the plan's; last %+v", under)
	// Prometheus has the mode, the shares and the accuracy served.
	r := do(t, "GET", base+"/metrics", nil, nil)
	require.Equal(t, 200, r.code)
	lintMetrics(t, r.body)
	require.Contains(t, string(r.body), `gpuletd_pipeline_accuracy_scaling{pipeline="spot-and-label"} 1`)
	require.Regexp(t, `gpuletd_pipeline_variant_share_ratio\{model="labeler-lite",pipeline="spot-and-label",step="1"\} 0\.\d+`, string(r.body))
	require.Regexp(t, `gpuletd_pipeline_accuracy_ratio\{pipeline="spot-and-label"\} 0\.[89]\d*`, string(r.body))
	stop()
	<-done
	t.Logf("under load: %+v\nload:\n%s", under, loadOut.String())
	// Every request was answered within its SLO, or dropped early at a
	// step that could not meet its deadline, and said so.
	var rep struct {
		Report struct {
			OK         int64            `json:"ok"`
			WithinSLO  int64            `json:"within_slo"`
			Failed     map[string]int64 `json:"failed"`
			FirstError string           `json:"first_error"`
		} `json:"report"`
	}
	require.NoError(t, json.Unmarshal(loadOut.Bytes(), &rep), loadOut.String())
	require.Positive(t, rep.Report.OK)
	require.Equal(t, rep.Report.OK, rep.Report.WithinSLO, "every answer within the SLO")
	for code, n := range rep.Report.Failed {
		switch {
		case strings.HasPrefix(code, "503"): // with gpuletd's reason: "503 dropped_early"
			require.Contains(t, rep.Report.FirstError, "dropped at step[", "%d refused", n)
		case code == loadgen.FailCancelled: // in flight when the test stopped the load
		default:
			t.Errorf("%d requests failed with %s: %s", n, code, rep.Report.FirstError)
		}
	}
	require.Len(t, under.Mix, 2)
	require.Len(t, under.Mix[1], 2, "the classifier's step mixes its two variants: %+v", under.Mix)
	require.Equal(t, modelzoo.LiteClassifierModel, under.Mix[1][1].Model)
	require.Less(t, under.Planned, 1.0)
	require.GreaterOrEqual(t, under.Planned, 0.8, "no lower than the lite variant alone")
	require.Greater(t, under.Accuracy, 0.8-1e-9)

	// The load gone, the rate estimate decays and the full models return.
	require.Eventually(t, func() bool {
		sc, err = pipelineScalingOf(t.Context(), base)
		return err == nil && sc.Scaling == "hardware"
	}, 45*time.Second, 250*time.Millisecond, "back to hardware scaling; last %+v", sc)
	code, out, _ := runCLI(t, "status", "--url", base)
	require.Equal(t, 0, code)
	require.Regexp(t, `(?m)^`+modelzoo.PipelineName+` .* \(hardware\)`, out)
	code, out, _ = runCLI(t, "models", "list", "--url", base)
	require.Equal(t, 0, code)
	require.Regexp(t, `(?m)^`+modelzoo.PipelineName+` .* \(hardware\)`, out, "models list shows the pipelines too")
}
