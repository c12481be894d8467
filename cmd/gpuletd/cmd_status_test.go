package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// widest is the widest line of s in runes.
func widest(s string) int {
	w := 0
	for _, l := range strings.Split(s, "\n") {
		w = max(w, utf8.RuneCountInString(l))
	}
	return w
}

func readFixture(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, v))
}

func TestWriteStatus(t *testing.T) {
	var s adminStatus
	readFixture(t, "status.json", &s)
	s.Models[1].Unscheduled = 12.5
	s.Models[0].Warnings = []string{"refused, ℓ(1) > SLO on gpu0-20-1: 6.53ms > 5ms (overhead 6.2ms)"}
	s.Models[0].Cache = &adminCache{Hits: 90000, Misses: 12, Rate: 5355}
	s.Gpulets[0].Models[1].BatchTimeFactor, s.Gpulets[0].Models[1].SlowBatches = 2.64, true
	s.Gpulets[0].Models[0].BatchTimeFactor = 1.04 // jitter: not worth a line
	grpcAddr := "127.0.0.1:18712"
	s.GRPCListen = &grpcAddr
	var b strings.Builder
	require.NoError(t, writeStatus(&b, "http://127.0.0.1:18711", &s))
	out := b.String()
	require.LessOrEqual(t, widest(out), 80, out)
	for _, want := range []string{
		"gpuletd dev at http://127.0.0.1:18711: ready\ngRPC on 127.0.0.1:18712 (inference.GRPCInferenceService, grpc.health.v1.Health)\n",
		"policy deferred, placement gpulet-int, 1 reorganization, 0 executor restarts",
		"(rate of mlp surged)",
		"emu1    emulated  igniter-v100  mps      ok      0/16GiB  Emulated igniter-v100",
		"GPU-LET     SIZE  STATE  BUSY  MEMORY    MODEL   BATCH  PLANNED  MEAN BATCH\n",
		"emu0-100-1  100%  ready  0.8%  76.8 MiB  lenet5  1      160/s    1.0\n",
		"                                        mlp     1      72.0/s   1.1\n",
		"\nmlp on emu0-100-1: 3 requests of 68 failed there since its executor started\n  (dropped",
		"\nmlp on emu0-100-1: its batches ran up to 2.6× their profiled time lately, and\n  its executor plans with that: smaller batches, requests refused sooner (a busy\n",
		"lenet5  5.00ms  yaml     0.00/s  160/s     0.8%    2.44ms  36.2ms  emu0-100-1",
		"mlp     5.00ms  default  0.00/s  72.0/s    12.4%   2.39ms  488ms   emu0-100-1",
		"mlp: 12.5/s of its load has no gpu-let",
		"lenet5: warning: refused, ℓ(1) > SLO on gpu0-20-1: 6.53ms > 5ms (overhead 6.2ms)",
		"lenet5: 5355/s more answered by the response cache, outside RATE",
		"mlp: configuration: dynamic_batching ignored: gpuletd forms batches itself",
	} {
		require.Contains(t, out, want)
	}
	require.NotContains(t, out, "lenet5 on emu0-100-1: its batches", "a factor of the jitter the scheduler is built for")
	// Columns line up: every gpu-let row starts its model at the MODEL column.
	lines := strings.Split(out, "\n")
	var head, row string
	for _, l := range lines {
		if strings.HasPrefix(l, "GPU-LET") {
			head = l
		}
		if strings.HasPrefix(l, "emu0-100-1") {
			row = l
		}
	}
	require.Equal(t, strings.Index(head, "MODEL"), strings.Index(row, "lenet5"))

	// On a GPU the column gives the GPU memory its executor holds; without
	// a process, a dash.
	s.Gpulets[0].Memory.DeviceBytes = 3661 << 20
	b.Reset()
	require.NoError(t, writeStatus(&b, "http://127.0.0.1:18711", &s))
	require.Contains(t, b.String(), "emu0-100-1  100%  ready  0.8%  3.6 GiB GPU  lenet5")
	require.LessOrEqual(t, widest(b.String()), 80, b.String())
	s.Gpulets[0].Memory = nil
	b.Reset()
	require.NoError(t, writeStatus(&b, "http://127.0.0.1:18711", &s))
	require.Contains(t, b.String(), "emu0-100-1  100%  ready  0.8%  -       lenet5")
	require.NotContains(t, b.String(), "metrics also", "no metrics listener of its own")

	// An NVIDIA GPU says how much of its memory is in use.
	emulated := s.Devices
	s.Devices = []adminDevice{{ID: "gpu0", Kind: "nvidia", Type: "h100-80gb-hbm3", Backend: "mps", Health: "ok", Name: "NVIDIA H100 80GB HBM3",
		MemoryTotal: 80 << 30, MemoryFree: 68 << 30}}
	b.Reset()
	require.NoError(t, writeStatus(&b, "http://127.0.0.1:18711", &s))
	require.Contains(t, b.String(), "gpu0    nvidia  h100-80gb-hbm3  mps      ok      12/80GiB  NVIDIA H100 80GB HBM3\n")
	require.LessOrEqual(t, widest(b.String()), 80, b.String())
	require.NotContains(t, b.String(), "gpu0 ok", "a healthy device has nothing to say")
	require.NotContains(t, b.String(), "gpu0:", "nor one whose driver reports no load")
	// What the driver reports of its load, under the table.
	require.NoError(t, json.Unmarshal([]byte(`{"utilization":{"gpu":43},"power":{"watts":312.4,"limit_watts":700}}`), &s.Devices[0]))
	b.Reset()
	require.NoError(t, writeStatus(&b, "http://127.0.0.1:18711", &s))
	require.Contains(t, b.String(), "NVIDIA H100 80GB HBM3\ngpu0: 43% utilized, drawing 312 W of 700 W\n")
	s.Devices[0].Utilization, s.Devices[0].Power.LimitWatts = nil, 0
	b.Reset()
	require.NoError(t, writeStatus(&b, "http://127.0.0.1:18711", &s))
	require.Contains(t, b.String(), "\ngpu0: drawing 312 W\n", "a GPU with no limit to tell")
	s.Devices[0].Power = nil
	// A failed one says why under the table.
	s.Devices[0].Health = "failed"
	s.Devices[0].HealthDetail = "the GPU is lost, fallen off the bus (get memory info: NVML error: ERROR_GPU_IS_LOST; the kernel log says which Xid): " +
		"nothing more runs on it until it is reset (nvidia-smi -r) or the host rebooted"
	b.Reset()
	require.NoError(t, writeStatus(&b, "http://127.0.0.1:18711", &s))
	require.Contains(t, b.String(), "NVIDIA H100 80GB HBM3\ngpu0 failed: the GPU is lost, fallen off the bus (get memory info: NVML error:\n  ERROR_GPU_IS_LOST;")
	require.LessOrEqual(t, widest(b.String()), 80, b.String())
	s.Devices = emulated

	s.MetricsListen = "0.0.0.0:8702"
	b.Reset()
	require.NoError(t, writeStatus(&b, "http://127.0.0.1:18711", &s))
	require.Contains(t, b.String(), "(inference.GRPCInferenceService, grpc.health.v1.Health)\nmetrics also on 0.0.0.0:8702 (/metrics alone)\npolicy deferred")
	s.ModelConfigName = "h100"
	b.Reset()
	require.NoError(t, writeStatus(&b, "http://127.0.0.1:18711", &s))
	require.Contains(t, b.String(), "(/metrics alone)\nmodel configurations: configs/h100.pbtxt where a folder has one (model_config_name)\npolicy deferred")
}

// The memory lines fit 80 columns however long the cgroup path: a container's
// 32-hex-digit one, or the note under a limit the node is near.
func TestWriteStatusWrapsMemoryLines(t *testing.T) {
	var s adminStatus
	readFixture(t, "status.json", &s)
	s.Memory = &adminCgroupMemory{Cgroup: "/process_api/ae2eeaaf2fe61388f8d5ca3c853d7a14", WorkingSet: 781134233}
	var b strings.Builder
	require.NoError(t, writeStatus(&b, "http://127.0.0.1:18711", &s))
	require.Contains(t, b.String(), "\nmemory: 744.9 MiB, no limit,\n  cgroup /process_api/ae2eeaaf2fe61388f8d5ca3c853d7a14\n")
	require.LessOrEqual(t, widest(b.String()), 80, b.String())

	s.Memory = &adminCgroupMemory{Cgroup: "/system.slice/gpuletd.service", WorkingSet: 3900000000, Limit: 4 << 30, LimitOf: "/system.slice", OOMKills: 2, NearLimit: true}
	s.CPUMemory = &adminCPUMemory{Models: 4<<30 - 70<<20, Placed: 1610612736,
		From: "gpuletd's memory limit of 4 GiB (cgroup /system.slice/gpuletd.service; MemoryMax= in a systemd unit) less the daemon's peak of 70 MiB"}
	b.Reset()
	require.NoError(t, writeStatus(&b, "http://127.0.0.1:18711", &s))
	require.Contains(t, b.String(), "\n  near the limit: at it the kernel kills an executor; raise MemoryMax= of\n    /system.slice (systemctl edit gpuletd) or place fewer models\n")
	require.Contains(t, b.String(), "\nmodels on the CPU: 1.5 GiB placed of the 3.9 GiB they may hold (gpuletd's memory\n  limit of 4 GiB")
	require.LessOrEqual(t, widest(b.String()), 80, b.String())

	// A path wider than the line has one of its own, even past 80 columns.
	long := "/user.slice/user-1000.slice/user@1000.service/app.slice/app-gnome-org.gnome.Terminal-4242.scope"
	s.Memory = &adminCgroupMemory{Cgroup: long, WorkingSet: 1 << 30}
	s.CPUMemory = nil
	b.Reset()
	require.NoError(t, writeStatus(&b, "http://127.0.0.1:18711", &s))
	require.Contains(t, b.String(), "\nmemory: 1 GiB, no limit,\n  cgroup\n    "+long+"\n")
}

// While the start profiles, status says which job runs, before what the
// server waits for.
func TestWriteStatusSaysWhatIsProfiled(t *testing.T) {
	var s adminStatus
	readFixture(t, "status.json", &s)
	s.Ready = false
	s.WaitingFor = []string{"lenet5", "mlp"}
	since := time.Date(2026, 11, 28, 9, 48, 26, 0, time.Local)
	s.Profiling = &adminProfiling{Model: "mlp", Device: "cpu", Since: since, Profile: 3, Of: 4}
	var b strings.Builder
	require.NoError(t, writeStatus(&b, "http://127.0.0.1:18711", &s))
	require.Contains(t, b.String(), "\nprofiling mlp on cpu since 09:48:26 (profile 3 of 4)\nwaiting for: lenet5, mlp\n")

	// A profile beside the serving gpu-lets (a model loaded live, or left
	// by a first start past its budget) says so, and how many follow.
	s.Ready, s.WaitingFor = true, nil
	s.Profiling = &adminProfiling{Model: "vgg", Device: "cpu", Since: since, Beside: true, Queued: 2}
	b.Reset()
	require.NoError(t, writeStatus(&b, "http://127.0.0.1:18711", &s))
	require.Contains(t, b.String(), "\nprofiling vgg on cpu beside the serving gpu-lets since 09:48:26 (2 more to profile)\n")
	s.Profiling.Queued = 0
	b.Reset()
	require.NoError(t, writeStatus(&b, "http://127.0.0.1:18711", &s))
	require.Contains(t, b.String(), "\nprofiling vgg on cpu beside the serving gpu-lets since 09:48:26\n")

	// So does a gpuletd profile run beside the daemon.
	s.Profiling = nil
	s.ProfiledBeside = []adminBeside{{By: "gpuletd profile (pid 4242)", Models: []string{"resnet18"}, DeviceType: "cpu", Since: since},
		{By: "gpuletd profile (pid 4243)", Models: []string{}, SHA256: strings.Repeat("ab", 32), DeviceType: "cpu", Since: since}}
	b.Reset()
	require.NoError(t, writeStatus(&b, "http://127.0.0.1:18711", &s))
	require.Contains(t, b.String(), "\ngpuletd profile (pid 4242) measures resnet18 on cpu beside the serving gpu-lets since 09:48:26\n")
	require.Contains(t, b.String(), "\ngpuletd profile (pid 4243) measures a model file it does not serve (sha256 abababababab…) on cpu")
}

func TestWriteStatusCountsRestarts(t *testing.T) {
	for _, tt := range []struct {
		restarts int
		want     string
	}{{1, "ready (1 restart)"}, {3, "ready (3 restarts)"}} {
		var s adminStatus
		readFixture(t, "status.json", &s)
		s.Gpulets[0].Restarts = tt.restarts
		var b strings.Builder
		require.NoError(t, writeStatus(&b, "http://127.0.0.1:18711", &s))
		require.Contains(t, b.String(), "emu0-100-1  100%  "+tt.want+"  ")
	}
}

// A plan made for an idle node says so under its date: its rates are room.
func TestWriteStatusSaysAnIdleNodeIsSpread(t *testing.T) {
	for _, spread := range []bool{false, true} {
		var s adminStatus
		readFixture(t, "status.json", &s)
		s.Plan = &adminPlan{Spread: spread}
		var b strings.Builder
		require.NoError(t, writeStatus(&b, "http://127.0.0.1:18711", &s))
		require.Equal(t, spread, strings.Contains(b.String(), ")\nplanned for no traffic: each model has an equal share of the GPUs' time"), b.String())
	}
}

// A gpu-let whose dead executor waits to be started again says when.
func TestWriteStatusSaysWhenARestartIsTried(t *testing.T) {
	var s adminStatus
	readFixture(t, "status.json", &s)
	at := time.Date(2026, 12, 2, 12, 45, 10, 0, time.Local)
	s.Gpulets[0].State, s.Gpulets[0].Restarts, s.Gpulets[0].NextTry = "restarting", 2, &at
	var b strings.Builder
	require.NoError(t, writeStatus(&b, "http://127.0.0.1:18711", &s))
	require.Contains(t, b.String(), "emu0-100-1  100%  restarting (2 restarts)  ")
	require.Contains(t, b.String(), "\nemu0-100-1: its executor died; tried again at 12:45:10 (gpuletd events --kind executor_restart says why)\n")
}

// A gpu-let whose executor went silent says since when, and where its
// requests go meanwhile.
func TestWriteStatusSaysAGpuletIsStalled(t *testing.T) {
	var s adminStatus
	readFixture(t, "status.json", &s)
	at := time.Date(2026, 12, 6, 0, 27, 23, 77e6, time.Local)
	s.Gpulets[0].State, s.Gpulets[0].Stalled = "stalled", &at
	var b strings.Builder
	require.NoError(t, writeStatus(&b, "http://127.0.0.1:18711", &s))
	require.Contains(t, b.String(), "emu0-100-1  100%  stalled  ")
	require.Contains(t, b.String(), "\nemu0-100-1: its executor has sent nothing since 00:27:23.077, with requests\n  waiting (stopped, starved or stuck): its models' requests go to their other\n  gpu-lets, and its health checks restart it if it stays silent\n")
}

// A node that keeps a response cache says how full it is; one that keeps
// none says nothing of it.
func TestWriteStatusResponseCache(t *testing.T) {
	var s adminStatus
	readFixture(t, "status.json", &s)
	var b strings.Builder
	require.NoError(t, writeStatus(&b, "http://127.0.0.1:18711", &s))
	require.NotContains(t, b.String(), "response cache")
	s.Cache = &adminCacheUse{Budget: 64 << 20, Bytes: 318318, Entries: 1001}
	b.Reset()
	require.NoError(t, writeStatus(&b, "http://127.0.0.1:18711", &s))
	require.Contains(t, b.String(), "response cache: 310.9 KiB of 64MiB, 1001 answers\n")
}

// The engine line names the provider that serves; when it is not the
// configured one, the status says which was asked for, why and the fix.
func TestWriteStatusProviderFallback(t *testing.T) {
	s := adminStatus{Version: "v1", Engine: adminEngine{GPUs: 1, UsingGPUs: true, Provider: "tensorrt"}}
	var b strings.Builder
	require.NoError(t, writeStatus(&b, "http://x", &s))
	require.Contains(t, b.String(), "1 NVIDIA GPU(s), execution provider tensorrt\n")
	require.NotContains(t, b.String(), "as configured")
	s.Engine = adminEngine{GPUs: 1, UsingGPUs: true, Provider: "cuda", Asked: "tensorrt",
		ProviderNote: "TensorRT cannot be used: libnvinfer.so.10 not found", ProviderFix: "install TensorRT 10"}
	b.Reset()
	require.NoError(t, writeStatus(&b, "http://x", &s))
	require.Contains(t, b.String(), "1 NVIDIA GPU(s), execution provider cuda\n"+
		"  not tensorrt as configured: TensorRT cannot be used: libnvinfer.so.10 not found\n  fix: install TensorRT 10\n")
}

// After a reload changed the policy, the gpu-lets whose executors started
// before it still run the old one until a re-plan replaces them: the status
// says which, instead of the new policy alone.
func TestWriteStatusNamesGpuletsOnAnEarlierPolicy(t *testing.T) {
	s := adminStatus{Version: "v1", Policy: "eager", Algorithm: "gpulet-int", Gpulets: []adminGpulet{
		{ID: "cpu-50-1", Size: 50, State: "ready", Policy: "deferred"},
		{ID: "cpu-50-3", Size: 50, State: "ready", Policy: "eager"},
	}}
	var b strings.Builder
	require.NoError(t, writeStatus(&b, "http://x", &s))
	require.Contains(t, b.String(), "policy eager, placement gpulet-int")
	require.Contains(t, b.String(), "still on an earlier policy (the reload could not switch them: see the events): cpu-50-1 (deferred)\n")
	s.Gpulets[0].Policy = "eager"
	b.Reset()
	require.NoError(t, writeStatus(&b, "http://x", &s))
	require.NotContains(t, b.String(), "earlier policy")
}

// TestWriteStatusPipelines: a pipeline's steps and fan-out, its latency,
// and why one that cannot run cannot.
func TestWriteStatusPipelines(t *testing.T) {
	s := adminStatus{Version: "v1", Pipelines: []adminPipeline{
		{Name: "spot-and-label", SLOMS: 400, Steps: []string{"spotter", "labeler"}, Fanout: "objects", Ready: true, Rate: 12,
			Recent: adminRecent{Requests: 40, Attainment: 1, P50MS: 3.1, P99MS: 9.5}},
		{Name: "broken", SLOMS: 100, Steps: []string{"a", "b"}, Reason: "check pipeline broken: pipeline cannot run: step[1] (b): the model is not served",
			Recent: adminRecent{Requests: 2, Answered: new(int), Violations: 2}},
		{Name: "crowd", SLOMS: 2000, Steps: []string{"crowd", "labeler"}, Fanout: "objects", FanoutRows: 20000, Ready: true},
		{Name: "branch", SLOMS: 400, Steps: []string{"crowd", "spotter", "labeler"}, Beside: []bool{false, true, false}, Ready: true},
	}}
	var b strings.Builder
	require.NoError(t, writeStatus(&b, "http://x", &s))
	out := b.String()
	require.Contains(t, out, "spot-and-label  spotter -> labeler (fan-out: objects)  ")
	require.Contains(t, out, "  400ms   12.0/s  -         100.0%  3.10ms  9.50ms")
	require.Contains(t, out, "crowd           crowd -> labeler (fan-out: objects, 20000.0 rows a request)  2000ms")
	require.Contains(t, out, "broken: not served: check pipeline broken: pipeline cannot run: step[1] (b)")
	require.Regexp(t, `(?m)^broken .* 100ms +0\.00/s +- +0\.0% +- +-$`, out, "no latency where every request was refused")
	require.Contains(t, out, "branch          crowd + spotter -> labeler  ", "steps that run at once are joined by +")
}

// TestWritePipelines: the pipelines table shows the accuracy a pipeline
// serves at and its scaling, and a line names the cheaper variants a step
// runs; a pipeline under hardware scaling gets no such line. A line gives
// the response cache's hits of a pipeline that enables it. A pipeline
// that cannot run says why, each problem under its name.
func TestWritePipelines(t *testing.T) {
	var ps []adminPipeline
	require.NoError(t, json.Unmarshal([]byte(`[
 {"name": "traffic", "slo_ms": 250, "steps": ["det", "cls"], "fanout": "objects", "ready": true, "rate": 120,
  "recent": {"requests": 10, "slo_attainment": 1, "p50_ms": 40, "p99_ms": 90},
  "scaling": {"scaling": "accuracy", "planned_accuracy": 0.91, "accuracy": 0.905, "served": 10,
   "mix": [[{"model": "det", "share": 1}], [{"model": "cls", "share": 0.6}, {"model": "cls-lite", "share": 0.4}]]}},
 {"name": "full", "slo_ms": 100, "steps": ["a"], "ready": true, "warnings": ["every request is refused: input \"x\" alone takes 4096 bytes"],
  "scaling": {"scaling": "hardware", "planned_accuracy": 1, "mix": [[{"model": "a", "share": 1}]]},
  "response_cache": {"hits": 7, "misses": 3}},
 {"name": "misfit", "slo_ms": 100, "steps": ["a"], "ready": false, "reason": "step[0] (a): input \"x\" is [N 16]\noutput \"y\" is declared [N 2]"}
]`), &ps))
	var b strings.Builder
	require.NoError(t, writePipelines(&b, ps))
	out := b.String()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 9, out)
	require.Equal(t, "misfit: not served: step[0] (a): input \"x\" is [N 16]", lines[7])
	require.Equal(t, "  output \"y\" is declared [N 2]", lines[8], "each problem under the pipeline's name")
	require.Equal(t, strings.Fields("PIPELINE STEPS SLO RATE ACCURACY ATTAIN P50 P99"), strings.Fields(lines[0]))
	require.Contains(t, lines[1], "90.5% (accuracy)")
	require.Contains(t, lines[2], "- (hardware)")
	require.Equal(t, "traffic: runs cheaper variants: step[1]: cls 60% + cls-lite 40%", lines[4])
	require.Equal(t, "full: warning: every request is refused: input \"x\" alone takes 4096 bytes", lines[5])
	require.Equal(t, "full: response cache: 7 hits, 3 misses", lines[6])
}

func TestWriteStatusEmpty(t *testing.T) {
	var b strings.Builder
	off := ""
	require.NoError(t, writeStatus(&b, "http://x", &adminStatus{Version: "v1", GRPCListen: &off}))
	out := b.String()
	require.Contains(t, out, "gpuletd v1 at http://x: not ready")
	require.Contains(t, out, "gRPC off (grpc_listen is empty)")
	b.Reset()
	require.NoError(t, writeStatus(&b, "http://x", &adminStatus{Version: "v0"}))
	require.NotContains(t, b.String(), "gRPC", "a daemon that does not say its gRPC listener")
	require.Contains(t, out, "no plan yet")
	require.Equal(t, 3, strings.Count(out, "(none)"), out)
}

func TestFormats(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{perSecond(0), "0.00/s"}, {perSecond(1.234), "1.23/s"}, {perSecond(12.34), "12.3/s"}, {perSecond(1234.5), "1234/s"},
		{millis(0.0421), "42µs"}, {millis(2.444), "2.44ms"}, {millis(36.24), "36.2ms"}, {millis(488.4), "488ms"},
		{percent(0.995), "99.5%"}, {clip("abcdef", 4), "abc…"}, {clip("abc", 4), "abc"},
		{meanBatch(0, 3), "-"}, {meanBatch(4, 1.26), "1.3"},
	} {
		require.Equal(t, tc.want, tc.got)
	}
}

func TestDaemonURL(t *testing.T) {
	for _, tc := range []struct{ flag, listen, want string }{
		{"127.0.0.1:9", "", "http://127.0.0.1:9"},
		{"http://example.org:80/", "", "http://example.org:80"},
		{"", "", "http://127.0.0.1:8700"},
		{"", "127.0.0.1:8800", "http://127.0.0.1:8800"},
		{"", "0.0.0.0:8800", "http://127.0.0.1:8800"},
		{"", "[::]:8800", "http://[::1]:8800"},
		{"", "localhost:8801", "http://localhost:8801"},
	} {
		t.Run(tc.flag+tc.listen, func(t *testing.T) {
			for _, k := range []string{"GPULETD_CONFIG", "GPULETD_LISTEN"} {
				t.Setenv(k, "")
				require.NoError(t, os.Unsetenv(k))
			}
			if tc.listen != "" {
				t.Setenv("GPULETD_LISTEN", tc.listen)
			}
			l, loadErr := (&globalFlags{}).loadConfig()
			got, err := daemonURL(l, loadErr, tc.flag)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

// TestNoDaemonIsOneLine: every command that talks to a daemon says in one
// line that none answers, and exits 1.
func TestNoDaemonIsOneLine(t *testing.T) {
	addr := freeAddr(t) // nothing listens there
	for _, args := range [][]string{
		{"status", "--url", addr},
		{"models", "list", "--url", addr},
		{"models", "show", "lenet5", "--url", addr},
		{"events", "--url", addr},
		{"events", "-f", "--url", addr}, // a follow waits for a daemon that went away, not for one never reached
		{"load", "--url", addr, "--model", "lenet5", "--rate", "10", "--duration", "1s"},
	} {
		code, stdout, stderr := runCLI(t, args...)
		require.Equal(t, 1, code, args)
		require.Empty(t, stdout)
		require.Equal(t, "no gpuletd answers at http://"+addr+": is it running?\n", stderr, args)
	}
	// The address comes from the configuration when --url is not given.
	t.Setenv("GPULETD_LISTEN", addr)
	t.Setenv("GPULETD_STATE_DIR", t.TempDir()) // no database: nothing more to say
	code, _, stderr := runCLI(t, "status")
	require.Equal(t, 1, code)
	require.Equal(t, "no gpuletd answers at http://"+addr+": is it running?\n", stderr)
}

// TestDaemonErrorSaysWhatTLSNeeds: a daemon reached with the wrong scheme
// or an untrusted certificate is one line saying what to change.
func TestDaemonErrorSaysWhatTLSNeeds(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{}`)) })
	secure := httptest.NewTLSServer(ok)
	defer secure.Close()
	plain := httptest.NewServer(ok)
	defer plain.Close()
	trusting := &daemonAPI{base: secure.URL, client: secure.Client()}
	for _, tc := range []struct {
		name string
		d    *daemonAPI
		want string
	}{
		{"untrusted certificate", plainAPI(secure.URL), "its certificate is not trusted here (x509: certificate signed by unknown authority)"},
		{"https to a plain daemon", plainAPI(strings.Replace(plain.URL, "http://", "https://", 1)), "does not speak TLS: reach it with --url http://"},
		{"http to a TLS daemon", plainAPI(strings.Replace(secure.URL, "https://", "http://", 1)), "speaks TLS: set tls.cert_file (GPULETD_TLS_CERT_FILE) to its certificate"},
		{"trusted", trusting, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v map[string]any
			err := adminGet(t.Context(), tc.d, "/", &v)
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.want)
			tc.d.client.CloseIdleConnections()
		})
	}
}

// TestDaemonTrust: the commands trust the configured certificate for the
// configured daemon, the system's roots for an https --url, and speak plain
// gRPC to a daemon reached over http.
func TestDaemonTrust(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	writeCert(t, certFile, keyFile, 5)
	for _, k := range []string{"GPULETD_CONFIG", "GPULETD_LISTEN", "GPULETD_TLS_CERT_FILE", "GPULETD_TLS_KEY_FILE"} {
		t.Setenv(k, "")
		require.NoError(t, os.Unsetenv(k))
	}
	d, err := (&globalFlags{}).daemon(io.Discard, "https://gpu1.example:8700")
	require.NoError(t, err)
	require.NotNil(t, d.tls, "an https daemon's gRPC is TLS too")
	require.Nil(t, d.tls.RootCAs, "the system's roots")
	d, err = (&globalFlags{}).daemon(io.Discard, "127.0.0.1:8700")
	require.NoError(t, err)
	require.Equal(t, "http://127.0.0.1:8700", d.base)
	require.Nil(t, d.tls)

	t.Setenv("GPULETD_TLS_CERT_FILE", certFile)
	t.Setenv("GPULETD_TLS_KEY_FILE", keyFile)
	d, err = (&globalFlags{}).daemon(io.Discard, "")
	require.NoError(t, err)
	require.Equal(t, "https://127.0.0.1:8700", d.base)
	require.NotNil(t, d.tls.RootCAs, "the configured certificate is trusted")
	d, err = (&globalFlags{}).daemon(io.Discard, "http://127.0.0.1:9000")
	require.NoError(t, err)
	require.Nil(t, d.tls, "a daemon reached over http is plain, gRPC too")

	require.NoError(t, os.WriteFile(certFile, []byte("garbage"), 0o600))
	_, err = (&globalFlags{}).daemon(io.Discard, "")
	require.ErrorContains(t, err, "no PEM certificate in it")
}

// A command that finds the daemon from the configuration says the
// configuration's warnings first: a misspelt GPULETD_LISTEN would otherwise
// send it to the default address without a word. Given --url it does not.
func TestDaemonSaysTheConfigurationsWarnings(t *testing.T) {
	t.Setenv("GPULETD_CONFIG", "")
	t.Setenv("GPULETD_LISTN", "127.0.0.1:9")
	var warn strings.Builder
	d, err := (&globalFlags{}).daemon(&warn, "")
	require.NoError(t, err)
	require.Equal(t, "http://127.0.0.1:8700", d.base)
	require.Contains(t, warn.String(), "warning: environment variable GPULETD_LISTN names no configuration field")
	require.Contains(t, warn.String(), "GPULETD_LISTEN", "the one likely meant")
	warn.Reset()
	_, err = (&globalFlags{}).daemon(&warn, "http://127.0.0.1:9")
	require.NoError(t, err)
	require.Empty(t, warn.String())
}

// TestWrapWords: text is broken at spaces to the width, never between a
// number and its unit; a word longer than it has a line of its own; empty
// text is one empty line.
func TestWrapWords(t *testing.T) {
	for _, tc := range []struct {
		text  string
		width int
		want  []string
	}{
		{"", 10, []string{""}},
		{"short", 10, []string{"short"}},
		{"one two three four", 9, []string{"one two", "three", "four"}},
		{"a unbreakablelongword b", 5, []string{"a", "unbreakablelongword", "b"}},
		{"ℓ(1) > SLO on x", 10, []string{"ℓ(1) > SLO", "on x"}},
		// A number keeps its unit.
		{"the host's 23.5 GiB less 194.3 MiB", 16, []string{"the host's", "23.5 GiB less", "194.3 MiB"}},
		{"p50 1.42 ms at 100 req/s", 10, []string{"p50", "1.42 ms at", "100 req/s"}},
		{"in 5 seconds", 3, []string{"in", "5", "seconds"}},
	} {
		require.Equal(t, tc.want, wrapWords(tc.text, tc.width), tc.text)
	}
	require.Equal(t, []string{"one two", "three", "four"}, wrapHanging("one two three four", 7, 5))
}

// The status says when the last hour had warnings or errors, and which
// command lists them; nothing when it had none or the daemon does not say.
func TestWriteStatusRecentProblems(t *testing.T) {
	for _, tc := range []struct {
		p    *adminProblems
		want string
	}{
		{&adminProblems{Window: "1h0m0s", Warnings: 2, Errors: 1}, "last hour: 2 warnings, 1 error; gpuletd events --severity warning --since 1h\n"},
		{&adminProblems{Window: "1h0m0s", Errors: 1}, "last hour: 1 error; gpuletd events --severity warning --since 1h\n"},
		{&adminProblems{Window: "30m0s", Warnings: 1}, "last 30m: 1 warning; gpuletd events --severity warning --since 30m\n"},
		{&adminProblems{Window: "1h0m0s"}, ""},
		{nil, ""},
	} {
		requireUnderPolicyLine(t, func(s *adminStatus) { s.RecentProblems = tc.p }, tc.want, "gpuletd events")
	}
}

// requireUnderPolicyLine writes the fixture's status as set changes it and
// requires want right under the policy line, in 80 columns; for want "",
// that the status does not mention absent.
func requireUnderPolicyLine(t *testing.T, set func(*adminStatus), want, absent string) {
	t.Helper()
	var s adminStatus
	readFixture(t, "status.json", &s)
	set(&s)
	var b strings.Builder
	require.NoError(t, writeStatus(&b, "http://127.0.0.1:18711", &s))
	if want == "" {
		require.NotContains(t, b.String(), absent)
		return
	}
	require.Contains(t, b.String(), "executor restarts\n"+want, "under the policy line")
	require.LessOrEqual(t, widest(b.String()), 80, b.String())
}

// The header says how long the daemon has run and since when, as
// systemctl status does; a daemon that does not say gets neither.
func TestWriteStatusSaysHowLongItRan(t *testing.T) {
	var s adminStatus
	readFixture(t, "status.json", &s)
	started := time.Now().Add(-(3*time.Hour + 12*time.Minute + 30*time.Second))
	s.Started = &started
	var b strings.Builder
	require.NoError(t, writeStatus(&b, "http://127.0.0.1:18711", &s))
	require.Contains(t, b.String(), "gpuletd dev at http://127.0.0.1:18711: ready, up 3h12m (since "+started.Local().Format("2006-01-02 15:04:05")+")\n")

	for d, want := range map[time.Duration]string{
		45*time.Second + 400*time.Millisecond: "45s",
		12*time.Minute + 59*time.Second:       "12m",
		26*time.Hour + 5*time.Minute:          "1d2h",
		3 * time.Hour:                         "3h0m",
	} {
		require.Equal(t, want, uptime(d), d)
	}
}

func TestCapacityWords(t *testing.T) {
	for _, tc := range []struct {
		c      adminCapacity
		spread bool
		want   string
	}{
		{adminCapacity{Ratio: 3.42, Load: 400, Rate: 1368}, false, "capacity (planner's estimate): 3.4× the 400 req/s planned for, 1368 req/s"},
		{adminCapacity{Ratio: 620.4, Load: 98.4, Rate: 59785}, false, "capacity (planner's estimate): 620× the 98.4 req/s planned for, 59785 req/s"},
		{adminCapacity{Ratio: 1.8, Load: 12000, Rate: 21600, AtLeast: true}, false, "capacity (planner's estimate): ≥1.8× the 12000 req/s planned for, ≥21600 req/s"},
		{adminCapacity{Ratio: 98304, Load: 2, Rate: 196608}, true, "capacity (planner's estimate): 196608 req/s in all, in the planned mix"},
		{adminCapacity{Ratio: 1 << 20, Load: 1, Rate: 1 << 20, AtLeast: true}, false, "capacity (planner's estimate): ≥1048576× the 1.00 req/s planned for,\n  ≥1048576 req/s"},
		{adminCapacity{Ratio: 0.8, Load: 500, Rate: 400}, false, "capacity (planner's estimate): 0.8× the 500 req/s planned for: overloaded"},
		{adminCapacity{Ratio: 0, Load: 7.55, Rate: 0}, false, "capacity (planner's estimate): none: however light the 7.55 req/s planned for,\n  the plan leaves a model out (below: which, and why)"},
		{adminCapacity{Ratio: 256, Load: 318, Rate: 80810, CPU: true}, false, "capacity (planner's estimate): 256× the 318 req/s planned for, 80810 req/s\n" +
			"  on the CPU it counts the models' compute alone, and the request path\n  shares those cores: gpuletd load --rate-range measures what it serves"},
		{adminCapacity{Ratio: 5.3, Load: 2004, Rate: 10694, CPU: true, ExecutorPathUS: 71.2, DaemonPathUS: 234}, false, "capacity (planner's estimate): 5.3× the 2004 req/s planned for, 10694 req/s\n" +
			"  on the CPU it counts the executors' 71µs of CPU a request; the daemon's\n  234µs shares the cores too: gpuletd load --rate-range measures what it serves"},
	} {
		got := tc.c.words(tc.spread)
		require.Equal(t, tc.want, got)
		require.LessOrEqual(t, widest(got), 80)
	}
}

func TestRequestPathWords(t *testing.T) {
	at := time.Date(2026, 12, 3, 10, 38, 47, 0, time.Local)
	x := 73.2
	p := adminRequestPath{PerRequestUS: 312.4, DaemonUS: 239.2, ExecutorsUS: &x, Answered: 19916, At: at}
	require.Equal(t, "request path: 312µs of CPU a request (daemon 239µs, executor 73µs), over 19916 requests to 10:38:47", p.words())
	// A GPU node's executors are not measured: no "executor 0µs".
	p = adminRequestPath{PerRequestUS: 1250, DaemonUS: 1250, Answered: 1000, At: at}
	require.Equal(t, "request path: 1.25ms of the daemon's CPU a request (executors' measured on CPU gpu-lets of one core alone), over 1000 requests to 10:38:47", p.words())
	var b strings.Builder
	writeWrappedLine(&b, p.words())
	require.Equal(t, "request path: 1.25ms of the daemon's CPU a request (executors' measured on CPU\n"+
		"  gpu-lets of one core alone), over 1000 requests to 10:38:47\n", b.String())
}

func TestCgroupMemoryWords(t *testing.T) {
	for _, tc := range []struct {
		m    adminCgroupMemory
		want string
	}{
		{adminCgroupMemory{Cgroup: "/system.slice/gpuletd.service", WorkingSet: 1610612736, Limit: 4 << 30, LimitOf: "/system.slice/gpuletd.service"},
			"memory: 1.5 GiB of a 4 GiB limit (38%), cgroup /system.slice/gpuletd.service"},
		{adminCgroupMemory{Cgroup: "/user.slice/user-1000.slice/session-3.scope", WorkingSet: 318318, OOMKills: -1},
			"memory: 310.9 KiB, no limit, cgroup /user.slice/user-1000.slice/session-3.scope"},
		{adminCgroupMemory{Cgroup: "/system.slice/gpuletd.service", WorkingSet: 3900000000, Limit: 4 << 30, LimitOf: "/system.slice", OOMKills: 2, NearLimit: true},
			"memory: 3.6 GiB of a 4 GiB limit (91%), cgroup /system.slice/gpuletd.service;\n  2 out-of-memory kills since it started\n" +
				"  near the limit: at it the kernel kills an executor; raise MemoryMax= of /system.slice (systemctl edit gpuletd) or place fewer models"},
	} {
		require.Equal(t, tc.want, tc.m.words())
	}
}

func TestCPUMemoryWords(t *testing.T) {
	from := "gpuletd's memory limit of 4 GiB (cgroup /system.slice/gpuletd.service; MemoryMax= in a systemd unit) less the daemon's peak of 70 MiB"
	for _, tc := range []struct {
		c      adminCPUMemory
		words  string
		device string
	}{
		{adminCPUMemory{Models: 4<<30 - 70<<20, Placed: 1610612736, From: from},
			"models on the CPU: 1.5 GiB placed of the 3.9 GiB they may hold (" + from + ")", "1.5/3.9GiB"},
		{adminCPUMemory{Placed: 1 << 30, From: "unbounded: neither the host's memory nor a memory limit could be read"},
			"models on the CPU: 1 GiB placed; unbounded: neither the host's memory nor a memory limit could be read", "-"},
	} {
		require.Equal(t, tc.words, tc.c.words())
		require.Equal(t, tc.device, adminDevice{Kind: "cpu"}.memoryText(&tc.c))
	}
	require.Equal(t, "-", adminDevice{Kind: "cpu"}.memoryText(nil), "a daemon that does not say")
	require.Equal(t, "12/80GiB", adminDevice{Kind: "nvidia", MemoryTotal: 80 << 30, MemoryFree: 68 << 30}.memoryText(nil))
}

// status --watch asks again every interval until interrupted; off a
// terminal each answer follows the last (a line each with --short), and a
// daemon that stops answering is said so on stderr and asked again.
func TestStatusWatch(t *testing.T) {
	var asks atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := asks.Add(1)
		if n == 3 {
			http.Error(w, `{"error":"stopping"}`, http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintf(w, `{"version":"v","ready":true,"summary":"ready: ask %d","models":[],"gpulets":[],"devices":[]}`, n)
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb bytes.Buffer
	done := make(chan int)
	go func() { done <- run(ctx, []string{"status", "--url", srv.URL, "--short", "--watch=20ms"}, &out, &errb) }()
	// Asks follow one another, each written before the next: once the
	// daemon has seen a sixth, the fifth's answer is out (an ask the cancel
	// interrupts is dropped, so waiting for the fifth left three lines).
	require.Eventually(t, func() bool { return asks.Load() >= 6 }, 10*time.Second, 5*time.Millisecond)
	cancel()
	require.Equal(t, 0, <-done, errb.String())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.GreaterOrEqual(t, len(lines), 4)
	require.Equal(t, []string{"ready: ask 1", "ready: ask 2", "ready: ask 4"}, lines[:3], "the third ask failed")
	require.Contains(t, errb.String(), "(asking again every 20ms)")

	// On a terminal: the screen is cleared and headed, then the answer.
	var term bytes.Buffer
	tctx, tcancel := context.WithCancel(context.Background())
	shown := 0
	err := watchStatus(tctx, &term, io.Discard, 10*time.Millisecond, true, func(w io.Writer, compact bool) error {
		require.False(t, compact)
		if shown++; shown == 2 {
			tcancel()
		}
		_, err := fmt.Fprintln(w, "the status")
		return err
	})
	require.NoError(t, err)
	require.Regexp(t, `^\x1b\[H\x1b\[2JEvery 10ms: gpuletd status +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\n\nthe status\n`, term.String())
}

// A model the miss rule gave more headroom says so under the models table,
// within 80 columns.
func TestWriteStatusSaysAModelHasMoreHeadroom(t *testing.T) {
	for _, extra := range []float64{0, 0.25} {
		var s adminStatus
		readFixture(t, "status.json", &s)
		s.Models[1].ExtraHeadroom = extra
		var b strings.Builder
		require.NoError(t, writeStatus(&b, "http://127.0.0.1:18711", &s))
		require.Equal(t, extra > 0, strings.Contains(b.String(), "\nmlp: planned with 25% more headroom: it missed its SLO on a plan that held none\n  of its load back"), b.String())
		require.LessOrEqual(t, widest(b.String()), 80, b.String())
	}
}

// A CPU device that its cgroup's CPU limit narrowed says so under the
// devices; one without a limit says nothing of it.
func TestWriteStatusSaysTheCPULimit(t *testing.T) {
	for _, limit := range []float64{0, 1.5} {
		var s adminStatus
		readFixture(t, "status.json", &s)
		cpu := adminDevice{ID: "cpu", Kind: "cpu", Type: "cpu", Name: "Test CPU", Cores: []int{0}}
		if limit > 0 {
			cpu.CPULimit, cpu.CPULimitOf, cpu.OnlineCores = limit, "/docker/ab", 2
		}
		s.Devices = append(s.Devices, cpu)
		var b strings.Builder
		require.NoError(t, writeStatus(&b, "http://127.0.0.1:18711", &s))
		require.Equal(t, limit > 0, strings.Contains(b.String(), "\ncpu: 1 of 2 cores, the whole cores its cgroup's CPU limit of 1.5 CPUs pays for (/docker/ab)\n"), b.String())
	}
}

// The status says when clients fill limits.max_connections: some were
// refused over it, or nine tenths of it are open; nothing otherwise, or
// from a daemon that does not say.
func TestWriteStatusConnections(t *testing.T) {
	for _, tc := range []struct {
		c    *adminConnections
		want string
	}{
		{&adminConnections{Open: 1024, Max: 1024, Refused: 85488},
			"connections: 1024 of 1024 open (limits.max_connections), 85488 refused over it\n  since the start (health checks and scrapes are answered over it)\n"},
		{&adminConnections{Open: 950, Max: 1024}, "connections: 950 of 1024 open (limits.max_connections)\n"},
		{&adminConnections{Open: 3, Max: 1024, Refused: 2}, "connections: 3 of 1024 open (limits.max_connections), 2 refused over it since\n  the start (health checks and scrapes are answered over it)\n"},
		{&adminConnections{Open: 3, Max: 1024}, ""},
		{nil, ""},
	} {
		requireUnderPolicyLine(t, func(s *adminStatus) { s.Connections = tc.c }, tc.want, "limits.max_connections")
	}
}

// The header says the request bytes in flight when some requests were
// refused for want of room, or two thirds of the budget are held, with the
// models that hold the most; nothing otherwise, or from a daemon that does
// not say.
func TestWriteStatusRequestBytes(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name string
		r    *adminRequestBytes
		want string
	}{
		{"refused, one model holding most", &adminRequestBytes{Held: 196 * mib, Max: 256 * mib, Refused: 14502,
			Models: map[string]int64{"vgg": 196*mib - 8192, "lenet5": 8192}},
			"request bytes in flight: 196 MiB of 256 MiB (limits.max_inflight_bytes): vgg\n  196 MiB, lenet5 8 KiB; 14502 refused for want of room since the start\n  (memory_budget)\n"},
		{"nearly full, the three holding most", &adminRequestBytes{Held: 240 * mib, Max: 256 * mib,
			Models: map[string]int64{"a": 60 * mib, "b": 60 * mib, "c": 100 * mib, "d": 20 * mib}},
			"request bytes in flight: 240 MiB of 256 MiB (limits.max_inflight_bytes): c\n  100 MiB, a 60 MiB, b 60 MiB, 1 more\n"},
		{"one model's flood, held back", &adminRequestBytes{Held: 191 * mib, Max: 256 * mib, Models: map[string]int64{"vgg": 191 * mib}},
			"request bytes in flight: 191 MiB of 256 MiB (limits.max_inflight_bytes): vgg\n  191 MiB\n"},
		{"what requests hold beside their bodies nearly full", &adminRequestBytes{Held: 24 * mib, Beside: 190 * mib, Max: 256 * mib,
			Models: map[string]int64{"tokens": 214 * mib}},
			"request bytes in flight: 24 MiB of 256 MiB (limits.max_inflight_bytes), and\n  190 MiB of as much beside them (decoded inputs, outputs): tokens 214 MiB\n"},
		{"room and nothing refused", &adminRequestBytes{Held: 170 * mib, Max: 256 * mib, Models: map[string]int64{"a": 170 * mib}}, ""},
		{"a daemon that does not say", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireUnderPolicyLine(t, func(s *adminStatus) { s.RequestBytes = tc.r }, tc.want, "limits.max_inflight_bytes")
		})
	}
}
