package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/daemon"
	"github.com/gpulet/gpuletd/executor/onnxrt"
	"github.com/gpulet/gpuletd/internal/fakeep"
	"github.com/gpulet/gpuletd/internal/testbin"
	"github.com/gpulet/gpuletd/modelzoo"
	"github.com/gpulet/gpuletd/mps"
	"github.com/gpulet/gpuletd/profiler/store"
)

// haveNVIDIADriver says whether this machine has an NVIDIA kernel driver.
func haveNVIDIADriver() bool {
	_, err := os.Stat("/proc/driver/nvidia/version")
	return err == nil
}

// doctorJSON runs gpuletd doctor --json and returns its exit code and report.
func doctorJSON(t *testing.T, env []string) (int, daemon.Report, string) {
	t.Helper()
	code, out := runOnce(t, testbin.Gpuletd(t), t.TempDir(), env, "doctor", "--json")
	var r daemon.Report
	start := strings.Index(out, "{")
	require.GreaterOrEqual(t, start, 0, out)
	require.NoError(t, json.NewDecoder(strings.NewReader(out[start:])).Decode(&r), out)
	return code, r, out
}

func TestDoctorOnThisMachine(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	code, r, out := doctorJSON(t, daemonEnv(t, "GPULETD_DEVICES=auto"))
	require.Equal(t, 0, code, out)
	require.True(t, r.OK)
	require.Equal(t, "1.29.0", r.ONNXRuntime.Version)
	require.Len(t, r.Providers, 2)
	require.NotEmpty(t, r.CUDALibraries)
	require.NotEmpty(t, r.Serve.Use)
	if !haveNVIDIADriver() {
		require.False(t, r.Driver.Loaded)
		require.Contains(t, r.Driver.Error, "is the NVIDIA driver installed?")
		require.Equal(t, "cpu", r.Serve.Use[0].Kind)
		require.Contains(t, r.Serve.Note, "no NVIDIA GPU")
		for _, p := range r.Providers {
			require.False(t, p.Loads, "no provider runs a model without a GPU")
			require.NotEmpty(t, p.Fix)
		}
	}

	// The table says the same.
	code, table := runOnce(t, testbin.Gpuletd(t), t.TempDir(), daemonEnv(t, "GPULETD_DEVICES=auto"), "doctor")
	require.Equal(t, 0, code)
	require.Contains(t, table, "ONNX Runtime       1.29.0")
	require.Contains(t, table, "serve              devices auto: would use")
}

// TestDoctorInAContainer: in a container (the variable container set, as
// gpuletd's image sets it) the doctor's fixes say how to run the container
// (the GPUs passed in, the image built for GPUs) instead of what to install
// on a host; outside one they say what to install.
func TestDoctorInAContainer(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	if haveNVIDIADriver() {
		t.Skip("the fixes for a missing driver are checked where there is none")
	}
	if _, err := os.Stat("/run/.containerenv"); err != nil { // this test itself runs on a host
		_, host, out := doctorJSON(t, daemonEnv(t, "GPULETD_DEVICES=auto", "container="))
		require.False(t, host.Container, out)
		require.Empty(t, host.DriverFix, "on a host the driver's error says it")
		require.Contains(t, host.MPS.Fix, "install the NVIDIA driver's utilities")
	}

	code, r, out := doctorJSON(t, daemonEnv(t, "GPULETD_DEVICES=auto", "container=oci"))
	require.Equal(t, 0, code, out)
	require.True(t, r.Container, out)
	require.Contains(t, r.DriverFix, "docker run --gpus all")
	require.Contains(t, r.MPS.Fix, "nvidia-cuda-mps-control with the compute capability")
	for _, p := range r.Providers {
		if !p.Installed {
			require.Contains(t, p.Fix, "make image-gpu", p.Name)
		}
	}
	fixes := map[string]string{}
	for _, l := range r.CUDALibraries {
		fixes[l.Name] = l.Fix
	}
	if fixes["libcuda.so.1"] != "" {
		require.Contains(t, fixes["libcuda.so.1"], "docker run --gpus all")
	}
	if fixes["libcudart.so.13"] != "" {
		require.Contains(t, fixes["libcudart.so.13"], "this image's base has no CUDA 13 runtime")
	}

	_, table := runOnce(t, testbin.Gpuletd(t), t.TempDir(), daemonEnv(t, "GPULETD_DEVICES=auto", "container=oci"), "doctor")
	require.Contains(t, table, "NVIDIA driver      not found: ")
	require.Contains(t, table, "fix: pass the GPUs in with the NVIDIA Container Toolkit")
}

// TestDoctorChecksFoldersAndAddresses: doctor says, as warnings that do
// not fail it, what serve's start checks would stop at: a repository that
// does not exist, an address another process holds; and that the state
// and runtime folders may be used; a gpuletd serving on the address.
func TestDoctorChecksFoldersAndAddresses(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	held, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer held.Close()
	heldMetrics, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer heldMetrics.Close()
	missing, extra, missingExtra := filepath.Join(t.TempDir(), "no-models"), t.TempDir(), filepath.Join(t.TempDir(), "no-more")
	env := daemonEnv(t, "GPULETD_DEVICES=cpu", "GPULETD_MODEL_REPOSITORY="+missing, "GPULETD_EXTRA_MODEL_REPOSITORIES="+extra+","+missingExtra,
		"GPULETD_LISTEN="+held.Addr().String(), "GPULETD_GRPC_LISTEN=",
		"GPULETD_METRICS_LISTEN="+heldMetrics.Addr().String())
	code, r, out := doctorJSON(t, env)
	require.Equal(t, 0, code, "folder and address problems are warnings; %s", out)
	found := map[string]daemon.FolderCheck{}
	for _, f := range r.Folders {
		found[f.Field] = f
	}
	require.Contains(t, found["model_repository"].Problem, "model repository "+missing+" does not exist")
	require.Empty(t, found["extra_model_repositories[0]"].Problem)
	require.Equal(t, extra, found["extra_model_repositories[0]"].Path)
	require.Contains(t, found["extra_model_repositories[1]"].Problem, "model repository "+missingExtra+" does not exist: create it, point extra_model_repositories[1] (GPULETD_EXTRA_MODEL_REPOSITORIES) at yours")
	require.Empty(t, found["state_dir"].Problem)
	require.Empty(t, found["runtime_dir"].Problem)
	require.Contains(t, found["listen"].Problem, "another process listens there")
	require.Contains(t, found["metrics.listen"].Problem, "another process listens there")
	require.Contains(t, found["metrics.listen"].Problem, "give gpuletd another address in metrics.listen (GPULETD_METRICS_LISTEN)")
	require.NotContains(t, found, "grpc_listen", "an empty grpc_listen is not served, nor checked")

	// serve stops at once on a metrics address another process holds, and
	// says which setting it is.
	free := daemonEnv(t, "GPULETD_DEVICES=cpu", "GPULETD_MODEL_REPOSITORY="+t.TempDir(), "GPULETD_LISTEN=127.0.0.1:0", "GPULETD_GRPC_LISTEN=",
		"GPULETD_METRICS_LISTEN="+heldMetrics.Addr().String())
	code, serveOut := runOnce(t, testbin.Gpuletd(t), t.TempDir(), free, "serve")
	require.NotEqual(t, 0, code, serveOut)
	require.Contains(t, serveOut, "listen on "+heldMetrics.Addr().String()+" (metrics.listen)")

	_, table := runOnce(t, testbin.Gpuletd(t), t.TempDir(), env, "doctor")
	require.Regexp(t, `\nlisten +`+regexp.QuoteMeta(held.Addr().String())+`: warning for `, table)
	require.Regexp(t, `\nextra_model_repositories\[0\] +`+regexp.QuoteMeta(extra)+`: \S+ may use it\n`, table)
	require.Regexp(t, `\nstate_dir +`, table)

	// An address a gpuletd serves is named as that, not as a problem, its
	// metadata restricted to requests that carry a header the doctor sends.
	repo := t.TempDir()
	metricsAddr := freeAddr(t)
	restricted := `GPULETD_AUTH_RESTRICTED_APIS=["metadata:probe-key=p1"]`
	addr, _ := startDaemon(t, daemonEnv(t, "GPULETD_MODEL_REPOSITORY="+repo, "GPULETD_METRICS_LISTEN="+metricsAddr, restricted))
	require.Equal(t, http.StatusForbidden, do(t, "GET", "http://"+addr+"/v2", nil, nil).code)
	_, r, out = doctorJSON(t, daemonEnv(t, "GPULETD_DEVICES=cpu", "GPULETD_MODEL_REPOSITORY="+repo, "GPULETD_LISTEN="+addr, "GPULETD_METRICS_LISTEN="+metricsAddr, restricted))
	for _, f := range r.Folders {
		switch f.Field {
		case "listen":
			require.Empty(t, f.Problem, out)
			require.True(t, strings.HasPrefix(f.Serving, "gpuletd "), out)
		case "metrics.listen":
			require.Empty(t, f.Problem, out)
			require.True(t, strings.HasPrefix(f.Serving, "gpuletd "), out)
		}
	}
	require.NotNil(t, r.Models, out)
	require.Zero(t, r.Models.Folders)
	_, table = runOnce(t, testbin.Gpuletd(t), t.TempDir(), daemonEnv(t, "GPULETD_DEVICES=cpu", "GPULETD_MODEL_REPOSITORY="+repo), "doctor")
	require.Contains(t, table, "models             no model folders in "+repo+" yet\n")

	// The repository judged as serve would: a broken folder is a warning
	// that names `gpuletd models check`.
	require.NoError(t, modelzoo.WriteRepository(repo, []string{"lenet5"}, 1))
	require.NoError(t, os.MkdirAll(filepath.Join(repo, "broken", "1"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(repo, "broken", "1", "model.onnx"), []byte("junk"), 0o644))
	modelsEnv := daemonEnv(t, "GPULETD_DEVICES=cpu", "GPULETD_MODEL_REPOSITORY="+repo, "GPULETD_STARTUP_MODELS=lenet5,lenet")
	code, r, out = doctorJSON(t, modelsEnv)
	require.Equal(t, 0, code, "a broken model is a warning; %s", out)
	require.NotNil(t, r.Models, out)
	require.Equal(t, 2, r.Models.Folders)
	require.Contains(t, r.Models.Broken["broken"], "config.yaml: missing")
	require.Equal(t, []string{"broken"}, r.Models.NotLoaded)
	require.Equal(t, []string{"lenet"}, r.Models.StartupUnknown)
	_, table = runOnce(t, testbin.Gpuletd(t), t.TempDir(), modelsEnv, "doctor")
	require.Contains(t, table, "models             warning: 1 of 2 folder(s) in "+repo+" can be served; broken cannot\n")
	require.Contains(t, table, "fix: gpuletd models check "+repo+" says why\n")
	require.Contains(t, table, "warning: startup_models names lenet, which has no folder there\n")
}

func TestDoctorNamesMissingProviderLibraries(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	// A copy of the core library with stand-in providers beside it: the
	// CUDA one needs a library that is not there, the TensorRT one is no
	// plugin provider.
	dir := t.TempDir()
	core, err := onnxrt.FindLibrary("")
	require.NoError(t, err)
	copyFile(t, core, filepath.Join(dir, onnxrt.LibraryName))
	fakeep.Build(t, dir, onnxrt.CUDAProviderLibrary, fakeep.MissingDependency)
	fakeep.Build(t, dir, onnxrt.TensorRTProviderLibrary, fakeep.NotPlugin)
	// The CUDA libraries' folder is set, mistyped, as a new user might.
	env := daemonEnv(t, "GPULETD_DEVICES=auto", "GPULETD_ONNXRUNTIME_LIBRARY="+filepath.Join(dir, onnxrt.LibraryName),
		"GPULETD_ONNXRUNTIME_CUDA_LIBRARY_DIRS=/opt/torch/.venv/lib/python3.1/site-packages/nvidia/*/lib")

	code, r, out := doctorJSON(t, env)
	require.Equal(t, 0, code, out)
	require.Len(t, r.ConfigWarnings, 1, out)
	require.Contains(t, r.ConfigWarnings[0], `onnxruntime.cuda_library_dirs[0] "/opt/torch/.venv/lib/python3.1/site-packages/nvidia/*/lib" (from env GPULETD_ONNXRUNTIME_CUDA_LIBRARY_DIRS) names no folder`)
	code, text := runOnce(t, testbin.Gpuletd(t), t.TempDir(), env, "doctor")
	require.Equal(t, 0, code, text)
	require.Contains(t, text, "configuration      warning: onnxruntime.cuda_library_dirs[0]")
	byName := map[string]daemon.ProviderCheck{}
	for _, p := range r.Providers {
		byName[p.Name] = p
	}
	cuda := byName["cuda"]
	require.True(t, cuda.Installed)
	require.False(t, cuda.Loads)
	require.Equal(t, fakeep.MissingLibrary, cuda.MissingLibrary)
	require.Contains(t, cuda.Fix, "install")
	trt := byName["tensorrt"]
	require.True(t, trt.Installed)
	require.Contains(t, trt.Error, "CreateEpFactories")
}

func TestDoctorFailsWhenNVIDIAIsDemandedAndAbsent(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	if haveNVIDIADriver() {
		t.Skip("this machine has an NVIDIA driver")
	}
	code, r, out := doctorJSON(t, daemonEnv(t, "GPULETD_DEVICES=nvidia"))
	require.Equal(t, 1, code, out)
	require.False(t, r.OK)
	require.Contains(t, r.Serve.Error, "no NVIDIA GPU available")
	require.Contains(t, out, "gpuletd doctor: the configured devices cannot serve")
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	require.NoError(t, err)
	defer in.Close()
	out, err := os.Create(to)
	require.NoError(t, err)
	_, err = io.Copy(out, in)
	require.NoError(t, err)
	require.NoError(t, out.Close())
}

// TestDoctorTableSaysTheCertificate: the TLS row names the certificate and
// its end, what clients would refuse, and how to fix it.
func TestDoctorTableSaysTheCertificate(t *testing.T) {
	for _, tc := range []struct {
		name string
		tls  daemon.TLSReport
		want []string
	}{
		{"good", daemon.TLSReport{CertFile: "/etc/gpuletd/tls/cert.pem", Subject: "CN=node", NotAfter: time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)},
			[]string{"TLS            /etc/gpuletd/tls/cert.pem, CN=node, valid until 2027-03-01"}},
		{"expiring", daemon.TLSReport{CertFile: "c.pem", Subject: "CN=node", NotAfter: time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC), Warning: "expires in 48h0m0s", Fix: "renew it"},
			[]string{"warning: expires in 48h0m0s", "fix: renew it"}},
		{"broken", daemon.TLSReport{CertFile: "c.pem", Error: "load tls.cert_file c.pem and tls.key_file k.pem: open c.pem: no such file", Fix: "give them"},
			[]string{"TLS            load tls.cert_file c.pem", "fix: give them"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			require.NoError(t, writeDoctor(&b, &daemon.Report{TLS: &tc.tls}))
			for _, w := range tc.want {
				require.Contains(t, b.String(), w)
			}
		})
	}
}

// TestDoctorTableSaysTheCollector: with traces going to a collector, a row
// says whether it takes them, and how to fix it when it does not.
func TestDoctorTableSaysTheCollector(t *testing.T) {
	for _, tc := range []struct {
		name  string
		trace daemon.TraceReport
		want  []string
	}{
		{"taken", daemon.TraceReport{URL: "http://otel:4318/v1/traces", OK: true},
			[]string{"traces         exported to http://otel:4318/v1/traces (the collector takes them)"}},
		{"refused", daemon.TraceReport{URL: "http://otel:4318/v1/trace", Error: "collector answered 404 Not Found", Fix: "point trace.opentelemetry_url at it"},
			[]string{"traces         exported to http://otel:4318/v1/trace, which does not take them: collector answered 404 Not Found", "fix: point trace.opentelemetry_url at it"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			require.NoError(t, writeDoctor(&b, &daemon.Report{Trace: &tc.trace}))
			for _, w := range tc.want {
				require.Contains(t, b.String(), w)
			}
		})
	}
}

// TestDoctorTableSaysTheProviderThatServes: a provider that gave way to
// another is not reported as loading; its row names what serves instead,
// the library it misses and the fix.
func TestDoctorTableSaysTheProviderThatServes(t *testing.T) {
	for _, tc := range []struct {
		name string
		pc   daemon.ProviderCheck
		want []string
	}{
		{"loads", daemon.ProviderCheck{Name: "tensorrt", Library: "/l/trt.so", Installed: true, Loads: true},
			[]string{"provider tensorrt  loads and runs a model (/l/trt.so)"}},
		{"missing library", daemon.ProviderCheck{Name: "tensorrt", Library: "/l/trt.so", Installed: true, FallsBackTo: "cuda",
			Error: "TensorRT cannot be used: libnvinfer.so.10 not found", MissingLibrary: "libnvinfer.so.10", Fix: "install TensorRT 10"},
			[]string{"provider tensorrt  does not load (libnvinfer.so.10 not found): cuda serves alone instead", "fix: install TensorRT 10"}},
		{"other reason", daemon.ProviderCheck{Name: "tensorrt", Library: "/l/trt.so", Installed: true, FallsBackTo: "cuda",
			Error: "TensorRT cannot be used: no device"},
			[]string{"provider tensorrt  does not load: cuda serves alone instead: TensorRT cannot be used: no device"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			require.NoError(t, writeDoctor(&b, &daemon.Report{Providers: []daemon.ProviderCheck{tc.pc}}))
			for _, w := range tc.want {
				require.Contains(t, b.String(), w)
			}
		})
	}
}

// A GPU that is not ok says why under its row; one that is says nothing
// more.
func TestDoctorTableSaysWhyAGPUIsNotOK(t *testing.T) {
	var b strings.Builder
	r := &daemon.Report{Driver: mps.Driver{Loaded: true, GPUs: []mps.Device{
		{ID: "gpu0", Name: "NVIDIA H100 80GB HBM3", UUID: "GPU-1", Health: mps.HealthOK},
		{ID: "gpu1", Name: "NVIDIA H100 80GB HBM3", UUID: "GPU-2", Health: mps.HealthDegraded,
			HealthDetail: "memory rows wait to be remapped after uncorrectable memory errors (2 rows so far)"},
	}}}
	require.NoError(t, writeDoctor(&b, r))
	out := b.String()
	require.Contains(t, out, "health ok\ngpu1 ")
	require.Regexp(t, `health degraded\n +degraded: memory rows wait to be remapped`, out)
}

// doctor says what the state folder's database holds, that a running
// daemon holds it, or that serve would refuse it (exit 1).
func TestDoctorChecksTheDatabase(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	bin := testbin.Gpuletd(t)
	env := daemonEnv(t, "GPULETD_MODEL_REPOSITORY="+t.TempDir())
	state := envValue(env, "GPULETD_STATE_DIR")
	db := filepath.Join(state, store.FileName)
	_, table := runOnce(t, bin, t.TempDir(), env, "doctor")
	require.Contains(t, table, "database           "+db+": none yet (serve makes it)\n")

	_, _, pid := startDaemonUnder(t, env)
	_, table = runOnce(t, bin, t.TempDir(), env, "doctor")
	require.Contains(t, table, "database           "+db+": in use by a running gpuletd (pid "+strconv.Itoa(pid)+"), not read (gpuletd backup copies it)\n")

	broken := daemonEnv(t, "GPULETD_MODEL_REPOSITORY="+t.TempDir())
	bad := filepath.Join(envValue(broken, "GPULETD_STATE_DIR"), store.FileName)
	require.NoError(t, os.WriteFile(bad, []byte("not a database, though its name says so"), 0o600))
	code, table := runOnce(t, bin, t.TempDir(), broken, "doctor")
	require.Equal(t, 1, code, table)
	require.Contains(t, table, "database           "+bad+": serve would refuse it: check database: database file is corrupt: file is not a database\n")
	require.Contains(t, table, "fix: restore a backup (gpuletd restore FILE)")
	require.Contains(t, table, "gpuletd doctor: serve would not start: database "+bad+": ")
}

// TestDoctorTableSaysTheMemory: the host's memory, a limit over doctor
// where there is one, and the database's CPU models against them.
func TestDoctorTableSaysTheMemory(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    daemon.MemoryReport
		want []string
	}{
		{"no limit", daemon.MemoryReport{TotalBytes: 24 << 30},
			[]string{"memory         host 24 GiB; no memory limit over this process (under systemd serve runs in the unit's cgroup: systemctl show gpuletd -p MemoryMax)\n"}},
		{"a limit and measured models", daemon.MemoryReport{TotalBytes: 24 << 30, LimitBytes: 1 << 30, LimitOf: "/gpuletd", CPUModels: 4, CPUModelsBytes: 1800 << 20,
			CPUModelsWithExecutor: 3,
			Warning:               "the database's CPU models need 1.8 GiB together, more than the 1 GiB gpuletd may use here: the plan will leave some out, and say why"},
			[]string{"memory         host 24 GiB; memory limit 1 GiB (cgroup /gpuletd)\n",
				"               the database's CPU models: 4 models measured, 1.8 GiB together (one copy each)\n",
				"               3 of them measured before gpuletd told an executor's own memory apart: each counts it (tens of MB) until `gpuletd profile MODEL --force` measures it again\n",
				"               warning: the database's CPU models need 1.8 GiB together"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			require.NoError(t, writeDoctor(&b, &daemon.Report{Memory: &tc.m}))
			for _, w := range tc.want {
				require.Contains(t, b.String(), w)
			}
		})
	}
}
