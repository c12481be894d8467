package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/internal/customop"
	"github.com/gpulet/gpuletd/internal/dirlock"
	"github.com/gpulet/gpuletd/internal/testbin"
	"github.com/gpulet/gpuletd/modelzoo"
	"github.com/gpulet/gpuletd/profiler"
	"github.com/gpulet/gpuletd/profiler/store"
	"github.com/stretchr/testify/require"
)

// profileEnv is a clean environment for gpuletd profile on the CPU with a
// demo repository; it returns the environment, the repository and the
// store file.
func profileEnv(t *testing.T, models ...string) (env []string, repo, db string) {
	t.Helper()
	repo = filepath.Join(t.TempDir(), "models")
	require.NoError(t, modelzoo.WriteRepository(repo, models, 1))
	state := t.TempDir()
	env = append(daemonEnv(t), "GPULETD_MODEL_REPOSITORY="+repo, "GPULETD_STATE_DIR="+state, "GPULETD_LOG_LEVEL=warn")
	return env, repo, filepath.Join(state, "gpuletd.db")
}

// gpuletd runs the binary and returns its exit code and output.
func gpuletd(t *testing.T, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(testbin.Gpuletd(t), args...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil {
		require.ErrorAs(t, err, &ee, "stderr:\n%s", errb.String())
		return ee.ExitCode(), out.String(), errb.String()
	}
	return 0, out.String(), errb.String()
}

// openProfileStore opens the store a gpuletd profile run wrote.
func openProfileStore(t *testing.T, db string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), db)
	require.NoError(t, err, "the store is intact")
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func TestProfileLeNetOnCPUStoresReusesAndPlots(t *testing.T) {
	if testing.Short() {
		t.Skip("builds gpuletd and starts executors")
	}
	env, repo, db := profileEnv(t, "lenet5")
	svg := filepath.Join(t.TempDir(), "lenet5.svg")
	quick := []string{"--batches", "1,2,4,8", "--max-samples", "300", "--max-time", "3s"}
	code, stdout, stderr := gpuletd(t, env, append([]string{"profile", "lenet5", "--plot", svg}, quick...)...)
	require.Equal(t, 0, code, "stderr:\n%s", stderr)
	require.Contains(t, stdout, "lenet5 on cpu (device type cpu): measured, run 1")
	require.Contains(t, stdout, "executor 50%: onnxruntime, 1 thread(s), cores [")
	require.Contains(t, stdout, "executor 100%: onnxruntime, 2 thread(s), cores [0 1]")
	require.Contains(t, stdout, "fit ℓ(b) = α·b + β")
	require.Contains(t, stdout, "batch 8 (b / L(b,p)): knee")
	require.Contains(t, stdout, "plot written to "+svg)
	require.Contains(t, stderr, "solo 8/8: p=100% b=8", "one progress line per point off a terminal")
	plot, err := os.ReadFile(svg)
	require.NoError(t, err)
	require.Contains(t, string(plot), "<svg")

	file := filepath.Join(repo, "lenet5", "1", "model.onnx")
	sha, err := testDigest(file)
	require.NoError(t, err)
	st := openProfileStore(t, db)
	pts, err := st.Latency(context.Background(), sha, "cpu")
	require.NoError(t, err)
	require.Len(t, pts, 8)
	for _, p := range pts {
		require.True(t, p.Complete)
		require.Positive(t, p.P50MS)
		require.GreaterOrEqual(t, p.Samples, 5)
	}
	util, err := st.Util(context.Background(), sha, "cpu")
	require.NoError(t, err)
	require.Len(t, util, 24)
	for _, u := range util {
		require.True(t, math.IsNaN(u.Value), "no utilisation meter on the CPU: unknown, never 0")
	}

	code, stdout, stderr = gpuletd(t, env, append([]string{"profile", "lenet5"}, quick...)...)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "stored profile reused (--force measures again)")
	require.NotContains(t, stderr, "solo ", "nothing measured")

	code, stdout, stderr = gpuletd(t, env, append([]string{"profile", "lenet5", "--force", "--json"}, quick...)...)
	require.Equal(t, 0, code, stderr)
	var res struct {
		Reused bool   `json:"reused"`
		Source string `json:"source"`
		RunID  int64  `json:"run_id"`
		Points []struct {
			Size, Batch int
			P50         float64  `json:"p50_ms"`
			P99         *float64 `json:"p99_ms"`
		} `json:"points"`
		Fits  []struct{ Size int } `json:"fits"`
		Knees struct {
			SLO *struct{ Knee int } `json:"slo"`
		} `json:"knees"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &res), stdout)
	require.False(t, res.Reused)
	require.Equal(t, "measured", res.Source)
	require.Equal(t, int64(2), res.RunID)
	require.Len(t, res.Points, 8)
	require.Len(t, res.Fits, 2)
	require.NotNil(t, res.Knees.SLO, "lenet5's SLO from config.yaml gives a knee")

	// Beside a daemon (one holding runtime_dir) the profile says that its
	// measurement shares the device, and how to have the daemon use it;
	// a profile reused measures nothing and says neither.
	var runtime string
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "GPULETD_RUNTIME_DIR="); ok {
			runtime = v
		}
	}
	daemon, err := dirlock.Lock(runtime)
	require.NoError(t, err)
	pid := fmt.Sprintf("(pid %d)", os.Getpid())
	code, stdout, stderr = gpuletd(t, env, append([]string{"profile", "lenet5", "--force"}, quick...)...)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stderr, "gpuletd "+pid+" serves from runtime_dir "+runtime+": this profile is measured beside its gpu-lets on cpu")
	require.Contains(t, stdout, "gpuletd "+pid+" places lenet5 with this profile at its next plan; to have it now: gpuletd models load lenet5")
	code, stdout, stderr = gpuletd(t, env, append([]string{"profile", "lenet5"}, quick...)...)
	require.Equal(t, 0, code, stderr)
	require.NotContains(t, stderr, "beside")
	require.NotContains(t, stdout, "next plan")
	require.NoError(t, daemon.Close())

	// A changed model file is profiled again under its new hash.
	require.NoError(t, modelzoo.WriteRepository(repo, []string{"lenet5"}, 2, modelzoo.WithOverwrite()))
	code, stdout, stderr = gpuletd(t, env, append([]string{"profile", "lenet5"}, quick...)...)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "measured, run 4")
	sha2, err := testDigest(file)
	require.NoError(t, err)
	require.NotEqual(t, sha, sha2)
	pts, err = st.Latency(context.Background(), sha2, "cpu")
	require.NoError(t, err)
	require.Len(t, pts, 8)
}

func TestProfileBadInputKeepsTheStoreIntact(t *testing.T) {
	if testing.Short() {
		t.Skip("builds gpuletd and starts executors")
	}
	broken := filepath.Join(t.TempDir(), "broken.onnx")
	require.NoError(t, os.WriteFile(broken, []byte("this is not an ONNX graph"), 0o644))
	tests := []struct {
		name    string
		args    []string
		wantMsg string
		wantRun store.RunStatus // "" when no run may start
	}{
		{"partition the device does not make", []string{"lenet5", "--partitions", "30"}, "30% (cpu allows [50 100])", ""},
		{"batch beyond max_batch_size", []string{"lenet5", "--batches", "1,64"}, "batch 64 exceeds the model's max_batch_size 32", ""},
		{"unknown model", []string{"nope"}, `no model "nope" in the model repositories (`, ""},
		{"misspelt model", []string{"lenet"}, `.onnx file) (did you mean lenet5?)`, ""},
		{"missing file", []string{"/no/such/model.onnx"}, "model file /no/such/model.onnx does not exist", ""},
		{"unknown device", []string{"lenet5", "--device", "gpu7"}, `find device "gpu7": unknown device (devices: [cpu])`, ""},
		{"model that fails to load", []string{broken, "--batches", "1", "--partitions", "50"}, "model failed to load", store.RunFailed},
		{"no mode (usage: exit 2)", []string{}, "requires exactly one of MODEL, --import SET or --knees SET", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, _, db := profileEnv(t, "lenet5")
			code, stdout, stderr := gpuletd(t, env, append([]string{"profile"}, tt.args...)...)
			wantCode := 1
			if strings.Contains(tt.name, "usage") {
				wantCode = 2
			}
			require.Equal(t, wantCode, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
			require.Contains(t, stderr, tt.wantMsg)
			require.Equal(t, 1, strings.Count(strings.TrimSpace(stderr), "\n")+1, "one clear line: %q", stderr)
			if _, err := os.Stat(db); os.IsNotExist(err) {
				require.Empty(t, tt.wantRun)
				return
			}
			st := openProfileStore(t, db)
			runs, err := st.Runs(context.Background(), "", "", 0)
			require.NoError(t, err)
			if tt.wantRun == "" {
				require.Empty(t, runs)
				return
			}
			require.Len(t, runs, 1)
			require.Equal(t, tt.wantRun, runs[0].Status)
			require.Contains(t, runs[0].Message, "model failed to load")
		})
	}
}

func TestProfileCtrlCKeepsWhatWasMeasured(t *testing.T) {
	if testing.Short() {
		t.Skip("builds gpuletd and starts executors")
	}
	env, repo, db := profileEnv(t, "lenet5")
	// Every point samples for 2 s (the time cap), so the run is still busy
	// when the first point is done.
	cmd := exec.Command(testbin.Gpuletd(t), "profile", "lenet5", "--batches", "1,2,4", "--min-samples", "1000000",
		"--max-samples", "1000000", "--max-time", "2s", "--json")
	cmd.Env = env
	var stdout bytes.Buffer
	stderr := &testbin.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	require.NoError(t, cmd.Start())
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(stderr.String(), "solo 1/6") {
		require.True(t, time.Now().Before(deadline), "first point never finished:\n%s", stderr)
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	err := cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	require.Equal(t, 130, ee.ExitCode())
	require.Contains(t, stderr.String(), "profiling interrupted: 1 of 6 points were measured and are kept; run 1 is marked incomplete")
	var partial profiler.Result
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &partial), "--json prints what was measured:\n%s", stdout.String())
	require.True(t, partial.Interrupted)
	require.NotEmpty(t, partial.Points)

	sha, err := testDigest(filepath.Join(repo, "lenet5", "1", "model.onnx"))
	require.NoError(t, err)
	st := openProfileStore(t, db)
	runs, err := st.Runs(context.Background(), sha, "cpu", 0)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	require.Equal(t, store.RunIncomplete, runs[0].Status)
	pts, err := st.Latency(context.Background(), sha, "cpu")
	require.NoError(t, err)
	require.Len(t, pts, 2, "the finished point and the one cut short")
	require.True(t, pts[0].Complete)
	require.False(t, pts[1].Complete)
	require.Positive(t, pts[1].Samples)
}

func TestProfileEmulatedImportKneesAndBench(t *testing.T) {
	if testing.Short() {
		t.Skip("builds gpuletd")
	}
	env, _, db := profileEnv(t, "lenet5")
	env = append(env, "GPULETD_DEVICES=[{kind: emulated, profiles: igniter-v100, count: 1}]")
	code, stdout, stderr := gpuletd(t, env, "profile", "lenet5", "--device", "emu0", "--batches", "1,8,32", "--pairs")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "lenet5 on emu0 (device type igniter-v100): emulated:igniter-v100, run 1")
	require.Contains(t, stdout, "co-located with itself (emulated:igniter-v100)")
	require.Contains(t, stdout, "solo utilisation")

	code, stdout, stderr = gpuletd(t, env, "profile", "--import", "igniter-v100")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "imported igniter-v100 as device type igniter-v100 into "+db+": 4 models")
	require.Contains(t, stdout, "750 co-locations")

	code, stdout, stderr = gpuletd(t, env, "profile", "--knees", "igniter-v100", "--json")
	require.Equal(t, 0, code, stderr)
	var knees struct {
		Set    string `json:"set"`
		Models []struct {
			Model   string `json:"model"`
			Batches []struct {
				Batch int `json:"batch"`
				Curve struct {
					Knee int `json:"knee"`
				} `json:"curve"`
			} `json:"batches"`
		} `json:"models"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &knees))
	require.Len(t, knees.Models, 4)
	require.Equal(t, 8, knees.Models[0].Batches[0].Batch)
	require.Equal(t, 32, knees.Models[0].Batches[1].Batch)

	code, stdout, stderr = gpuletd(t, env, "bench", "interference", "--json")
	require.Equal(t, 0, code, stderr)
	var rep map[string]map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
	for _, side := range []string{"paper", "best"} {
		for _, split := range []string{"lomo", "random"} {
			q, ok := rep[side][split].(map[string]any)
			require.True(t, ok, "%s.%s in %s", side, split, stdout)
			for _, k := range []string{"p50", "p90", "p95"} {
				v, ok := q[k].(float64)
				require.True(t, ok)
				require.Greater(t, v, 0.0)
				require.Less(t, v, 0.2, "errors are fractions")
			}
		}
	}
	require.NotEmpty(t, rep["best"]["name"])
	code, stdout, _ = gpuletd(t, env, "bench", "interference")
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "paper")
	require.Contains(t, stdout, "%")
}

// testDigest is the sha256 the daemon keys a model file's profiles on.
func testDigest(path string) (string, error) {
	d, err := repository.DigestFile(path, repository.PlatformONNX)
	return d.SHA256, err
}

// A model folder given by path is profiled with the custom operator
// libraries its config.pbtxt names, under the digest the daemon serves it
// by (the libraries' bytes in it); its bare file, which has no
// configuration to name them, fails saying to give the folder.
func TestProfileAModelFolderLoadsItsCustomOperators(t *testing.T) {
	if testing.Short() {
		t.Skip("builds gpuletd and starts executors")
	}
	env, _, db := profileEnv(t)
	dir := t.TempDir()
	require.NoError(t, modelzoo.WriteRepository(dir, []string{modelzoo.CustomOpModel}, 1, modelzoo.AsTriton()))
	folder := filepath.Join(dir, modelzoo.CustomOpModel)
	customop.Build(t, folder, modelzoo.CustomOpLibrary, customop.AddOne)
	quick := []string{"--batches", "1,2", "--max-samples", "50", "--max-time", "1s"}

	code, stdout, stderr := gpuletd(t, env, append([]string{"profile", folder}, quick...)...)
	require.Equal(t, 0, code, "stderr:\n%s", stderr)
	require.Contains(t, stdout, modelzoo.CustomOpModel+" on cpu (device type cpu): measured, run 1")
	require.NotContains(t, stdout, "gpuletd models load", "a folder outside the daemon's repository")
	m, err := repository.Load(repository.Roots{dir}, modelzoo.CustomOpModel, repository.Options{Read: repository.ReadONNXInterface, DefaultSLO: time.Second})
	require.NoError(t, err)
	pts, err := openProfileStore(t, db).Latency(context.Background(), m.SHA256, "cpu")
	require.NoError(t, err)
	require.NotEmpty(t, pts, "stored under the digest that counts the libraries")

	code, _, stderr = gpuletd(t, env, append([]string{"profile", filepath.Join(folder, "1", "model.onnx")}, quick...)...)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "is not a registered function/op")
	require.Contains(t, stderr, "; to load the libraries its config.pbtxt names, profile the model folder: gpuletd profile "+folder+"\n")
}
