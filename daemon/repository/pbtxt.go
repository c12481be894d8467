package repository

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/internal/configerr"
	"github.com/gpulet/gpuletd/kserve/tritonpb"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// TritonConfigFile is the name of a model's configuration in Triton's layout.
const TritonConfigFile = "config.pbtxt"

// Parameters of a config.pbtxt that gpuletd reads (string values, as
// Triton's parameters map holds them).
const (
	ParamSLO      = "slo"        // a duration: "50ms"
	ParamProfile  = "profile"    // as config.yaml's profile
	ParamMemoryMB = "memory_mb"  // as config.yaml's memory_mb
	ParamVariant  = "variant_of" // as config.yaml's variant_of
	ParamAccuracy = "accuracy"   // as config.yaml's accuracy
	// ParamProfileShapes is as config.yaml's profile_shapes, written as
	// perf_analyzer's --shape: "input_ids:128 attention_mask:128".
	ParamProfileShapes = "profile_shapes"
	// ParamMinAccuracy is a pipeline's least accepted end-to-end accuracy,
	// as a share of its full accuracy: "0.9".
	ParamMinAccuracy = "min_accuracy"
	// ParamPathAccuracy is a pipeline's table of end-to-end accuracies by
	// path: "spotter/labeler=1, spotter/labeler-lite=0.82".
	ParamPathAccuracy = "path_accuracy"
	// ParamMaxQueue is as config.yaml's max_queue, for a stateful model,
	// whose sequence_batching has no queue bound to say it in: "64".
	ParamMaxQueue = "max_queue"
)

// Triton's platform and backend names that gpuletd serves.
var tritonPlatforms = map[string]string{
	"onnxruntime_onnx": PlatformONNX,
	"pytorch_libtorch": PlatformTorchScript,
}

var tritonBackends = map[string]string{
	"onnxruntime": PlatformONNX,
	"pytorch":     PlatformTorchScript,
}

// tritonTypes maps Triton's TYPE_* names to the protocol's data types.
var tritonTypes = map[tritonpb.DataType]tensor.DataType{
	tritonpb.DataType_TYPE_BOOL:   tensor.Bool,
	tritonpb.DataType_TYPE_UINT8:  tensor.Uint8,
	tritonpb.DataType_TYPE_UINT16: tensor.Uint16,
	tritonpb.DataType_TYPE_UINT32: tensor.Uint32,
	tritonpb.DataType_TYPE_UINT64: tensor.Uint64,
	tritonpb.DataType_TYPE_INT8:   tensor.Int8,
	tritonpb.DataType_TYPE_INT16:  tensor.Int16,
	tritonpb.DataType_TYPE_INT32:  tensor.Int32,
	tritonpb.DataType_TYPE_INT64:  tensor.Int64,
	tritonpb.DataType_TYPE_FP16:   tensor.FP16,
	tritonpb.DataType_TYPE_FP32:   tensor.FP32,
	tritonpb.DataType_TYPE_FP64:   tensor.FP64,
	tritonpb.DataType_TYPE_STRING: tensor.Bytes,
	tritonpb.DataType_TYPE_BF16:   tensor.BF16,
}

// TritonDataType is Triton's TYPE_* for one of the protocol's data types
// (TYPE_INVALID for one Triton has no name for).
func TritonDataType(dt tensor.DataType) tritonpb.DataType {
	for t, d := range tritonTypes {
		if d == dt {
			return t
		}
	}
	return tritonpb.DataType_TYPE_INVALID
}

// TritonBackend is the Triton backend that runs models of a platform
// ("" for one Triton runs without a backend, an ensemble).
func TritonBackend(platform string) string {
	for b, p := range tritonBackends {
		if p == platform {
			return b
		}
	}
	return ""
}

// notServed names the fields of Triton's ModelConfig that gpuletd's subset
// leaves out, with why a model that uses them is not served.
var notServed = map[string]string{
	"batch_input":  "batch inputs are not served",
	"batch_output": "batch outputs are not served",
}

// pbtxtError matches prototext's error text: "proto: (line L:C): what".
var pbtxtError = regexp.MustCompile(`^proto:\s*\(line (\d+):(\d+)\):\s*(.*)$`)

// tritonParseError turns a prototext error into one naming the line, the
// field and what to do.
func tritonParseError(err error) error {
	msg := strings.ReplaceAll(err.Error(), "\u00a0", " ")
	sub := pbtxtError.FindStringSubmatch(msg)
	if sub == nil {
		return errors.New(strings.TrimSpace(strings.TrimPrefix(msg, "proto:")))
	}
	at, what := "line "+sub[1]+":"+sub[2], sub[3]
	if f, ok := unknownField(what); ok {
		if why, known := notServed[f]; known {
			return fmt.Errorf("%s: %s: a field of Triton's model configuration that gpuletd does not serve (%s); remove it", at, f, why)
		}
		return fmt.Errorf("%s: unknown field %q%s; gpuletd reads Triton's ModelConfig fields (name, platform, backend, max_batch_size, input, output, version_policy, default_model_filename, parameters, dynamic_batching, sequence_batching, instance_group, model_warmup, optimization, model_operations, model_repository_agents, response_cache, and cc_model_filenames, metric_tags and model_metrics, which it notes as ignored)",
			at, f, configerr.DidYouMean(f, tritonFieldNames()))
	}
	if v, ok := strings.CutPrefix(what, "invalid value for enum type: "); ok {
		return fmt.Errorf("%s: %s is not a value of this field (data types are TYPE_BOOL, TYPE_UINT8…TYPE_UINT64, TYPE_INT8…TYPE_INT64, TYPE_FP16, TYPE_FP32, TYPE_FP64, TYPE_BF16, TYPE_STRING)", at, v)
	}
	return fmt.Errorf("%s: %s", at, what)
}

// tritonFieldNames are the names of every field of Triton's model
// configuration that tritonpb holds, at any depth, for guessing the one a
// misspelt name meant.
var tritonFieldNames = sync.OnceValue(func() map[string]string {
	names := map[string]string{}
	seen := map[protoreflect.FullName]bool{}
	var walk func(m protoreflect.MessageDescriptor)
	walk = func(m protoreflect.MessageDescriptor) {
		if seen[m.FullName()] {
			return
		}
		seen[m.FullName()] = true
		fields := m.Fields()
		for i := range fields.Len() {
			f := fields.Get(i)
			names[string(f.Name())] = string(f.Name())
			if msg := f.Message(); msg != nil {
				walk(msg)
			}
		}
	}
	walk((&tritonpb.ModelConfig{}).ProtoReflect().Descriptor())
	return names
})

// unknownField returns the field an "unknown field" error of prototext
// (unknown field: f) or protojson (unknown field "f") names.
func unknownField(what string) (string, bool) {
	if f, ok := strings.CutPrefix(what, "unknown field: "); ok {
		return f, true
	}
	if f, ok := strings.CutPrefix(what, "unknown field "); ok {
		return strings.Trim(f, `"`), true
	}
	return "", false
}

// tritonConfig is a config.pbtxt read into gpuletd's terms.
type tritonConfig struct {
	cfg ModelConfig
	// sloSet says the parameters gave an SLO.
	sloSet bool
	// batchUnset says the configuration does not set max_batch_size (the
	// field's presence, which model_config.proto keeps).
	batchUnset bool
	// notes say which fields took no effect and why.
	notes []string
}

// batchFromFile says the configuration leaves max_batch_size to the model
// file, as Triton's ONNX Runtime backend completes it: it does not set the
// field and lists the inputs or the outputs but not both (a configuration
// that lists both is complete, and its shapes have no batch dimension).
func (tc tritonConfig) batchFromFile() bool {
	return tc.batchUnset && (len(tc.cfg.Inputs) == 0 || len(tc.cfg.Outputs) == 0)
}

// parseTriton reads a config.pbtxt of the model in folder name. Unknown
// fields, fields gpuletd does not serve and values it cannot use are errors
// naming the field and value; fields it accepts without using them come back
// as notes saying why.
func parseTriton(data []byte, name string) (tritonConfig, error) {
	var pc tritonpb.ModelConfig
	if err := prototext.Unmarshal(data, &pc); err != nil {
		return tritonConfig{}, tritonParseError(err)
	}
	return fromTriton(&pc, name)
}

// parseTritonJSON reads Triton's ModelConfig in its JSON form, as the
// repository load API's config parameter carries it.
func parseTritonJSON(data []byte, name string) (tritonConfig, error) {
	var pc tritonpb.ModelConfig
	if err := protojson.Unmarshal(data, &pc); err != nil {
		return tritonConfig{}, tritonParseError(err)
	}
	return fromTriton(&pc, name)
}

// fromTriton turns a ModelConfig into gpuletd's terms.
func fromTriton(pc *tritonpb.ModelConfig, name string) (tritonConfig, error) {
	var tc tritonConfig
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	note := func(format string, args ...any) { tc.notes = append(tc.notes, fmt.Sprintf(format, args...)) }
	c := &tc.cfg

	if pc.Name != "" && pc.Name != name {
		bad("name: %q differs from the model's folder %q; they must be equal", pc.Name, name)
	}
	c.Platform = tritonPlatform(pc, bad)
	if pc.Runtime != "" {
		note("runtime: %q ignored: gpuletd runs ONNX models with its own ONNX Runtime", pc.Runtime)
	}
	if mb := pc.GetMaxBatchSize(); mb < 0 || mb > maxBatchSize {
		bad("max_batch_size: %d is not allowed; use 0 (no batching) to %d", mb, maxBatchSize)
	}
	c.MaxBatchSize = int(pc.GetMaxBatchSize())
	tc.batchUnset = pc.MaxBatchSize == nil
	for i, in := range pc.Input {
		f := fmt.Sprintf("input[%d]", i)
		c.Inputs = append(c.Inputs, tritonTensor(f, in.Name, in.DataType, in.Dims, in.Reshape, in.IsShapeTensor, in.IsNonLinearFormatIo, bad))
		if in.AllowRaggedBatch {
			bad("%s.allow_ragged_batch: ragged batches are not served; remove it", f)
		}
		if in.Optional {
			note("%s.optional ignored: requests must give every input", f)
		}
		if in.Format != tritonpb.ModelInput_FORMAT_NONE {
			note("%s.format: %s ignored: the model file's shapes say the layout", f, in.Format)
		}
	}
	for i, out := range pc.Output {
		f := fmt.Sprintf("output[%d]", i)
		c.Outputs = append(c.Outputs, tritonTensor(f, out.Name, out.DataType, out.Dims, out.Reshape, out.IsShapeTensor, out.IsNonLinearFormatIo, bad))
		if out.LabelFilename != "" {
			if !filepath.IsLocal(out.LabelFilename) {
				bad("%s.label_filename: %q is not a file in the model folder", f, out.LabelFilename)
				continue
			}
			if c.LabelFiles == nil {
				c.LabelFiles = map[string]string{}
			}
			c.LabelFiles[out.Name] = out.LabelFilename
		}
	}
	for kind, specs := range map[string][]TensorSpec{"input": c.Inputs, "output": c.Outputs} {
		if err := checkSpecs(kind, specs); err != nil {
			errs = append(errs, err)
		}
	}
	if q := pc.GetDynamicBatching().GetDefaultQueuePolicy().GetMaxQueueSize(); q > maxQueue {
		bad("dynamic_batching.default_queue_policy.max_queue_size: %d is not allowed; use 0 (no bound of its own) to %d", q, maxQueue)
	} else {
		c.MaxQueue = int(q)
	}
	c.PriorityLevels, c.DefaultPriority = tritonPriorities(pc.GetDynamicBatching(), bad, note)
	c.Queue, c.LevelQueues = tritonQueuePolicies(pc.GetDynamicBatching(), bad, note)
	c.Versions = tritonVersions(pc.VersionPolicy, bad)
	if f := pc.DefaultModelFilename; f != "" && tritonModelFileName("default_model_filename", f, bad) {
		c.ModelFilename = f
	}
	c.CCModelFilenames = tritonCCModelFiles(pc.CcModelFilenames, bad)
	var fanout string
	tc.sloSet, fanout = tritonParameters(c, pc.Parameters, bad, note)
	if c.Platform == PlatformEnsemble {
		c.Ensemble = tritonEnsemble(pc, c, fanout, bad)
		if c.Ensemble != nil {
			for _, k := range sortedKeys(c.PathAccuracy) {
				if n := len(strings.Split(k, "/")); n != len(c.Ensemble.Steps) {
					bad("parameters[%q]: path %q names %d models for %d steps; name one model per step, joined by /", ParamPathAccuracy, k, n, len(c.Ensemble.Steps))
				}
			}
		}
		if len(c.Inputs) == 0 || len(c.Outputs) == 0 {
			bad("a pipeline declares its input and output tensors (input and output)")
		}
	} else {
		if fanout != "" {
			bad("parameters[%q]: only a pipeline (platform: \"ensemble\") fans out", ParamFanout)
		}
		if c.MinAccuracy > 0 {
			bad("parameters[%q]: only a pipeline (platform: \"ensemble\") has an accuracy floor; a model gives its own accuracy", ParamMinAccuracy)
		}
		if c.PathAccuracy != nil {
			bad("parameters[%q]: only a pipeline (platform: \"ensemble\") has paths; a model gives its own accuracy", ParamPathAccuracy)
		}
	}
	if c.ProfileShapes == nil && len(pc.ModelWarmup) > 0 {
		c.ProfileShapes, c.shapesFromWarmup = warmupShapes(pc.ModelWarmup[0]), true
	}
	c.Sequence = tritonSequence(pc, c, bad, note)
	c.Checksums = tritonChecksums(pc.ModelRepositoryAgents, bad)
	tritonOperations(pc, c, bad)
	tritonOptimization(pc, c, note)
	tritonMetrics(pc, note)
	tritonIgnored(pc, bad, note)
	if pc.GetResponseCache().GetEnable() {
		c.ResponseCache = true
	}
	return tc, errors.Join(errs...)
}

// tritonTensor is one input or output of a ModelConfig (field names it in
// errors); shape tensors and non-linear formats, TensorRT features, are
// refused.
func tritonTensor(field, name string, t tritonpb.DataType, dims []int64, reshape *tritonpb.ModelTensorReshape,
	shapeTensor, nonLinear bool, bad func(string, ...any)) TensorSpec {
	spec := TensorSpec{Name: name, DataType: tritonType(field, t, bad), Dims: slices.Clone(dims)}
	if reshape != nil {
		spec.Reshape = append([]int64{}, reshape.Shape...) // a scalar's reshape is empty, not nil
	}
	if shapeTensor {
		bad("%s.is_shape_tensor: shape tensors are a TensorRT feature; gpuletd does not serve them", field)
	}
	if nonLinear {
		bad("%s.is_non_linear_format_io: a TensorRT feature gpuletd does not serve", field)
	}
	return spec
}

// maxBatchSize bounds max_batch_size in either configuration.
const maxBatchSize = config.MaxBatchSizeLimit

// exportHint says how a model in runtime (a platform or backend gpuletd
// does not serve) can be served.
func exportHint(runtime string) string {
	if runtime == "python" {
		return "a Python model's code does not run in gpuletd: export what it computes to ONNX, or run that code in the client"
	}
	return "export the model to ONNX (torch.onnx.export, tf2onnx) to serve it; on a GPU, ONNX Runtime's TensorRT provider runs it with TensorRT"
}

func tritonPlatform(pc *tritonpb.ModelConfig, bad func(string, ...any)) string {
	if pc.Platform == PlatformEnsemble {
		if pc.Backend != "" {
			bad("backend: %q; a pipeline (platform: \"ensemble\") has no backend of its own", pc.Backend)
		}
		return PlatformEnsemble
	}
	var fromPlatform, fromBackend string
	if pc.Platform != "" {
		p, ok := tritonPlatforms[pc.Platform]
		if !ok {
			bad("platform: %q is not served; gpuletd serves onnxruntime_onnx (and pytorch_libtorch on emulated devices only); %s", pc.Platform, exportHint(pc.Platform))
		}
		fromPlatform = p
	}
	if pc.Backend != "" {
		p, ok := tritonBackends[pc.Backend]
		if !ok {
			bad("backend: %q is not served; gpuletd serves onnxruntime (and pytorch on emulated devices only); %s", pc.Backend, exportHint(pc.Backend))
		}
		fromBackend = p
	}
	if fromPlatform != "" && fromBackend != "" && fromPlatform != fromBackend {
		bad("platform %q and backend %q name different runtimes", pc.Platform, pc.Backend)
	}
	if fromPlatform != "" {
		return fromPlatform
	}
	return fromBackend
}

func tritonType(field string, t tritonpb.DataType, bad func(string, ...any)) tensor.DataType {
	dt, ok := tritonTypes[t]
	switch {
	case t == tritonpb.DataType_TYPE_INVALID:
		bad("%s.data_type: missing; give the element type, such as TYPE_FP32", field)
	case !ok:
		bad("%s.data_type: %s is not a data type gpuletd knows", field, t)
	}
	return dt
}

func tritonVersions(vp *tritonpb.ModelVersionPolicy, bad func(string, ...any)) VersionPolicy {
	switch p := vp.GetPolicyChoice().(type) {
	case *tritonpb.ModelVersionPolicy_Latest_:
		n := p.Latest.GetNumVersions()
		if n < 1 {
			bad("version_policy.latest.num_versions: %d is not allowed; use 1 or more", n)
		}
		return VersionPolicy{Latest: int(n)}
	case *tritonpb.ModelVersionPolicy_All_:
		return VersionPolicy{All: true}
	case *tritonpb.ModelVersionPolicy_Specific_:
		vs := p.Specific.GetVersions()
		if len(vs) == 0 {
			bad("version_policy.specific.versions: empty; list the versions to serve")
		}
		out := make([]int, 0, len(vs))
		for _, v := range vs {
			if v < 1 || v > 1<<31-1 {
				bad("version_policy.specific.versions: %d is not a version folder number", v)
				continue
			}
			out = append(out, int(v))
		}
		sort.Ints(out)
		return VersionPolicy{Specific: slices.Compact(out)}
	}
	return VersionPolicy{}
}

// tritonParameters reads the parameters gpuletd knows and notes the others;
// it reports whether an SLO was given, and the fan-out tensor (ensembles).
func tritonParameters(c *ModelConfig, params map[string]*tritonpb.ModelParameter, bad, note func(string, ...any)) (bool, string) {
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	sloSet, fanout := false, ""
	for _, k := range keys {
		v := params[k].GetStringValue()
		f := fmt.Sprintf("parameters[%q]", k)
		switch k {
		case ParamSLO:
			d, err := time.ParseDuration(strings.TrimSpace(v))
			if err != nil || d <= 0 || d > maxSLO {
				bad("%s: %q is not an SLO; give a duration above 0 and at most 1h, such as \"50ms\"", f, v)
				continue
			}
			c.SLO, sloSet = config.Duration(d), true
		case ParamProfile:
			c.Profile = v
		case ParamProfileShapes:
			shapes, err := tensor.ParseShapes(v)
			if err != nil {
				bad("%s: %v", f, err)
				continue
			}
			c.ProfileShapes = shapes
		case ParamMemoryMB:
			mb, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || mb < 0 {
				bad("%s: %q is not allowed; give megabytes, 0 to estimate from the file", f, v)
				continue
			}
			c.MemoryMB = mb
		case ParamFanout:
			if fanout = strings.TrimSpace(v); fanout == "" {
				bad("%s: empty; name the tensor whose rows become requests of their own", f)
			}
		case ParamVariant:
			c.VariantOf = strings.TrimSpace(v)
		case ParamAccuracy:
			a, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || !(a > 0 && a <= 1) {
				bad("%s: %q is not an accuracy; give a share in (0, 1], such as \"0.92\"", f, v)
				continue
			}
			c.Accuracy = a
		case ParamMinAccuracy:
			a, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || !(a >= 0 && a <= 1) {
				bad("%s: %q is not an accuracy floor; give a share of the full accuracy in [0, 1], such as \"0.9\"", f, v)
				continue
			}
			c.MinAccuracy = a
		case ParamMaxQueue:
			q, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || q < 0 || q > maxQueue {
				bad("%s: %q is not allowed; give 0 (the server's limits.max_queued_per_model) to %d", f, v, maxQueue)
				continue
			}
			c.MaxQueue = q
		case ParamPathAccuracy:
			table, err := parsePathAccuracy(v)
			if err != nil {
				bad("%s: %v", f, err)
				continue
			}
			c.PathAccuracy = table
		default:
			if why := ortBackendParameters[k]; why != "" {
				note("%s ignored: Triton's onnxruntime backend reads it, and %s", f, why)
				continue
			}
			note("%s ignored: gpuletd reads the parameters %s, %s, %s, %s, %s, %s, (stateful models) %s and (pipelines) %s, %s, %s", f, ParamSLO, ParamProfile, ParamMemoryMB, ParamProfileShapes, ParamVariant, ParamAccuracy, ParamMaxQueue, ParamFanout, ParamMinAccuracy, ParamPathAccuracy)
		}
	}
	if c.VariantOf != "" {
		if err := checkVariant(c.VariantOf, c.Accuracy); err != nil {
			bad("parameters[%q]: %v", ParamVariant, err)
		}
	}
	return sloSet, fanout
}

// maxPriorityLevels bounds dynamic_batching.priority_levels: each level
// keeps a share of the time to a request's deadline for the ones above it,
// and a hundred already leaves each a sliver.
const maxPriorityLevels = 100

// tritonPriorities reads dynamic_batching's priority levels and the default
// level, checked as a config.yaml's are (checkPriorities), but that a
// default without levels is only a note, as Triton takes it: 0, 0 when the
// block sets none.
func tritonPriorities(db *tritonpb.ModelDynamicBatching, bad, note func(string, ...any)) (levels, def int) {
	n, d := db.GetPriorityLevels(), db.GetDefaultPriorityLevel()
	if n == 0 {
		if d > 0 {
			note("dynamic_batching.default_priority_level ignored: priority_levels sets no levels")
		}
		return 0, 0
	}
	// Past the largest int64 is past maxPriorityLevels too.
	if err := checkPriorities(int64(min(n, math.MaxInt64)), int64(min(d, math.MaxInt64))); err != nil {
		bad("dynamic_batching.%v", err)
		return 0, 0
	}
	for _, k := range slices.Sorted(maps.Keys(db.PriorityQueuePolicy)) {
		if k < 1 || k > n {
			bad("dynamic_batching.priority_queue_policy: level %d is not one of the priority levels, 1 to %d", k, n)
		}
	}
	return int(n), int(d)
}

// tritonIgnored notes the scheduling, placement and tuning fields gpuletd
// accepts but decides for itself, and refuses those it cannot honour.
func tritonIgnored(pc *tritonpb.ModelConfig, bad, note func(string, ...any)) {
	if pc.GetEnsembleScheduling() != nil && pc.Platform != PlatformEnsemble {
		bad(`ensemble_scheduling: only a pipeline has steps; give platform: "ensemble"`)
	}
	if db := pc.GetDynamicBatching(); db != nil {
		// One note for the block and what it sets: two lines about one
		// field read as two problems in `gpuletd status`.
		var set []string
		if len(db.PreferredBatchSize) > 0 {
			set = append(set, "preferred_batch_size")
		}
		if db.MaxQueueDelayMicroseconds > 0 {
			set = append(set, "max_queue_delay_microseconds")
		}
		what := "dynamic_batching"
		if len(set) > 0 {
			what += " (" + strings.Join(set, ", ") + ")"
		}
		q := db.GetDefaultQueuePolicy().GetMaxQueueSize()
		var kept string
		if q > 0 {
			kept = "; its default_queue_policy.max_queue_size is kept: it bounds the requests of the model each gpu-let's executor holds"
		}
		if qp := db.GetDefaultQueuePolicy(); qp.GetDefaultTimeoutMicroseconds() > 0 || qp.GetAllowTimeoutOverride() {
			kept += "; its default_queue_policy's timeout is kept: a request not answered within it is refused"
		}
		if db.PriorityLevels > 1 {
			kept += "; its priority levels are kept: at overload the lower ones give way"
		}
		if len(db.PriorityQueuePolicy) > 0 {
			kept += "; its priority_queue_policy is kept"
		}
		// A block of what takes effect (a queue bound, as YAMLOverTriton
		// writes config.yaml's max_queue, queue policies and priority
		// levels): nothing to say.
		rest := proto.Clone(db).(*tritonpb.ModelDynamicBatching)
		rest.PriorityLevels, rest.DefaultPriorityLevel, rest.PriorityQueuePolicy, rest.DefaultQueuePolicy = 0, 0, nil, nil // noted apart
		if kept == "" || !proto.Equal(rest, &tritonpb.ModelDynamicBatching{}) {
			note("%s ignored: gpuletd forms batches itself, as large as the SLO allows, waiting only while every queued request still meets its SLO (max_batch_size still bounds them)%s", what, kept)
		}
	}
	if len(pc.InstanceGroup) > 0 {
		limited := slices.ContainsFunc(pc.InstanceGroup, func(g *tritonpb.ModelInstanceGroup) bool { return g.RateLimiter != nil })
		why := ""
		if limited {
			why = "; its rate_limiter too: gpuletd shares the GPUs by each model's SLO and load, not by named resources"
		}
		note("instance_group ignored: gpuletd's planner decides how many copies run and on which gpu-lets%s", why)
	}
	if len(pc.ModelWarmup) > 0 {
		note("model_warmup: gpuletd warms every copy with batches of zeros while it profiles the model; " +
			"the dims its first request gives an input with dynamic dimensions are the sizes it profiles them at, unless the parameter profile_shapes gives them")
	}
	if pc.GetModelTransactionPolicy().GetDecoupled() {
		bad("model_transaction_policy.decoupled: models that answer with several responses are not served")
	}
}

// warmupShapes are the dims a model_warmup request gives its inputs, by
// name (none given: none).
func warmupShapes(w *tritonpb.ModelWarmup) map[string][]int64 {
	var out map[string][]int64
	for name, in := range w.Inputs {
		if len(in.Dims) == 0 {
			continue
		}
		if out == nil {
			out = map[string][]int64{}
		}
		out[name] = slices.Clone(in.Dims)
	}
	return out
}

// parsePathAccuracy reads a path_accuracy table: comma-separated entries
// path=accuracy, a path being model names joined by "/", an accuracy in
// [0, 1].
func parsePathAccuracy(v string) (map[string]float64, error) {
	out := map[string]float64{}
	for _, entry := range strings.Split(v, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		path, acc, ok := strings.Cut(entry, "=")
		path = strings.TrimSpace(path)
		if !ok {
			return nil, fmt.Errorf("%q is not path=accuracy, such as \"detector/classifier-lite=0.82\"", entry)
		}
		for _, name := range strings.Split(path, "/") {
			if !validName.MatchString(name) {
				return nil, fmt.Errorf("%q: %q is not a model name", entry, name)
			}
		}
		a, err := strconv.ParseFloat(strings.TrimSpace(acc), 64)
		if err != nil || !(a >= 0 && a <= 1) {
			return nil, fmt.Errorf("%q: the accuracy is not a share in [0, 1]", entry)
		}
		if _, dup := out[path]; dup {
			return nil, fmt.Errorf("path %q is given twice", path)
		}
		out[path] = a
	}
	if len(out) == 0 {
		return nil, errors.New("empty; give path=accuracy entries, such as \"detector/classifier-lite=0.82\"")
	}
	return out, nil
}
