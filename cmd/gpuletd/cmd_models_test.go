package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/daemon"
	"github.com/gpulet/gpuletd/kserve"
	"github.com/stretchr/testify/require"
)

func TestWriteModels(t *testing.T) {
	var s adminStatus
	readFixture(t, "status.json", &s)
	var b strings.Builder
	require.NoError(t, writeModels(&b, s.Models))
	out := b.String()
	require.LessOrEqual(t, widest(out), 80, out)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 4, out)
	require.Equal(t, strings.Fields("MODEL SLO FROM RATE ASSIGNED ATTAIN P50 P99 PLACED ON"), strings.Fields(lines[0]))
	require.Equal(t, strings.Fields("lenet5 5.00ms yaml 0.00/s 160/s 0.8% 2.44ms 36.2ms emu0-100-1"), strings.Fields(lines[1]))
	require.Equal(t, strings.Fields("mlp 5.00ms default 0.00/s 72.0/s 12.4% 2.39ms 488ms emu0-100-1"), strings.Fields(lines[2]))
	require.Equal(t, "mlp: configuration: dynamic_batching ignored: gpuletd forms batches itself", lines[3])

	// A note shared by many models is one line.
	b.Reset()
	var many []adminModel
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		many = append(many, adminModel{Name: name, SLOMS: 20, Ready: true, ConfigNotes: []string{"instance_group ignored", "only " + name}})
	}
	require.NoError(t, writeModels(&b, many))
	lines = strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Equal(t, []string{"a, b, c and 2 more: configuration: instance_group ignored", "a: configuration: only a"}, lines[6:8])
	require.Len(t, lines, 12)
	b.Reset()
	require.NoError(t, writeModels(&b, many[:4]))
	require.Contains(t, b.String(), "\na, b, c, d: configuration: instance_group ignored\n")

	b.Reset()
	require.NoError(t, writeModels(&b, []adminModel{{Name: "idle", SLOMS: 20}}))
	require.Equal(t, strings.Fields("idle 20.0ms - 0.00/s 0.00/s - - - -"), strings.Fields(strings.Split(b.String(), "\n")[1]), "no requests yet: dashes")

	// A model placed but not ready says so once, as its reason, not again
	// as a warning; one not placed is not served.
	b.Reset()
	refused := "every request is refused: input \"x\" alone takes 4096 bytes"
	require.NoError(t, writeModels(&b, []adminModel{
		{Name: "big", SLOMS: 20, Placed: []string{"gpu0-100-1"}, Reason: refused, Warnings: []string{refused, "another"}},
		{Name: "lost", SLOMS: 20, Reason: "the profile failed"}}))
	lines = strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Equal(t, []string{"big: not ready: " + refused, "big: warning: another", "lost: not served: the profile failed"}, lines[3:], b.String())
}

func TestWriteModelShow(t *testing.T) {
	var d adminModelShow
	readFixture(t, "model-lenet5.json", &d)
	var p adminProfiles
	readFixture(t, "profile-lenet5.json", &p)
	var b strings.Builder
	require.NoError(t, writeModelShow(&b, &d, &p))
	out := b.String()
	require.LessOrEqual(t, widest(out), 80, out)
	for _, want := range []string{
		"model        lenet5 (version 1)",
		"sha256       " + d.SHA256,
		"size         242.3 KiB",
		"emulated as  alexnet",
		"slo          5.00ms (from config.pbtxt parameters)",
		"config       config.pbtxt",
		"note         instance_group ignored: gpuletd's planner decides",
		"max batch    32",
		"max queue    4096 requests in each gpu-let",
		"placed on    emu0-100-1",
		"rate         0.00/s measured, 160/s assigned",
		"input   input   FP32      [-1 1 28 28]",
		"output  output  FP32      [-1 10]",
		"igniter-v100  3       50%",
	} {
		require.Contains(t, out, want)
	}
	require.Contains(t, out, "recent       1193 requests, 0.8% within the SLO, mean batch 1.0")
	require.NotContains(t, out, "warning")
	require.NotContains(t, out, "external data")

	require.NotContains(t, out, "sequences")
	require.NotContains(t, out, "batches", "no statistics read: no row")

	// The batches by size, from the statistics (Triton's batch_stats).
	d.batches = []kserve.BatchStatistics{{BatchSize: 1, ComputeInfer: kserve.StatDuration{Count: 120, NS: 120 * 800_000}},
		{BatchSize: 4, ComputeInfer: kserve.StatDuration{Count: 30, NS: 30 * 2_100_000}}, {BatchSize: 8}}
	b.Reset()
	require.NoError(t, writeModelShow(&b, &d, &p))
	require.Contains(t, b.String(), "\nbatches      1 row ×120 (800µs), 4 rows ×30 (2.10ms) since loaded\n")
	d.batches = nil

	// A stateful model says what its sequences are.
	d.Model.Sequences = &adminSeqs{Live: 3, IdleMS: 5000, Max: 4096, Controls: []string{"START (start)", "CORRID (correlation ID)"}, States: []string{"ACC from ACC_NEXT"}}
	b.Reset()
	require.NoError(t, writeModelShow(&b, &d, &p))
	require.Contains(t, b.String(), "\nsequences    3 live of at most 4096, each ended after 5s idle; gpuletd fills\n"+
		"             START (start), CORRID (correlation ID); carries ACC from ACC_NEXT\n")
	d.Model.Sequences = nil

	// Weights kept beside the model file are named.
	d.ExternalData = []string{"model.onnx.data"}
	b.Reset()
	require.NoError(t, writeModelShow(&b, &d, &p))
	require.Contains(t, b.String(), "\nexternal data  model.onnx.data (weights kept beside the file)\n")
	d.ExternalData = nil

	// A warning is wrapped to stay within 80 columns.
	d.Model.Warnings = []string{"REST and gRPC requests are refused as too large: a request of one row carries 3136 bytes of tensor data, above limits.max_request_body (2048 bytes); raise the limit, or send the inputs through shared memory"}
	b.Reset()
	require.NoError(t, writeModelShow(&b, &d, &p))
	require.Contains(t, b.String(), "\nwarning      REST and gRPC requests are refused as too large: a request of one\n"+
		"             row carries 3136 bytes of tensor data, above\n")
	require.LessOrEqual(t, widest(b.String()), 80, b.String())
	d.Model.Warnings = nil

	b.Reset()
	d.Profile = "" // a node without emulated GPUs
	require.NoError(t, writeModelShow(&b, &d, &p))
	require.NotContains(t, b.String(), "emulated as")
	require.Contains(t, out, "latency      p50 2.44ms, p99 36.2ms")

	require.NotContains(t, out, "completes the profile")
	require.NotContains(t, out, "cache", "the model does not enable the response cache")
	for _, tc := range []struct {
		cache adminCache
		want  string
	}{
		{adminCache{Hits: 3, Misses: 1}, `\ncache +3 hits, 1 misses \(response cache\)\n`},
		{adminCache{Hits: 5000, Misses: 4, Rate: 1250}, `\ncache +5000 hits, 4 misses, 1250/s now \(response cache\)\n`},
		{adminCache{Off: "the node keeps none (response_cache.size 0)"}, `\ncache +enabled, but off: the node keeps none \(response_cache.size 0\)\n`},
	} {
		d.Model.Cache = &tc.cache
		b.Reset()
		require.NoError(t, writeModelShow(&b, &d, &p))
		require.Regexp(t, tc.want, b.String())
		require.LessOrEqual(t, widest(b.String()), 80, b.String())
	}
	d.Model.Cache = nil

	var cut adminProfiles
	require.NoError(t, json.Unmarshal([]byte(`{"profiles": [{"device_type": "cpu", "points": [{}], "knee_size": 50,
		"unfinished": {"status": "incomplete", "message": "interrupted: 6 of 8 points measured", "fix": "gpuletd profile lenet5 --device cpu"}}]}`), &cut))
	b.Reset()
	require.NoError(t, writeModelShow(&b, &d, &cut))
	require.Contains(t, b.String(), "cpu: the last profile run is incomplete (interrupted: 6 of 8 points measured); `gpuletd profile lenet5 --device cpu` completes the profile")
	require.NotContains(t, b.String(), "placed with the profile of")

	cut = adminProfiles{}
	require.NoError(t, json.Unmarshal([]byte(`{"profiles": [{"device_type": "cpu", "points": [{}], "knee_size": 50,
		"borrowed": {"from_sha256": "0123456789abcdef0123", "fix": "gpuletd profile lenet5 --device cpu"}}]}`), &cut))
	b.Reset()
	require.NoError(t, writeModelShow(&b, &d, &cut))
	require.Contains(t, b.String(), "cpu: placed with the profile of the file this one replaced (sha256 0123456789ab) until `gpuletd profile lenet5 --device cpu` measures its own")
	require.NotContains(t, b.String(), "inputs measured at")

	cut = adminProfiles{}
	require.NoError(t, json.Unmarshal([]byte(`{"profiles": [{"device_type": "cpu", "points": [{}], "inputs_at": "input_ids:128"}]}`), &cut))
	b.Reset()
	require.NoError(t, writeModelShow(&b, &d, &cut))
	require.Contains(t, b.String(), "cpu: inputs measured at input_ids:128 (profile_shapes)")

	b.Reset()
	require.NoError(t, writeModelShow(&b, &d, &adminProfiles{Error: "no gpuletd answers"}))
	require.Contains(t, b.String(), "profiles: unknown (no gpuletd answers)")
}

// A pipeline shows its steps, SLO, why it is not ready, the accuracy it
// serves at with its variants, its configuration's notes and its tensors,
// within 80 columns.
func TestWritePipelineShow(t *testing.T) {
	var d adminModelShow
	require.NoError(t, json.Unmarshal([]byte(`{"pipeline": {"name": "traffic", "slo_ms": 250, "steps": ["det", "cls"], "places": ["step[1]", "step[0]"], "fanout": "objects",
  "ready": false, "reason": "step[1] (cls) is not served: no gpu-let", "rate": 120,
  "recent": {"requests": 10, "slo_attainment": 0.9, "p50_ms": 40, "p99_ms": 90},
  "scaling": {"scaling": "accuracy", "accuracy": 0.905, "served": 10,
   "mix": [[{"model": "det", "share": 1}], [{"model": "cls", "share": 0.6}, {"model": "cls-lite", "share": 0.4}]]},
  "response_cache": {"hits": 7, "misses": 3},
  "config_notes": ["ensemble_scheduling.step[0] runs the pipeline find: its step runs in its place"],
  "warnings": ["every request is refused: input \"image\" alone takes 4096 bytes in a request of one row, above limits.max_request_body (2048 bytes), which bounds a request body, a gRPC message and an input read from shared memory; raise the limit"]},
 "inputs": [{"name": "image", "datatype": "FP32", "shape": [1, 64]}],
 "outputs": [{"name": "labels", "datatype": "FP32", "shape": [1, -1, 10]}]}`), &d))
	var b strings.Builder
	require.NoError(t, writePipelineShow(&b, &d))
	out := b.String()
	for _, want := range []string{
		"pipeline  traffic\n",
		"steps     det -> cls (fan-out: objects)\n",
		"slo       250ms\n",
		"ready     no: step[1] (cls) is not served: no gpu-let\n",
		"rate      120/s\n",
		"accuracy  90.5% (accuracy)\n",
		"variants  step[0]: cls 60% + cls-lite 40%\n", // its place as written
		"recent    10 requests, 90.0% within the SLO\n",
		"cache     7 hits, 3 misses (response cache)\n",
		"warning   every request is refused: input \"image\" alone takes 4096 bytes in\n",
		"note      ensemble_scheduling.step[0] runs the pipeline find: its step runs\n",
		"input   image   FP32      [1 64]\n",
		"output  labels  FP32      [1 -1 10]\n",
	} {
		require.Contains(t, out, want)
	}
	require.LessOrEqual(t, widest(out), 80, out)
	// A daemon that gives no places: the place in the run order.
	d.Pipeline.Places = nil
	require.Equal(t, "step[1]: cls 60% + cls-lite 40%", d.Pipeline.mixText())
}

// models show ends with the model's newest events: only its own (a daemon
// from before the events filter lists others too), none, or why they
// could not be read.
func TestWriteRecentEvents(t *testing.T) {
	at := time.Date(2026, 11, 28, 11, 5, 37, 0, time.UTC)
	evs := []daemon.EventDoc{
		{ID: 7, At: at, Kind: "executor_restart", Severity: "warning", Message: "executor exited; restarting it", Attrs: map[string]string{"gpulet": "g1", "models": "lenet5,mlp"}},
		{ID: 8, At: at, Kind: "model_load", Severity: "info", Message: "loaded", Attrs: map[string]string{"model": "vgg19"}},
		{ID: 9, At: at, Kind: "model_load", Severity: "info", Message: "loaded", Attrs: map[string]string{"model": "lenet5"}},
	}
	tests := []struct {
		name string
		evs  []daemon.EventDoc
		err  error
		want string
	}{
		{"its own", evs, nil, "\nEVENTS (the newest; all: gpuletd events --model lenet5)\n" +
			"2026-11-28 11:05:37 #7 warning executor_restart: executor exited; restarting it (gpulet=g1 models=lenet5,mlp)\n" +
			"2026-11-28 11:05:37 #9 info model_load: loaded (model=lenet5)\n"},
		{"none", evs[1:2], nil, "\nEVENTS (the newest; all: gpuletd events --model lenet5)\n(none recorded)\n"},
		{"unread", nil, errors.New("no gpuletd answers"), "\nevents: unknown (no gpuletd answers)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			require.NoError(t, writeRecentEvents(&b, "lenet5", tt.evs, tt.err, time.UTC))
			require.Equal(t, tt.want, b.String())
		})
	}
}

// models show says how many requests a model had since the daemon started
// and when the last ended: whether anyone uses it.
func TestModelRequestsText(t *testing.T) {
	now := time.Date(2026, 12, 2, 6, 0, 0, 0, time.Local)
	last := now.Add(-8*time.Minute - 10*time.Second)
	yesterday := last.Add(-24 * time.Hour)
	answered, none := int64(11248), int64(0)
	for _, tc := range []struct {
		m    adminModel
		want string
	}{
		{adminModel{Answered: &answered, Failed: 578, LastRequest: &last}, "11248 answered, 578 failed since the start; the last 8m ago, at 05:51:50"},
		{adminModel{Answered: &answered, LastRequest: &last}, "11248 answered since the start; the last 8m ago, at 05:51:50"},
		{adminModel{Answered: &answered, LastRequest: &yesterday}, "11248 answered since the start; the last 1d0h ago, at 2026-12-01 05:51:50"},
		{adminModel{Answered: &none}, "none since the start"},
		{adminModel{}, ""},
	} {
		require.Equal(t, tc.want, tc.m.requestsText(now))
	}
}

// A load's answer says what the load changed under the ready line, and
// each model the plan made with it no longer serves is a warning line.
func TestWriteLoadAnswer(t *testing.T) {
	var out, errw strings.Builder
	writeLoadAnswer(&out, &errw, "a", []byte(`{"name": "a", "state": "READY", "displaced": {"vgg": "no room", "b": "no gpu-let can take it"},
		"changes": ["version 1: SLO 50ms → 20ms (config.yaml)", "version 1: input \"input\": FP32 [1,28,28] → FP32 [3,28,28]"]}`))
	require.Equal(t, "a: ready\n  version 1: SLO 50ms → 20ms (config.yaml)\n  version 1: input \"input\": FP32 [1,28,28] → FP32 [3,28,28]\n", out.String())
	require.Equal(t, "gpuletd: warning: the plan made with a no longer serves b: no gpu-let can take it\n"+
		"gpuletd: warning: the plan made with a no longer serves vgg: no room\n", errw.String())
	out.Reset()
	errw.Reset()
	writeLoadAnswer(&out, &errw, "a", []byte(`{"name": "a", "state": "READY"}`))
	require.Equal(t, "a: ready\n", out.String())
	require.Empty(t, errw.String())
}
