package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/internal/customop"
	"github.com/gpulet/gpuletd/internal/testbin"
	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
	"github.com/gpulet/gpuletd/modelzoo"
)

// TestCustomOperatorModelServes serves a model whose graph uses an
// operator of its own, registered by the library its config.pbtxt names
// (Triton's model_operations): the answers are the operator's; the
// configuration, `models show` and `models check` say which library;
// a folder whose configuration names none is refused by `models check`
// with ONNX Runtime's reason, and by the daemon saying why; a load request
// that carries a configuration naming one is refused, the model serving on;
// a new graph optimization level loads it anew; a library that crashes the
// process loading it, and a request on which the operator crashes, cost
// an executor, which says what the crash was, and nothing else.
func TestCustomOperatorModelServes(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	repo, folder, lib := customOpRepo(t)
	cfgFile := filepath.Join(folder, "config.pbtxt")
	cfgText, err := os.ReadFile(cfgFile)
	require.NoError(t, err)
	// The same model without its library named: ONNX Runtime cannot open it.
	bare := filepath.Join(repo, "bare")
	require.NoError(t, os.MkdirAll(filepath.Join(bare, "1"), 0o755))
	onnx, err := os.ReadFile(filepath.Join(folder, "1", "model.onnx"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(bare, "1", "model.onnx"), onnx, 0o644))
	bareCfg := strings.Replace(strings.Replace(string(cfgText), `name: "add-one"`, `name: "bare"`, 1), `model_operations { op_library_filename: [ "libaddone.so" ] }`, "", 1)
	require.NoError(t, os.WriteFile(filepath.Join(bare, "config.pbtxt"), []byte(bareCfg), 0o644))
	// The same model with a library that crashes the process loading it.
	crashing := filepath.Join(repo, "crashing")
	require.NoError(t, os.MkdirAll(filepath.Join(crashing, "1"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(crashing, "1", "model.onnx"), onnx, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(crashing, "config.pbtxt"), []byte(strings.Replace(string(cfgText), `name: "add-one"`, `name: "crashing"`, 1)), 0o644))
	crashLib := customop.Build(t, crashing, modelzoo.CustomOpLibrary, customop.Crashing)

	// The binary itself: models check opens a model with custom operators
	// in a child of the binary it runs.
	code, out := runOnce(t, testbin.Gpuletd(t), t.TempDir(), daemonEnv(t), "models", "check", repo)
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "crashing: BROKEN: invalid model: "+filepath.Join(crashing, "1", "model.onnx")+
		": open the model with its custom operator libraries: the process opening it crashed: SIGSEGV: segmentation violation (in C code: ONNX Runtime or a library it loaded)\n",
		"a library that crashes fails its model's check, not the check")
	require.Contains(t, out, "add-one: onnxruntime: custom operators from "+lib+"\n")
	require.Contains(t, out, "bare: BROKEN: invalid model: "+filepath.Join(bare, "1", "model.onnx")+": ")
	require.Contains(t, out, modelzoo.CustomOpName+"(-1) is not a registered function/op (an operator of no standard set")

	grpcAddr := freeAddr(t)
	addr, logs := startDaemon(t, daemonEnv(t, "GPULETD_MODEL_REPOSITORY="+repo, "GPULETD_GRPC_LISTEN="+grpcAddr, "GPULETD_DEFAULT_SLO=1s",
		"GPULETD_SCHEDULER_HANG_TIMEOUT=1s"))
	base := "http://" + addr
	model := base + "/v2/models/" + modelzoo.CustomOpModel
	require.Eventually(t, func() bool { return do(t, "GET", model+"/ready", nil, nil).code == 200 },
		2*time.Minute, 200*time.Millisecond, "logs:\n%s", logs)
	// infer sends a good request; a refusal for its deadline, which a
	// machine running every test at once under the race detector can
	// cause (its batches run several times slower than profiled), is sent
	// again, a few times.
	infer := func() []float32 {
		body := []byte(`{"inputs":[{"name":"INPUT","datatype":"FP32","shape":[2,4],"data":[0,1,2,3,-4,-5,0.5,7]}]}`)
		r := do(t, "POST", model+"/infer", body, nil)
		for try := 0; try < 10 && r.code == http.StatusServiceUnavailable && strings.Contains(string(r.body), "deadline_unreachable"); try++ {
			time.Sleep(300 * time.Millisecond)
			r = do(t, "POST", model+"/infer", body, nil)
		}
		require.Equal(t, 200, r.code, string(r.body))
		var resp struct {
			Outputs []struct {
				Data []float32 `json:"data"`
			} `json:"outputs"`
		}
		require.NoError(t, json.Unmarshal(r.body, &resp))
		require.Len(t, resp.Outputs, 1)
		return resp.Outputs[0].Data
	}
	want := []float32{1, 2, 3, 4, -3, -4, 1.5, 8}
	require.Equal(t, want, infer())

	// The model the runtime cannot open says why where an operator looks.
	require.Eventually(t, func() bool {
		for _, m := range getStatus(t, base).Models {
			if m.Name == "bare" && strings.Contains(m.Reason, modelzoo.CustomOpName+"(-1) is not a registered function/op (an operator of no standard set: name the library") {
				return true
			}
		}
		return false
	}, time.Minute, 200*time.Millisecond, "bare says why it is not served; logs:\n%s", logs)
	r := do(t, "POST", base+"/v2/models/bare/infer", []byte(`{"inputs":[{"name":"INPUT","datatype":"FP32","shape":[1,4],"data":[0,1,2,3]}]}`), nil)
	require.Equal(t, http.StatusServiceUnavailable, r.code)
	require.Contains(t, string(r.body), modelzoo.CustomOpName)

	// A library that crashes the executor loading it: the profile's executor
	// crashed, not the daemon, and the model says what the crash was and
	// which library ran there.
	require.Eventually(t, func() bool {
		for _, m := range getStatus(t, base).Models {
			if m.Name == "crashing" && m.Reason != "" {
				return true
			}
		}
		return false
	}, time.Minute, 200*time.Millisecond, "crashing says why it is not served; logs:\n%s", logs)
	for _, m := range getStatus(t, base).Models {
		if m.Name == "crashing" {
			require.Contains(t, m.Reason, "executor crashed: SIGSEGV: segmentation violation (in C code: ONNX Runtime or a library it loaded) (the model's custom operator libraries run there: "+crashLib+")")
		}
	}
	require.Equal(t, want, infer(), "the others serve on")

	// A request on which the operator crashes (as one with a bug does):
	// answered at once with an error, the executor restarted and said to
	// have crashed, and the next requests served. It ran in a batch of its
	// own: quarantined at once, and from then on refused at the door, with
	// no crash; the others serve on.
	poison := do(t, "POST", model+"/infer", []byte(fmt.Sprintf(`{"inputs":[{"name":"INPUT","datatype":"FP32","shape":[1,4],"data":[%d,0,0,0]}]}`, customop.Poison)), nil)
	require.Equal(t, http.StatusServiceUnavailable, poison.code, string(poison.body))
	require.Contains(t, string(poison.body), "the executor serving it failed while the request was in flight")
	restart := waitEvent(t, base, "executor_restart", 30*time.Second, func(e historyEvent) bool { return e.Attrs["cause"] == "crash" }, logs)
	require.Equal(t, "executor crashed: SIGSEGV: segmentation violation (in C code: ONNX Runtime or a library it loaded); restarting it", restart.Message)
	require.Equal(t, "exit status 2", restart.Attrs["exit"])
	quarantined := waitEvent(t, base, "request_quarantined", 30*time.Second, func(historyEvent) bool { return true }, logs)
	require.Equal(t, modelzoo.CustomOpModel, quarantined.Attrs["model"])
	require.Contains(t, quarantined.Message, "crashed or hung its executor, or faulted its GPU, in a run of its own")
	require.Eventually(t, func() bool { return do(t, "GET", model+"/ready", nil, nil).code == 200 }, time.Minute, 100*time.Millisecond)
	crashes := func() int {
		var evs []historyEvent
		require.NoError(t, json.Unmarshal(do(t, "GET", base+"/api/v1/events?limit=1000&kind=executor_restart", nil, nil).body, &evs))
		n := 0
		for _, e := range evs {
			if e.Attrs["cause"] == "crash" {
				n++
			}
		}
		return n
	}
	before := crashes()
	for range 3 {
		poison = do(t, "POST", model+"/infer", []byte(fmt.Sprintf(`{"inputs":[{"name":"INPUT","datatype":"FP32","shape":[1,4],"data":[%d,0,0,0]}]}`, customop.Poison)), nil)
		require.Equal(t, http.StatusBadRequest, poison.code, string(poison.body))
		require.Contains(t, string(poison.body), "refused: this request (the same inputs) crashed or hung the model's executor, or faulted its GPU, in a run of its own")
	}
	require.Equal(t, want, infer())
	require.Equal(t, before, crashes(), "no more crashes")
	code, out, stderr := runCLI(t, "models", "show", modelzoo.CustomOpModel, "--url", base)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, oneSpaced(out), "quarantined requests: 1, each refused for a while since it crashed or hung the executor, or faulted its GPU, in a run of its own", "the row may wrap:\n%s", out)
	require.Contains(t, string(do(t, "GET", base+"/metrics", nil, nil).body),
		`gpuletd_request_failures_total{model="`+modelzoo.CustomOpModel+`",reason="crashes_executor"} 3`)

	// A request on which the operator never returns (as one whose bug
	// loops): unanswered well past its deadline, the same request is
	// refused, twin_hung, until its executor exits once the run is past
	// hang_timeout and is restarted, saying so; it ran alone, so it is
	// quarantined then. The others serve on throughout.
	hang := []byte(fmt.Sprintf(`{"inputs":[{"name":"INPUT","datatype":"FP32","shape":[1,4],"data":[%d,0,0,0]}]}`, customop.Hang))
	hung := func() historyEvent {
		t.Helper()
		return waitEvent(t, base, "executor_restart", 30*time.Second, func(e historyEvent) bool { return e.Attrs["cause"] == "hang" }, logs)
	}
	r = do(t, "POST", model+"/infer", hang, nil)
	require.Equal(t, http.StatusServiceUnavailable, r.code, string(r.body))
	require.Contains(t, string(r.body), "no answer by the deadline")
	r = do(t, "POST", model+"/infer", hang, nil)
	require.Equal(t, http.StatusServiceUnavailable, r.code, string(r.body))
	require.Contains(t, string(r.body), "refused for now: the same request (the same inputs) got no answer even well past its deadline")
	require.Equal(t, want, infer(), "the other gpu-let serves meanwhile")
	first := hung()
	require.Contains(t, first.Message, "executor stopped: a run did not end (")
	require.Contains(t, first.Message, "a batch of 1 of add-one has run for")
	require.Contains(t, first.Message, "its run does not end (a custom operator that loops or waits for good, a deadlock)); restarting it")
	waitEvent(t, base, "request_quarantined", 30*time.Second, func(e historyEvent) bool {
		return e.Attrs["inputs_sha256"] != quarantined.Attrs["inputs_sha256"]
	}, logs)
	require.Eventually(t, func() bool { return do(t, "GET", model+"/ready", nil, nil).code == 200 }, time.Minute, 100*time.Millisecond)
	r = do(t, "POST", model+"/infer", hang, nil)
	require.Equal(t, http.StatusBadRequest, r.code, string(r.body))
	require.Contains(t, string(r.body), "crashed or hung the model's executor, or faulted its GPU, in a run of its own")
	require.Equal(t, want, infer())

	// The configuration gives the library as configured, over both
	// protocols; `models show` names its path, and not the failed profile
	// of the folder whose file is the same.
	cfg := do(t, "GET", model+"/config", nil, nil)
	require.Contains(t, string(cfg.body), `"model_operations":{"op_library_filename":["libaddone.so"]}`)
	c, ctx := inferenceClient(t, grpcAddr, time.Minute)
	mc, err := c.ModelConfig(ctx, &pb.ModelConfigRequest{Name: modelzoo.CustomOpModel})
	require.NoError(t, err)
	require.Equal(t, []string{modelzoo.CustomOpLibrary}, mc.GetConfig().GetModelOperations().GetOpLibraryFilename())
	code, out, stderr = runCLI(t, "models", "show", modelzoo.CustomOpModel, "--url", base)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, oneSpaced(out), "onnxruntime custom operators from "+lib+" ready yes", "the row may wrap")
	require.NotContains(t, out, "bare", "the same file without its library has profiles of its own")
	require.Contains(t, out, " (of the file with how ONNX Runtime opens it, below)\n", "the sha256 row says it is not the file's own")

	// A load request's configuration may not name a library: refused, the
	// model serving on.
	code, _, stderr = runCLI(t, "models", "load", modelzoo.CustomOpModel, "--from", folder, "--url", base)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "a load request's configuration may not name custom operator libraries")
	require.Contains(t, stderr, "serves on as it was loaded before")
	require.Equal(t, want, infer())

	// Basic graph optimizations only: loaded anew, the same answers.
	require.NoError(t, os.WriteFile(cfgFile, append(cfgText, []byte("optimization { graph { level: -1 } }\n")...), 0o644))
	code, _, stderr = runCLI(t, "models", "load", modelzoo.CustomOpModel, "--url", base)
	require.Equal(t, 0, code, stderr)
	code, out, stderr = runCLI(t, "models", "show", modelzoo.CustomOpModel, "--url", base)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, oneSpaced(out), "onnxruntime custom operators from "+lib+"; basic graph optimizations only ready yes")
	cfg = do(t, "GET", model+"/config", nil, nil)
	require.Contains(t, string(cfg.body), `"optimization":{"graph":{"level":-1}}`)
	require.Equal(t, want, infer())
}

// oneSpaced is s with every run of white space one space: a table's
// wrapped row on one line.
func oneSpaced(s string) string { return strings.Join(strings.Fields(s), " ") }

// customOpRepo is a Triton repository holding the custom operator model
// (modelzoo.CustomOpModel) in folder, its AddOne library lib built there.
func customOpRepo(t *testing.T) (repo, folder, lib string) {
	t.Helper()
	repo = filepath.Join(t.TempDir(), "models")
	require.NoError(t, modelzoo.WriteRepository(repo, []string{modelzoo.CustomOpModel}, 1, modelzoo.AsTriton()))
	folder = filepath.Join(repo, modelzoo.CustomOpModel)
	return repo, folder, customop.Build(t, folder, modelzoo.CustomOpLibrary, customop.AddOne)
}
