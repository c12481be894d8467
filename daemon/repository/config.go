package repository

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/internal/configerr"
	"gopkg.in/yaml.v3"
)

// Platforms a model file may be in.
const (
	PlatformONNX        = "onnxruntime" // <version>/model.onnx
	PlatformTorchScript = "torchscript" // <version>/model.pt
)

// ErrEmulatedOnly is a model whose file only emulated devices serve: a
// TorchScript file, which gpuletd's engine, ONNX Runtime, cannot run (an
// emulated device times the model by its reference curve, reading no file).
var ErrEmulatedOnly = errors.New("TorchScript models (model.pt) are served on emulated devices only: " +
	"gpuletd runs model files with ONNX Runtime; export the model to ONNX (torch.onnx.export) to serve it on the CPU or a GPU")

// modelFiles maps each platform to the file name it expects in a version folder.
var modelFiles = map[string]string{
	PlatformONNX:        "model.onnx",
	PlatformTorchScript: "model.pt",
}

// ModelConfig is a model's config.yaml.
type ModelConfig struct {
	// SLO is the latency objective of one request, end to end. Required.
	SLO config.Duration `yaml:"slo"`
	// MaxBatchSize is the largest batch; 0 means the model has no batch
	// dimension. When above 0, dimension 0 of every input and output is the
	// batch dimension and the dims below leave it out.
	MaxBatchSize int `yaml:"max_batch_size"`
	// Platform is onnxruntime or torchscript; empty: from the file present.
	Platform string `yaml:"platform,omitempty"`
	// Profile names the model's curve in an emulated device's reference
	// profile set; empty: the model's own name.
	Profile string `yaml:"profile,omitempty"`
	// MemoryMB is the device memory one loaded copy needs; 0: estimated from
	// the model file.
	MemoryMB float64 `yaml:"memory_mb,omitempty"`
	// MaxQueue bounds how many of the model's requests may wait in one
	// gpu-let's executor, below the server's limits.max_queued_per_model
	// (0: that alone); beyond it a request is refused, queue_full (a
	// config.pbtxt's dynamic_batching.default_queue_policy.max_queue_size).
	MaxQueue int `yaml:"max_queue,omitempty"`
	// PriorityLevels is how many priority levels the model's requests may
	// ask for with their priority parameter, 1 the highest; 0 or 1: all
	// are alike. At overload a lower level gives way to the higher ones
	// (OPERATIONS "Priority levels"). DefaultPriority, in 1..PriorityLevels,
	// is the level of a request that asks for none or for one past the
	// levels. A config.pbtxt's dynamic_batching gives them as
	// priority_levels and default_priority_level.
	PriorityLevels  int `yaml:"priority_levels,omitempty"`
	DefaultPriority int `yaml:"default_priority_level,omitempty"`
	// Queue is what every request asks of the model's queue where its
	// priority level has no policy of its own in LevelQueues (a
	// config.pbtxt's dynamic_batching.default_queue_policy, its bound
	// apart: MaxQueue), and LevelQueues is each level's policy (its
	// priority_queue_policy).
	Queue       QueuePolicy         `yaml:"-"`
	LevelQueues map[int]QueuePolicy `yaml:"-"`
	// Inputs and Outputs are read from the model file when not given
	// (torchscript models must give them).
	Inputs  []TensorSpec `yaml:"inputs,omitempty"`
	Outputs []TensorSpec `yaml:"outputs,omitempty"`
	// ProfileShapes gives, by input, the dims (without the batch
	// dimension) the model is profiled at where its input has dynamic
	// ones: the size requests bring, such as a text model's sequence
	// length. Without it a dynamic dimension is profiled at 1.
	ProfileShapes map[string][]int64 `yaml:"profile_shapes,omitempty"`
	// shapesFromWarmup: ProfileShapes came from a config.pbtxt's
	// model_warmup, which gives every input's dims, dynamic or not; those
	// that do not fit a dynamic input are left out, not refused.
	shapesFromWarmup bool `yaml:"-"`

	// Versions says which numbered version folders are served (a
	// config.pbtxt's version_policy); the zero value serves the newest.
	Versions VersionPolicy `yaml:"-"`
	// ModelFilename is the model file's name in a version folder when it is
	// not the platform's (a config.pbtxt's default_model_filename).
	ModelFilename string `yaml:"-"`
	// CCModelFilenames are, by CUDA compute capability ("9.0"), the model
	// file's names in a version folder for GPUs of it (a config.pbtxt's
	// cc_model_filenames); Options.ComputeCapabilities says which applies.
	CCModelFilenames map[string]string `yaml:"-"`
	// Ensemble is a pipeline's steps (Platform PlatformEnsemble, from a
	// config.pbtxt's ensemble_scheduling); nil for a model.
	Ensemble *Ensemble `yaml:"-"`
	// Sequence is a stateful model's sequence batching (a config.pbtxt's
	// sequence_batching); nil for a model whose requests stand alone.
	Sequence *Sequence `yaml:"-"`
	// Checksums are the MD5 digests, lowercase hex, that files of the model
	// folder must have for it to load, by path in the folder (a
	// config.pbtxt's checksum repository agent).
	Checksums map[string]string `yaml:"-"`
	// OpLibraries are the custom operator libraries ONNX Runtime loads
	// before it opens the model, as the configuration names them (a
	// config.pbtxt's model_operations; Model.OpLibraries has their paths).
	OpLibraries []string `yaml:"-"`
	// GraphLevel is how far ONNX Runtime optimizes the model's graph (a
	// config.pbtxt's optimization.graph.level).
	GraphLevel GraphLevel `yaml:"-"`
	// VariantOf names the model this one may stand in for in a pipeline's
	// step (a cheaper variant of it), and Accuracy is the model's accuracy
	// as a share in (0, 1] (0: not given, taken as 1): a pipeline under
	// load runs its steps' cheaper variants (accuracy scaling).
	VariantOf string  `yaml:"variant_of,omitempty"`
	Accuracy  float64 `yaml:"accuracy,omitempty"`
	// MinAccuracy is a pipeline's least accepted end-to-end accuracy as a
	// share of its full accuracy, in [0, 1] (a config.pbtxt's min_accuracy
	// parameter): accuracy scaling goes no lower. 0 sets no floor.
	MinAccuracy float64 `yaml:"-"`
	// PathAccuracy gives a pipeline's end-to-end accuracy for a path (the
	// models its steps ran, joined by "/") where it is not the product of
	// the models' accuracies (a config.pbtxt's path_accuracy parameter).
	PathAccuracy map[string]float64 `yaml:"-"`
	// LabelFiles names, by output, the file in the model folder that labels
	// its classes one per line (a config.pbtxt's label_filename): answers
	// of the classification extension carry them.
	LabelFiles map[string]string `yaml:"-"`
	// ResponseCache answers identical requests from the node's response
	// cache (a config.pbtxt's response_cache { enable: true }), a model's
	// or a pipeline's; it needs the node's response_cache.size.
	ResponseCache bool `yaml:"response_cache,omitempty"`
}

// VersionPolicy selects version folders, as Triton's version_policy does:
// the Latest n, All, or the Specific ones listed. The zero value is the
// newest one.
type VersionPolicy struct {
	Latest   int
	All      bool
	Specific []int
}

// TensorSpec is one input or output: its name, element type and the shape of
// one request's tensor (without the batch dimension when the model batches);
// -1 is a dimension of any size.
type TensorSpec struct {
	Name     string          `yaml:"name" json:"name"`
	DataType tensor.DataType `yaml:"datatype" json:"datatype"`
	Dims     []int64         `yaml:"dims" json:"shape"`
	// Reshape is the shape the model file takes or gives when it differs
	// from Dims (a config.pbtxt's reshape; empty and not nil: a scalar).
	Reshape []int64 `yaml:"-" json:"-"`
	// Sequence is the tensor's role in a stateful model's sequences
	// (RoleControl, RoleState), which the daemon fills; "" for one the
	// requests give or are answered with.
	Sequence string `yaml:"-" json:"-"`
}

// maxQueue bounds a model's own queue bound, as the server's is bounded.
const maxQueue = 1 << 20

// maxSLO bounds the SLO a model may declare.
const maxSLO = time.Hour

// modelConfigSections are config.yaml's sections for configerr.
var modelConfigSections = sync.OnceValue(func() map[string]configerr.Section {
	return configerr.Sections(reflect.TypeFor[ModelConfig](), nil)
})

// ParseModelConfig reads and validates a config.yaml. Unknown fields are
// errors; every error says which field and what is allowed. A missing slo is
// no error here: the repository falls back to the server's default_slo.
func ParseModelConfig(data []byte) (ModelConfig, error) {
	var c ModelConfig
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		if errors.Is(err, io.EOF) {
			return c, errors.New("empty file: give at least slo and max_batch_size")
		}
		var doc yaml.Node
		if yaml.Unmarshal(data, &doc) != nil {
			return c, errors.New(configerr.Clean(err, modelConfigSections()))
		}
		return c, errors.New(configerr.CleanIn(err, modelConfigSections(), &doc))
	}
	var errs []error
	if slo := c.SLO.D(); slo < 0 || slo > maxSLO {
		errs = append(errs, fmt.Errorf("slo: %s is not allowed; use a duration above 0 and at most 1h", slo))
	}
	if c.MaxBatchSize < 0 || c.MaxBatchSize > maxBatchSize {
		errs = append(errs, fmt.Errorf("max_batch_size: %d is not allowed; use 0 (no batching) to %d", c.MaxBatchSize, maxBatchSize))
	}
	if c.Platform != "" {
		if _, ok := modelFiles[c.Platform]; !ok {
			errs = append(errs, fmt.Errorf("platform: %q is not allowed; use %s or %s", c.Platform, PlatformONNX, PlatformTorchScript))
		}
	}
	if c.MemoryMB < 0 {
		errs = append(errs, fmt.Errorf("memory_mb: %v is not allowed; use 0 (estimate) or a positive size", c.MemoryMB))
	}
	if c.MaxQueue < 0 || c.MaxQueue > maxQueue {
		errs = append(errs, fmt.Errorf("max_queue: %d is not allowed; use 0 (the server's limits.max_queued_per_model) to %d", c.MaxQueue, maxQueue))
	}
	if err := checkPriorities(int64(c.PriorityLevels), int64(c.DefaultPriority)); err != nil {
		errs = append(errs, err)
	}
	if err := checkVariant(c.VariantOf, c.Accuracy); err != nil {
		errs = append(errs, err)
	}
	for _, name := range sortedKeys(c.ProfileShapes) {
		for j, d := range c.ProfileShapes[name] {
			if d < 1 {
				errs = append(errs, fmt.Errorf("profile_shapes.%s[%d]: %d is not allowed; give the size requests bring, a positive number", name, j, d))
			}
		}
	}
	for kind, specs := range map[string][]TensorSpec{"inputs": c.Inputs, "outputs": c.Outputs} {
		if err := checkSpecs(kind, specs); err != nil {
			errs = append(errs, err)
		}
	}
	return c, errors.Join(errs...)
}

// checkVariant checks a model's variant_of and accuracy.
// checkPriorities checks a model's priority levels: up to
// maxPriorityLevels, and with levels a default among them, as Triton
// requires of a config.pbtxt (tritonPriorities).
func checkPriorities(levels, def int64) error {
	switch {
	case levels < 0 || levels > maxPriorityLevels:
		return fmt.Errorf("priority_levels: %d is not allowed; use 0 (every request alike) to %d", levels, maxPriorityLevels)
	case levels == 0 && def != 0:
		return fmt.Errorf("default_priority_level: %d names a level, and priority_levels sets none; set priority_levels or remove it", def)
	case levels > 0 && (def < 1 || def > levels):
		return fmt.Errorf("default_priority_level: %d is not allowed; use 1 (the highest) to %d (priority_levels)", def, levels)
	}
	return nil
}

// levelsFit refuses a config.yaml's priority levels (the keys it sets, set)
// over a config.pbtxt whose model takes none: a pipeline's steps go by
// their own models' levels, and a stateful model's sequence_batching has
// no place for them, so that a load request's configuration could not say
// them (YAMLOverTriton).
func levelsFit(pbtxt ModelConfig, set map[string]bool) error {
	if !set["priority_levels"] && !set["default_priority_level"] {
		return nil
	}
	switch {
	case pbtxt.Ensemble != nil:
		return errors.New("priority_levels: a pipeline takes none: its steps' requests go by their own models' levels (the request's priority reaches them); remove it")
	case pbtxt.Sequence != nil:
		return errors.New("priority_levels: a stateful model (sequence_batching) takes none; remove it")
	}
	return nil
}

func checkVariant(of string, accuracy float64) error {
	if of != "" && !validName.MatchString(of) {
		return fmt.Errorf("variant_of: %q is not a model name", of)
	}
	if !(accuracy >= 0 && accuracy <= 1) {
		return fmt.Errorf("accuracy: %v is not allowed; give a share in (0, 1]", accuracy)
	}
	return nil
}

// ModelAccuracy is the model's accuracy, 1 when not given.
func (c ModelConfig) ModelAccuracy() float64 {
	if c.Accuracy > 0 {
		return c.Accuracy
	}
	return 1
}

func checkSpecs(kind string, specs []TensorSpec) error {
	seen := map[string]bool{}
	for i, s := range specs {
		f := fmt.Sprintf("%s[%d]", kind, i)
		switch {
		case s.Name == "":
			return fmt.Errorf("%s.name: missing", f)
		case seen[s.Name]:
			return fmt.Errorf("%s.name: %q given twice", f, s.Name)
		case !s.DataType.Valid():
			if d, ok := tensor.SuggestDataType(string(s.DataType)); ok {
				return fmt.Errorf("%s.datatype: %q is not a KServe v2 data type; write %s", f, s.DataType, d)
			}
			return fmt.Errorf("%s.datatype: %q is not a KServe v2 data type (FP32, INT64, ...)", f, s.DataType)
		}
		seen[s.Name] = true
		for j, d := range s.Dims {
			if d < -1 || d == 0 {
				return fmt.Errorf("%s.dims[%d]: %d is not allowed; use a positive size or -1 for any size", f, j, d)
			}
		}
	}
	return nil
}

// yamlKeys returns the top-level keys a config.yaml sets.
func yamlKeys(data []byte) map[string]bool {
	var doc map[string]yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil
	}
	out := make(map[string]bool, len(doc))
	for k := range doc {
		out[k] = true
	}
	return out
}

// overlay returns base with the fields yamlCfg sets (the keys in set)
// taken from it: config.yaml wins over config.pbtxt field by field.
func overlay(base, yamlCfg ModelConfig, set map[string]bool) ModelConfig {
	if set["slo"] {
		base.SLO = yamlCfg.SLO
	}
	if set["max_batch_size"] {
		base.MaxBatchSize = yamlCfg.MaxBatchSize
	}
	if set["platform"] {
		base.Platform = yamlCfg.Platform
	}
	if set["profile"] {
		base.Profile = yamlCfg.Profile
	}
	if set["memory_mb"] {
		base.MemoryMB = yamlCfg.MemoryMB
	}
	if set["max_queue"] {
		base.MaxQueue = yamlCfg.MaxQueue
	}
	if set["priority_levels"] {
		base.PriorityLevels = yamlCfg.PriorityLevels
	}
	if set["default_priority_level"] {
		base.DefaultPriority = yamlCfg.DefaultPriority
	}
	if set["inputs"] {
		base.Inputs = yamlCfg.Inputs
	}
	if set["outputs"] {
		base.Outputs = yamlCfg.Outputs
	}
	if set["variant_of"] {
		base.VariantOf = yamlCfg.VariantOf
	}
	if set["accuracy"] {
		base.Accuracy = yamlCfg.Accuracy
	}
	if set["response_cache"] {
		base.ResponseCache = yamlCfg.ResponseCache
	}
	if set["profile_shapes"] {
		base.ProfileShapes, base.shapesFromWarmup = yamlCfg.ProfileShapes, false
	}
	return base
}

// sortedKeys lists a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
