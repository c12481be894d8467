package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/modelzoo"
)

// TestModelsCheck: `gpuletd models check` reads a repository as serve does,
// without a daemon: the folders that serve with their SLO, batch and
// tensors, the broken ones with why (a pipeline whose step is broken among
// them), exit 1 while any is broken and 0 once the configuration mends it.
func TestModelsCheck(t *testing.T) {
	repo := filepath.Join(t.TempDir(), "models")
	require.NoError(t, modelzoo.WriteRepository(repo, []string{"lenet5", "tokens"}, 1))
	require.NoError(t, os.MkdirAll(filepath.Join(repo, "broken", "1"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(repo, "broken", "config.yaml"), []byte("slo: 10ms\nmax_batch_size: 4\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(repo, "broken", "1", "model.onnx"), []byte("junk"), 0o644))

	code, out, stderr := runCLI(t, "models", "check", repo)
	require.Equal(t, 1, code, stderr)
	require.Contains(t, out, "lenet5  1        5ms (config.yaml)   32         input FP32[1 28 28]             output FP32[10]\n")
	require.Contains(t, out, "tokens  1        20ms (config.yaml)  8          ids INT64[-1] profiled at [32]  embedded FP32[-1 4], pooled FP32[4]\n",
		"an input's dynamic dims say the size they are profiled at")
	require.Contains(t, out, "broken: BROKEN: invalid model: "+filepath.Join(repo, "broken", "1", "model.onnx")+": invalid onnx model")
	require.Contains(t, out, "2 of 3 folder(s) in "+repo+" can be served; broken cannot\n")
	require.Contains(t, stderr, "gpuletd models check: 1 of 3 folder(s) in "+repo+" cannot be served")

	// The demo pipeline's step models take their SLO from default_slo.
	pipes := filepath.Join(t.TempDir(), "pipes")
	code, _, stderr = runCLI(t, "models", "synth", pipes, "--pipeline", "50ms")
	require.Equal(t, 0, code, stderr)
	code, out, _ = runCLI(t, "models", "check", pipes, "--json")
	require.Equal(t, 1, code)
	var r repoCheck
	require.NoError(t, json.Unmarshal([]byte(out), &r), out)
	require.Equal(t, 4, r.Folders)
	require.Contains(t, r.Broken["spotter"], "slo: missing")
	require.Equal(t, "its step spotter is broken, so the pipeline cannot run", r.Broken["spot-and-label"])
	for _, m := range r.Models {
		require.NotEqual(t, "spot-and-label", m.Name, "a broken pipeline is not listed among what serves")
	}

	conf := filepath.Join(t.TempDir(), "gpuletd.yaml")
	require.NoError(t, os.WriteFile(conf, []byte("default_slo: 25ms\nstartup_models: [labeler, labeller]\n"), 0o644))
	code, out, stderr = runCLI(t, "--config", conf, "models", "check", pipes)
	require.Equal(t, 0, code, "%s%s", out, stderr)
	require.Contains(t, out, "labeler         1        25ms (default_slo)")
	require.Contains(t, out, "spot-and-label  1        50ms (config.pbtxt parameters)  1          pipeline: spotter -> labeler")
	require.Contains(t, out, "4 folder(s) in "+pipes+", all can be served\n")
	require.Contains(t, out, "not served at start (startup_models): labeler-lite, spot-and-label, spotter\n")
	require.Contains(t, out, "warning: startup_models names labeller, which has no folder there\n")
	require.NotContains(t, out, "max_request_body")

	// A model whose smallest request is above limits.max_request_body
	// serves, with a warning that says so.
	small := filepath.Join(t.TempDir(), "gpuletd.yaml")
	require.NoError(t, os.WriteFile(small, []byte("limits:\n  max_request_body: 2KiB\n"), 0o644))
	code, out, stderr = runCLI(t, "--config", small, "models", "check", pipes)
	require.Equal(t, 1, code, "%s%s", out, stderr) // spotter has no SLO without default_slo
	code, out, stderr = runCLI(t, "--config", small, "models", "check", filepath.Join(repo, "..", "models"), "--json")
	require.Equal(t, 1, code, stderr) // broken is still broken
	r = repoCheck{}
	require.NoError(t, json.Unmarshal([]byte(out), &r), out)
	require.Equal(t, map[string]string{"lenet5": `every request is refused: input "input" alone takes 3136 bytes in a request of one row, above limits.max_request_body (2048 bytes), which bounds a request body, a gRPC message and an input read from shared memory; raise the limit`}, r.Warnings)
}

// TestModelsCheckSeveralRepositories: models check reads several
// repositories as one, as serve reads model_repository with
// extra_model_repositories: a name two of them hold serves from neither.
func TestModelsCheckSeveralRepositories(t *testing.T) {
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	require.NoError(t, modelzoo.WriteRepository(a, []string{"lenet5", "mlp"}, 1))
	require.NoError(t, modelzoo.WriteRepository(b, []string{"tokens", "mlp"}, 1))
	code, out, stderr := runCLI(t, "models", "check", a, b)
	require.Equal(t, 1, code, stderr)
	require.Contains(t, out, "lenet5  1")
	require.Contains(t, out, "tokens  1")
	require.Contains(t, out, "mlp: BROKEN: invalid model: model folder in more than one model repository: "+filepath.Join(a, "mlp")+" and "+filepath.Join(b, "mlp"))
	require.Contains(t, out, "2 of 3 folder(s) in "+a+" and "+b+" can be served; mlp cannot\n")

	// The configured ones, without DIR.
	require.NoError(t, os.RemoveAll(filepath.Join(b, "mlp")))
	conf := filepath.Join(t.TempDir(), "gpuletd.yaml")
	require.NoError(t, os.WriteFile(conf, []byte("model_repository: "+a+"\nextra_model_repositories: ["+b+"]\n"), 0o644))
	code, out, stderr = runCLI(t, "--config", conf, "models", "check", "--json")
	require.Equal(t, 0, code, "%s%s", out, stderr)
	var r repoCheck
	require.NoError(t, json.Unmarshal([]byte(out), &r), out)
	require.Equal(t, []string{a, b}, r.Paths)
	require.Equal(t, 3, r.Folders)
}

// TestModelsCheckStatefulModel: a stateful model's check lists the tensors
// its requests give and says which gpuletd fills.
func TestModelsCheckStatefulModel(t *testing.T) {
	repo := filepath.Join(t.TempDir(), "models")
	require.NoError(t, modelzoo.WriteRepository(repo, []string{modelzoo.SequenceModel}, 1))
	code, out, stderr := runCLI(t, "models", "check", repo)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "  INPUT FP32[4]  OUTPUT FP32[4], SEQUENCE UINT64[1]\n")
	require.Contains(t, out, "running-sum: stateful (sequence_batching): requests give sequence_id; gpuletd fills START, CORRID, ACC; at most 4096 sequences live, each ended after 5s idle\n")

	code, out, _ = runCLI(t, "models", "check", repo, "--json")
	require.Equal(t, 0, code)
	var r repoCheck
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.Equal(t, &checkedSequences{Controls: []string{"START", "CORRID"}, States: []string{"ACC"}, MaxLive: 4096, Idle: "5s"}, r.Models[0].Sequences)
}

// A model's priority levels and queue policies are said by its check, in
// text and JSON.
func TestModelsCheckPriorityLevels(t *testing.T) {
	repo := filepath.Join(t.TempDir(), "models")
	require.NoError(t, modelzoo.WriteRepository(repo, []string{"lenet5"}, 1))
	require.NoError(t, os.WriteFile(filepath.Join(repo, "lenet5", "config.pbtxt"),
		[]byte("dynamic_batching { priority_levels: 3 default_priority_level: 2 priority_queue_policy { key: 3 value { max_queue_size: 5 } } }\n"), 0o644))
	code, out, stderr := runCLI(t, "models", "check", repo)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "lenet5: priority: 3 levels, 1 the highest; a request that names none is at level 2; at overload the lower levels give way\n")
	require.Contains(t, out, "lenet5: queue policy: level 3: at most 5 being served at once\n")
	code, out, _ = runCLI(t, "models", "check", repo, "--json")
	require.Equal(t, 0, code)
	var r repoCheck
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.Equal(t, 3, r.Models[0].PriorityLevels)
	require.Equal(t, 2, r.Models[0].DefaultPriority)
	require.Equal(t, []repository.QueuePolicyStatus{{Level: 3, TimeoutAction: "REJECT", MaxQueueSize: 5}}, r.Models[0].QueuePolicies)
}

// TestModelsCheckPerGPUModelFiles: cc_model_filenames chooses the file by
// the GPUs' compute capability; --compute-capability reads the folders as
// on such GPUs, and on this machine (no NVIDIA GPU) the default serves.
func TestModelsCheckPerGPUModelFiles(t *testing.T) {
	zoo := filepath.Join(t.TempDir(), "zoo")
	require.NoError(t, modelzoo.WriteRepository(zoo, []string{"lenet5", "tokens"}, 1))
	repo := filepath.Join(t.TempDir(), "models")
	require.NoError(t, os.MkdirAll(filepath.Join(repo, "net", "1"), 0o755))
	for from, to := range map[string]string{"lenet5": "model.onnx", "tokens": "tokens_h100.onnx"} {
		b, err := os.ReadFile(filepath.Join(zoo, from, "1", "model.onnx"))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(repo, "net", "1", to), b, 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(repo, "net", "config.pbtxt"),
		[]byte(`parameters { key: "slo" value { string_value: "20ms" } }
cc_model_filenames [ { key: "9.0" value: "tokens_h100.onnx" }, { key: "8.0" value: "net_a100.onnx" } ]
`), 0o644))

	code, out, stderr := runCLI(t, "models", "check", repo)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "input FP32[1 28 28]", "the default file: lenet5's")
	require.Contains(t, out, "net: cc_model_filenames: no NVIDIA GPU serves here: the default model file (the platform's: model.onnx or model.pt) is served\n")

	code, out, stderr = runCLI(t, "models", "check", repo, "--compute-capability", "9.0", "--json")
	require.Equal(t, 0, code, stderr)
	var r repoCheck
	require.NoError(t, json.Unmarshal([]byte(out), &r), out)
	require.Equal(t, "1/tokens_h100.onnx", r.Models[0].File)
	require.Equal(t, "ids", r.Models[0].Inputs[0].Name, "the H100's file: the tokens model's")
	require.Contains(t, r.Models[0].Notes, "cc_model_filenames: the GPUs here are of compute capability 9.0: tokens_h100.onnx is served")

	code, out, _ = runCLI(t, "models", "check", repo, "--compute-capability", "8.0")
	require.Equal(t, 1, code)
	require.Contains(t, out, `net: BROKEN: invalid model: `+filepath.Join(repo, "net", "1")+`: no net_a100.onnx (cc_model_filenames["8.0"])`)

	code, out, stderr = runCLI(t, "models", "check", repo, "--compute-capability", "")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "net: cc_model_filenames: no NVIDIA GPU serves here", `"" reads the folders as on no GPU`)

	code, _, stderr = runCLI(t, "models", "check", repo, "--compute-capability", "h100")
	require.NotEqual(t, 0, code)
	require.Contains(t, stderr, `--compute-capability "h100": give major.minor`)
}
