package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/modelzoo"
)

// BenchmarkPipelineScaling measures what accuracy scaling gains the daemon
// (docs/BENCHMARKS.md): the pipeline of TestPipelineScalesAccuracy on one
// emulated V100 at 15, 40 and 60 requests/s (Poisson; 10 s warm-up, 30 s
// measured with gpuletd load), with the classifier's cheaper variant in the
// repository and without it (hardware scaling alone). It reports goodput
// (answers within the 2 s SLO per second), SLO attainment and the accuracy
// of the requests served.
//
//	go test ./cmd/gpuletd -run '^$' -bench PipelineScaling -benchtime 1x -timeout 30m
func BenchmarkPipelineScaling(b *testing.B) {
	for _, rate := range []int{100, 160} {
		b.Run(fmt.Sprintf("neighbour=%d", rate), func(b *testing.B) { benchPipelineBesideModel(b, rate) })
	}
	for _, lite := range []bool{false, true} {
		for _, rate := range []int{15, 40, 60} {
			name := fmt.Sprintf("variants=%v/rate=%d", lite, rate)
			b.Run(name, func(b *testing.B) {
				for range b.N {
					base, _ := startScalingDaemon(b, writeScalingRepo(b, lite))
					var out bytes.Buffer
					code := run(b.Context(), []string{"load", "--url", base, "--model", modelzoo.PipelineName,
						"--rate", fmt.Sprint(rate), "--warmup", "10s", "--duration", "30s", "--json"}, &out, &out)
					require.Equal(b, 0, code, out.String())
					var rep struct {
						Report struct {
							Goodput    float64 `json:"goodput"`
							Attainment float64 `json:"slo_attainment"`
						} `json:"report"`
					}
					require.NoError(b, json.Unmarshal(out.Bytes(), &rep), out.String())
					sc, err := pipelineScalingOf(b.Context(), base)
					require.NoError(b, err)
					b.ReportMetric(rep.Report.Goodput, "goodput/s")
					b.ReportMetric(rep.Report.Attainment, "attainment")
					b.ReportMetric(sc.Accuracy, "accuracy")
					b.Logf("%s: scaling %s, planned accuracy %.3f, mix %+v", name, sc.Scaling, sc.Planned, sc.Mix)
				}
			})
		}
	}
}

// benchPipelineBesideModel is the pipeline at 40 requests/s, with its
// cheaper variant, beside a model of its own (modelzoo's mlp timed as
// resnet50) sent rate requests/s: the gpu-lets that model takes are not the
// pipeline's, though its planner counts the node as its own. It reports
// both loads' goodput and attainment.
//
//	go test ./cmd/gpuletd -run '^$' -bench PipelineScaling/neighbour -benchtime 1x
func benchPipelineBesideModel(b *testing.B, rate int) {
	for range b.N {
		repo := writeScalingRepo(b, true)
		require.NoError(b, modelzoo.WriteRepository(repo, []string{"mlp"}, 7, modelzoo.AsTriton(), modelzoo.WithOverwrite()))
		addParameters(b, filepath.Join(repo, "mlp"), "profile", "resnet50")
		base, _ := startScalingDaemon(b, repo)
		var out bytes.Buffer
		code := run(b.Context(), []string{"load", "--url", base, "--model", fmt.Sprintf("%s=40,mlp=%d", modelzoo.PipelineName, rate),
			"--warmup", "10s", "--duration", "30s", "--json"}, &out, &out)
		require.Equal(b, 0, code, out.String())
		var rep struct {
			Reports []struct {
				Model      string           `json:"model"`
				Goodput    float64          `json:"goodput"`
				Attainment float64          `json:"slo_attainment"`
				Failed     map[string]int64 `json:"failed"`
				FirstError string           `json:"first_error"`
			} `json:"reports"`
		}
		require.NoError(b, json.Unmarshal(out.Bytes(), &rep), out.String())
		for _, r := range rep.Reports {
			b.ReportMetric(r.Goodput, r.Model+"-goodput/s")
			b.ReportMetric(r.Attainment, r.Model+"-attainment")
			if len(r.Failed) > 0 {
				b.Logf("neighbour=%d: %s failed %v, first: %s", rate, r.Model, r.Failed, r.FirstError)
			}
		}
		sc, err := pipelineScalingOf(b.Context(), base)
		require.NoError(b, err)
		b.ReportMetric(sc.Accuracy, "accuracy")
		b.Logf("neighbour=%d: scaling %s, planned accuracy %.3f, mix %+v", rate, sc.Scaling, sc.Planned, sc.Mix)
	}
}
