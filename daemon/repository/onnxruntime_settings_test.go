package repository

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// lenetWith is the fake LeNet-like model's config.pbtxt named name, with
// more fields.
func lenetWith(name, more string) string {
	return strings.Replace(tritonLenet, `"bad"`, `"`+name+`"`, 1) + more
}

// TestModelOperations: model_operations names custom operator libraries,
// in the model folder or by absolute path; a library that is not there,
// or not a file of the folder, makes the model invalid, naming it.
func TestModelOperations(t *testing.T) {
	abs := filepath.Join(t.TempDir(), "libshared.so")
	require.NoError(t, os.WriteFile(abs, []byte("elf"), 0o644))
	v1 := map[string]string{"1/model.onnx": "onnx", "libops.so": "elf", "ops/libmore.so": "elf"}
	ops := func(libs ...string) string {
		return `model_operations { op_library_filename: ["` + strings.Join(libs, `", "`) + `"] }` + "\n"
	}
	root := writeRepo(t, map[string]entry{
		"local":    pbtxtEntry(lenetWith("local", ops("libops.so", "ops/libmore.so", abs)), v1),
		"missing":  pbtxtEntry(lenetWith("missing", ops("ops/libgone.so")), v1),
		"system":   pbtxtEntry(lenetWith("system", ops("libsystemwide.so")), v1),
		"outside":  pbtxtEntry(lenetWith("outside", ops("../local/libops.so")), v1),
		"folder":   pbtxtEntry(lenetWith("folder", ops("ops")), v1),
		"empty":    pbtxtEntry(lenetWith("empty", ops("")), v1),
		"twice":    pbtxtEntry(lenetWith("twice", ops("libops.so", "libops.so")), v1),
		"pipeline": pbtxtEntry(`name: "pipeline" platform: "ensemble" input [ { name: "x", data_type: TYPE_FP32, dims: [ 1 ] } ] output [ { name: "y", data_type: TYPE_FP32, dims: [ 1 ] } ] ensemble_scheduling { step [ { model_name: "local", model_version: -1, input_map { key: "input", value: "x" }, output_map { key: "output", value: "y" } } ] } `+ops("libops.so"), nil),
	})
	ix, err := Scan(Roots{root}, Options{Read: fakeReader, DefaultSLO: time.Second})
	require.NoError(t, err)
	m, err := ix.Get("local")
	require.NoError(t, err)
	require.Equal(t, []string{"libops.so", "ops/libmore.so", abs}, m.Config.OpLibraries, "as configured")
	require.Equal(t, []string{filepath.Join(root, "local", "libops.so"), filepath.Join(root, "local", "ops", "libmore.so"), abs}, m.OpLibraries)
	require.Empty(t, m.Notes)
	// A bare name not in the folder is the dynamic loader's to find.
	sys, err := ix.Get("system")
	require.NoError(t, err)
	require.Equal(t, []string{"libsystemwide.so"}, sys.OpLibraries)
	require.Equal(t, []string{"model_operations: libsystemwide.so is not in the model folder: the executors' dynamic loader looks for it (LD_LIBRARY_PATH, the system's library folders), and its bytes do not count in the model's digest"}, sys.Notes)

	for name, want := range map[string]string{
		"missing":  filepath.Join(root, "missing", "ops", "libgone.so") + ": the custom operator library model_operations names: no such file or directory",
		"outside":  `model_operations: "../local/libops.so" is neither an absolute path nor a file in the model folder`,
		"folder":   filepath.Join(root, "folder", "ops") + ": the custom operator library model_operations names: not a regular file",
		"empty":    "model_operations.op_library_filename[0]: empty",
		"twice":    `model_operations.op_library_filename[1]: "libops.so" is named twice`,
		"pipeline": "model_operations: a pipeline runs no graph of its own",
	} {
		require.ErrorIs(t, ix.Broken[name], ErrInvalidModel, name)
		require.ErrorContains(t, ix.Broken[name], want, name)
	}

	// Open sees each version's file with its libraries, and its refusal
	// makes the model invalid with its reason.
	var opened [][]string
	open := func(path string, libs []string) error {
		opened = append(opened, append([]string{path}, libs...))
		if strings.Contains(path, "refused") {
			return errors.New("AddOne is not a registered function/op")
		}
		return nil
	}
	root = writeRepo(t, map[string]entry{
		"ok":      pbtxtEntry(lenetWith("ok", ops("libops.so")), v1),
		"refused": pbtxtEntry(lenetWith("refused", ""), v1),
	})
	ix, err = Scan(Roots{root}, Options{Read: fakeReader, DefaultSLO: time.Second, Open: open})
	require.NoError(t, err)
	require.Equal(t, []string{"ok"}, ix.Names())
	require.ErrorContains(t, ix.Broken["refused"], "AddOne is not a registered function/op")
	require.ElementsMatch(t, [][]string{
		{filepath.Join(root, "ok", "1", "model.onnx"), filepath.Join(root, "ok", "libops.so")},
		{filepath.Join(root, "refused", "1", "model.onnx")},
	}, opened)
}

// TestModelOperationsOverALoadRequest: a load request's configuration may
// not name libraries (their code would run in the executors), with or
// without files; the same folder's own config.pbtxt may.
func TestModelOperationsOverALoadRequest(t *testing.T) {
	root := writeRepo(t, map[string]entry{
		"m": pbtxtEntry(lenetWith("m", `model_operations { op_library_filename: "libops.so" }`), map[string]string{"1/model.onnx": "onnx", "libops.so": "elf"}),
	})
	_, err := Load(Roots{root}, "m", Options{Read: fakeReader, DefaultSLO: time.Second})
	require.NoError(t, err)
	_, err = Load(Roots{root}, "m", Options{Read: fakeReader, DefaultSLO: time.Second,
		Override: []byte(`{"max_batch_size": 8, "model_operations": {"op_library_filename": ["libops.so"]}}`)})
	require.ErrorIs(t, err, ErrInvalidModel)
	require.ErrorIs(t, err, ErrOpLibrariesOverLoad)
	require.ErrorContains(t, err, "load request config of m: model_operations: a load request's configuration may not name custom operator libraries")
}

// TestOptimizationGraphLevel: optimization.graph.level takes effect as
// Triton's ONNX Runtime backend reads it; the rest of the block is noted
// as ignored.
func TestOptimizationGraphLevel(t *testing.T) {
	for _, tc := range []struct {
		name, optimization string
		want               GraphLevel
		note               string
	}{
		{"none", "", GraphLevelAll, ""},
		{"basic", "optimization { graph { level: -1 } }", GraphLevelBasic, ""},
		{"extended", "optimization { graph { level: 1 } }", GraphLevelExtended, ""},
		{"another level", "optimization { graph { level: 3 } }", 3, "optimization.graph.level: 3 runs every graph optimization, as 0 does"},
		{"graph and more", "optimization { graph { level: -1 } cuda { graphs: true } }", GraphLevelBasic, "optimization ignored but for graph.level"},
		{"no graph", `optimization { execution_accelerators { gpu_execution_accelerator [ { name: "tensorrt" } ] } }`, GraphLevelAll,
			"optimization ignored: the execution provider comes from the server's onnxruntime settings"},
		{"a CUDA graph spec", `optimization { cuda { graphs: true graph_spec [ { batch_size: 4 input { key: "input" value { dim: [ 1, 28, 28 ] } } } ] } }`, GraphLevelAll,
			"optimization ignored"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := writeRepo(t, map[string]entry{"m": pbtxtEntry(lenetWith("m", tc.optimization), map[string]string{"1/model.onnx": "onnx"})})
			m, err := Load(Roots{root}, "m", Options{Read: fakeReader, DefaultSLO: time.Second})
			require.NoError(t, err)
			require.Equal(t, tc.want, m.Config.GraphLevel)
			if tc.note == "" {
				require.Empty(t, m.Notes)
				return
			}
			require.Len(t, m.Notes, 1)
			require.Contains(t, m.Notes[0], tc.note)
		})
	}
	require.Equal(t, "basic", GraphLevelBasic.String())
	require.Equal(t, "extended", GraphLevelExtended.String())
	require.Equal(t, "all", GraphLevel(3).String())
	require.True(t, GraphLevel(3).All())
	require.False(t, GraphLevelBasic.All())
	require.Equal(t, "basic", GraphLevelBasic.Limit())
	require.Empty(t, GraphLevel(3).Limit())
}

// TestTritonFieldsNotedAsIgnored: fields of Triton's model configuration
// that change nothing gpuletd does are read and noted, not refused, so a
// Triton folder that has them serves; batch inputs and outputs, which
// would change what the model is given, are still refused.
func TestTritonFieldsNotedAsIgnored(t *testing.T) {
	for _, tc := range []struct {
		name, more, note string
	}{
		{"rate limiter", `instance_group [ { count: 2 kind: KIND_GPU rate_limiter { resources [ { name: "R1" count: 4 } ] priority: 2 } } ]`,
			"instance_group ignored: gpuletd's planner decides how many copies run and on which gpu-lets; its rate_limiter too"},
		{"secondary devices", `instance_group [ { kind: KIND_GPU secondary_devices [ { kind: KIND_NVDLA device_id: 0 } ] } ]`, "instance_group ignored"},
		{"metric tags", `metric_tags { key: "team" value: "search" }`, "metric_tags ignored"},
		{"metric buckets", `model_metrics { metric_control [ { metric_identifier { family: "nv_inference_first_response_histogram_ms" } histogram_options { buckets: [ 1, 2, 4 ] } } ] }`,
			"model_metrics ignored"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := writeRepo(t, map[string]entry{"m": pbtxtEntry(lenetWith("m", tc.more), map[string]string{"1/model.onnx": "onnx"})})
			m, err := Load(Roots{root}, "m", Options{Read: fakeReader, DefaultSLO: time.Second})
			require.NoError(t, err)
			require.Len(t, m.Notes, 1)
			require.Contains(t, m.Notes[0], tc.note)
		})
	}
	root := writeRepo(t, map[string]entry{"m": pbtxtEntry(lenetWith("m", `batch_input [ { kind: BATCH_ELEMENT_COUNT target_name: "N" data_type: TYPE_FP32 source_input: "input" } ]`),
		map[string]string{"1/model.onnx": "onnx"})})
	_, err := Load(Roots{root}, "m", Options{Read: fakeReader, DefaultSLO: time.Second})
	require.ErrorContains(t, err, "batch_input: a field of Triton's model configuration that gpuletd does not serve (batch inputs are not served)")
}

// TestRuntimeDigest: a model's digest, which profiles and loads key on,
// takes in its custom operator libraries' bytes and a graph level other
// than all; a model with neither keeps its file's digest.
func TestRuntimeDigest(t *testing.T) {
	v1 := map[string]string{"1/model.onnx": "onnx", "libops.so": "elf"}
	root := writeRepo(t, map[string]entry{
		"plain":    pbtxtEntry(lenetWith("plain", ""), v1),
		"ops":      pbtxtEntry(lenetWith("ops", `model_operations { op_library_filename: "libops.so" }`), v1),
		"basic":    pbtxtEntry(lenetWith("basic", "optimization { graph { level: -1 } }"), v1),
		"level3":   pbtxtEntry(lenetWith("level3", "optimization { graph { level: 3 } }"), v1),
		"opsbasic": pbtxtEntry(lenetWith("opsbasic", `model_operations { op_library_filename: "libops.so" } optimization { graph { level: -1 } }`), v1),
		"system":   pbtxtEntry(lenetWith("system", `model_operations { op_library_filename: "libsystemwide.so" }`), v1),
	})
	digests := NewDigestCache()
	scan := func() map[string]string {
		ix, err := Scan(Roots{root}, Options{Read: fakeReader, DefaultSLO: time.Second, Digests: digests})
		require.NoError(t, err)
		require.Empty(t, ix.Broken)
		out := map[string]string{}
		for name, m := range ix.Models {
			out[name] = m.SHA256
		}
		return out
	}
	first := scan()
	file, err := DigestFile(filepath.Join(root, "plain", "1", "model.onnx"), PlatformONNX)
	require.NoError(t, err)
	require.Equal(t, file.SHA256, first["plain"])
	require.Equal(t, file.SHA256, first["level3"], "level 3 runs every optimization, as 0 does")
	seen := map[string]string{}
	for _, name := range []string{"plain", "ops", "basic", "opsbasic", "system"} {
		require.NotContains(t, seen, first[name], "%s shares a digest with %s", name, seen[first[name]])
		seen[first[name]] = name
	}
	require.Equal(t, first, scan(), "read again unchanged, the same digests")

	require.NoError(t, os.WriteFile(filepath.Join(root, "ops", "libops.so"), []byte("elf, rebuilt"), 0o644))
	second := scan()
	require.NotEqual(t, first["ops"], second["ops"], "a rebuilt library is measured anew")
	require.Equal(t, first["opsbasic"], second["opsbasic"], "another folder's library is its own")
	require.Equal(t, first["plain"], second["plain"])
}
