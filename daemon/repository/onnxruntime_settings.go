package repository

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/gpulet/gpuletd/kserve/tritonpb"
)

// ErrOpLibrariesOverLoad refuses a load request's configuration that names
// custom operator libraries: they run their code in gpuletd's executors,
// so only a model folder on the server, which its operator put there, may
// name them.
var ErrOpLibrariesOverLoad = errors.New("model_operations: a load request's configuration may not name custom operator libraries, which run their own code in gpuletd's executors; put the model folder, its config.pbtxt naming them, in the model repository on the server and load it by name")

// GraphLevel is how far ONNX Runtime optimizes a model's graph when it
// opens it, as a config.pbtxt's optimization.graph.level says for Triton's
// ONNX Runtime backend: -1 basic optimizations only, 1 basic and extended,
// anything else (0, the default) all of them.
type GraphLevel int

// The levels of optimization.graph.level with a meaning of their own.
const (
	GraphLevelAll      GraphLevel = 0
	GraphLevelBasic    GraphLevel = -1
	GraphLevelExtended GraphLevel = 1
)

// String names the optimizations the level runs.
func (l GraphLevel) String() string {
	switch l {
	case GraphLevelBasic:
		return "basic"
	case GraphLevelExtended:
		return "extended"
	}
	return "all"
}

// All reports whether the level runs every graph optimization.
func (l GraphLevel) All() bool { return l != GraphLevelBasic && l != GraphLevelExtended }

// Limit names the optimizations the level runs when not all of them
// ("basic", "extended"); "" when all.
func (l GraphLevel) Limit() string {
	if l.All() {
		return ""
	}
	return l.String()
}

// tritonOperations reads model_operations: the custom operator libraries
// ONNX Runtime loads before it opens the model, paths as given (resolved
// against the model folder when the folder is read, resolveOpLibraries).
func tritonOperations(pc *tritonpb.ModelConfig, c *ModelConfig, bad func(string, ...any)) {
	libs := pc.GetModelOperations().GetOpLibraryFilename()
	if len(libs) == 0 {
		return
	}
	switch c.Platform {
	case PlatformEnsemble:
		bad("model_operations: a pipeline runs no graph of its own; give the libraries in the configuration of the step's model that needs them")
		return
	case PlatformTorchScript:
		bad("model_operations: custom operator libraries are ONNX Runtime's; a TorchScript model serves on emulated devices only")
		return
	}
	for i, lib := range libs {
		switch {
		case lib == "":
			bad("model_operations.op_library_filename[%d]: empty; give the library's path, absolute or in the model folder", i)
		case slices.Contains(libs[:i], lib):
			bad("model_operations.op_library_filename[%d]: %q is named twice", i, lib)
		}
	}
	c.OpLibraries = slices.Clone(libs)
}

// tritonOptimization reads optimization: graph.level takes effect (the
// graph optimizations ONNX Runtime runs on the model); what else the block
// sets is noted as ignored.
func tritonOptimization(pc *tritonpb.ModelConfig, c *ModelConfig, note func(string, ...any)) {
	o := pc.GetOptimization()
	if o == nil {
		return
	}
	level := o.GetGraph().GetLevel()
	switch GraphLevel(level) {
	case GraphLevelBasic, GraphLevelExtended, GraphLevelAll:
	default:
		note("optimization.graph.level: %d runs every graph optimization, as 0 does (-1: basic only, 1: basic and extended)", level)
	}
	c.GraphLevel = GraphLevel(level)
	switch {
	case proto.Equal(o, &tritonpb.ModelOptimizationPolicy{Graph: o.Graph}): // graph alone
	case o.Graph == nil:
		note("optimization ignored: the execution provider comes from the server's onnxruntime settings")
	default:
		note("optimization ignored but for graph.level: the execution provider comes from the server's onnxruntime settings")
	}
}

// ortBackendParameters are the parameters Triton's ONNX Runtime backend
// reads from a config.pbtxt (its source names them), with why gpuletd
// leaves each without effect: a configuration moved from Triton is told
// what became of them rather than that the name is unknown.
var ortBackendParameters = func() map[string]string {
	const (
		threads = "gpuletd gives each run its threads: one per core of its CPU gpu-let (one on a GPU), the operators in order"
		memory  = "gpuletd sets ONNX Runtime's memory itself (a gpu-let's cap, where it has one) and places the model by the memory its profile measured (the parameter memory_mb gives it)"
		cuda    = "the CUDA provider runs with ONNX Runtime's defaults"
	)
	m := map[string]string{}
	for _, k := range []string{"intra_op_thread_count", "inter_op_thread_count", "execution_mode"} {
		m[k] = threads
	}
	for _, k := range []string{"enable_mem_arena", "enable_mem_pattern", "arena_extend_strategy", "memory.enable_memory_arena_shrinkage",
		"session.use_device_allocator_for_initializers", "gpu_mem_limit"} {
		m[k] = memory
	}
	for _, k := range []string{"cudnn_conv_algo_search", "do_copy_in_default_stream"} {
		m[k] = cuda
	}
	return m
}()

// tritonMetrics notes the fields gpuletd reads but leaves without effect:
// metric labels and histogram buckets.
func tritonMetrics(pc *tritonpb.ModelConfig, note func(string, ...any)) {
	if len(pc.MetricTags) > 0 {
		note("metric_tags ignored: gpuletd's metrics label a model by its name (the model label) alone")
	}
	if len(pc.GetModelMetrics().GetMetricControl()) > 0 {
		note("model_metrics ignored: gpuletd's histograms have the same buckets for every model")
	}
}

// foldRuntimeDigest folds into m.SHA256, the model file's digest, what
// else decides how ONNX Runtime runs the model: each custom operator
// library's bytes and a graph level other than all. Profiles and the
// executors' loads key on it, so a changed library or level is measured and
// loaded anew, and another folder holding the same file without them keeps
// profiles of its own. A model with neither keeps its file's digest.
func (m *Model) foldRuntimeDigest(digest func(path, platform string) (Digest, error)) error {
	if len(m.OpLibraries) == 0 && m.Config.GraphLevel.All() {
		return nil
	}
	h := sha256.New()
	fmt.Fprintf(h, "model %s\n", m.SHA256)
	for _, lib := range m.OpLibraries {
		if !filepath.IsAbs(lib) { // a bare name the dynamic loader finds
			fmt.Fprintf(h, "op_library %s\n", lib)
			continue
		}
		d, err := digest(lib, "")
		if err != nil {
			return invalidFile(lib, "the custom operator library model_operations names", err)
		}
		fmt.Fprintf(h, "op_library %s %s\n", filepath.Base(lib), d.SHA256)
	}
	if !m.Config.GraphLevel.All() {
		fmt.Fprintf(h, "graph_level %s\n", m.Config.GraphLevel)
	}
	m.SHA256 = hex.EncodeToString(h.Sum(nil))
	return nil
}

// resolveOpLibraries checks the custom operator libraries the configuration
// names and sets m.OpLibraries to their paths: an absolute path as given, a
// relative one in the model folder. A library that is not there makes the
// model invalid, naming it; but a bare name (libortextensions.so) that is
// not in the folder is left to the executors' dynamic loader, which looks
// in LD_LIBRARY_PATH and the system's library folders, as Triton leaves
// it, with a note.
func (m *Model) resolveOpLibraries() error {
	m.OpLibraries = nil
	for _, lib := range m.Config.OpLibraries {
		path := lib
		if !filepath.IsAbs(path) {
			if !filepath.IsLocal(path) {
				return invalid(m.configSource(), fmt.Errorf("model_operations: %q is neither an absolute path nor a file in the model folder", lib))
			}
			path = filepath.Join(m.Dir, path)
		}
		st, err := os.Stat(path)
		if errors.Is(err, fs.ErrNotExist) && !strings.ContainsRune(lib, filepath.Separator) {
			m.OpLibraries = append(m.OpLibraries, lib)
			m.Notes = append(m.Notes, fmt.Sprintf("model_operations: %s is not in the model folder: the executors' dynamic loader looks for it (LD_LIBRARY_PATH, the system's library folders), and its bytes do not count in the model's digest", lib))
			continue
		}
		if err == nil && !st.Mode().IsRegular() {
			err = errors.New("not a regular file")
		}
		if err != nil {
			return invalidFile(path, "the custom operator library model_operations names", err)
		}
		m.OpLibraries = append(m.OpLibraries, path)
	}
	return nil
}
