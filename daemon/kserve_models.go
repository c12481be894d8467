package daemon

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/mux"
	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/internal/version"
	"github.com/gpulet/gpuletd/kserve"
	"github.com/gpulet/gpuletd/kserve/tritonpb"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// servedModel resolves {model} and the optional {version} of a request, or
// answers 404 (503 for a model that cannot be served, with the reason).
func (n *node) servedModel(w http.ResponseWriter, r *http.Request) (*repository.Model, bool) {
	vars := mux.Vars(r)
	m, ierr := n.lookupModel(vars["model"], vars["version"])
	if ierr != nil {
		writeInferError(w, ierr)
		return nil, false
	}
	return m, true
}

// lookupModel resolves a model by name and version (empty: the one served),
// whichever protocol asks.
func (n *node) lookupModel(name, version string) (*repository.Model, *inferError) {
	m, ok := n.catalog.get(name)
	if !ok {
		m, ok = n.catalog.pipeline(name)
	}
	if !ok && n.catalog.broken(name) != nil {
		// In the repository, but it cannot be served: say why.
		return nil, &inferError{code: http.StatusServiceUnavailable, reason: reasonUnservable,
			msg: "model " + strconv.Quote(name) + " cannot be served: " + n.notServedReason(name)}
	}
	if !ok && n.catalog.isNotLoaded(name) {
		return nil, &inferError{code: http.StatusNotFound, reason: reasonUnknownModel,
			msg: "model " + strconv.Quote(name) + " is in the repository but " + reasonNotLoaded + " (gpuletd models load " + name + ")"}
	}
	if at, unloaded := n.catalog.unloadedAt(name); !ok && unloaded {
		return nil, &inferError{code: http.StatusNotFound, reason: reasonUnknownModel,
			msg: "model " + strconv.Quote(name) + " is not served: " + unloadedReason(at) + " (gpuletd models load " + name + ")"}
	}
	if !ok {
		return nil, &inferError{code: http.StatusNotFound, reason: reasonUnknownModel,
			msg: "unknown model " + strconv.Quote(name) + ": it is not in the repository or not loaded" + n.catalog.didYouMean(name)}
	}
	if version == "" || version == strconv.Itoa(m.Version) {
		return m, nil
	}
	if v, err := strconv.Atoi(version); err == nil {
		if mv, ok := n.catalog.get(repository.VersionKey(m.Family, v)); ok {
			return mv, nil
		}
	}
	return nil, &inferError{code: http.StatusNotFound, reason: reasonUnknownModel,
		msg: fmt.Sprintf("model %s has no version %q; versions %v are served", m.Family, version, n.catalog.versions(m.Family))}
}

// versionNames lists the versions of a model family that are served, as
// the protocol's strings.
func (n *node) versionNames(family string) []string {
	vs := n.catalog.versions(family)
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = strconv.Itoa(v)
	}
	return out
}

// serverExtensions are the protocol extensions gpuletd serves, by the names
// Triton gives them (model_configuration: GET /v2/models/M/config and the
// ModelConfig RPC).
var serverExtensions = []string{"binary_tensor_data", "classification", "logging", "model_configuration", "model_repository", "model_repository(unload_dependents)", "statistics", "system_shared_memory", "cuda_shared_memory", "trace"}

func (n *node) handleServerMetadata(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, kserve.ServerMetadata{
		Name: "gpuletd", Version: version.Version,
		Extensions: serverExtensions,
	})
}

// tensorMetadata gives the protocol's shapes: -1 leads for batching models.
// A stateful model's control and state tensors are left out: gpuletd
// fills them.
func tensorMetadata(m *repository.Model, specs []repository.TensorSpec) []kserve.TensorMetadata {
	specs = repository.RequestTensors(specs)
	out := make([]kserve.TensorMetadata, len(specs))
	for i, s := range specs {
		shape := s.Dims
		if m.Config.MaxBatchSize > 0 {
			shape = append([]int64{-1}, s.Dims...)
		}
		out[i] = kserve.TensorMetadata{Name: s.Name, DataType: string(s.DataType), Shape: shape}
	}
	return out
}

func (n *node) handleModelMetadata(w http.ResponseWriter, r *http.Request) {
	m, ok := n.servedModel(w, r)
	if !ok {
		return
	}
	md := modelMetadata{ModelMetadata: kserve.ModelMetadata{
		Name: m.Family, Versions: n.versionNames(m.Family), Platform: platformName(m.Platform),
		Inputs: tensorMetadata(m, m.Inputs), Outputs: tensorMetadata(m, m.Outputs),
	}, State: "READY"}
	if !n.modelReady(m.Name) {
		md.State, md.Reason = "UNAVAILABLE", n.notReadyReason(m.Name)
	}
	writeJSON(w, http.StatusOK, md)
}

// modelMetadata is the protocol's model metadata with the model's state
// and, when it is not served, why (fields KServe clients ignore).
type modelMetadata struct {
	kserve.ModelMetadata
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
}

// platformName is Triton's name for a model's platform.
func platformName(p string) string {
	switch p {
	case repository.PlatformTorchScript:
		return "pytorch_libtorch"
	case repository.PlatformEnsemble:
		return repository.PlatformEnsemble
	}
	return "onnxruntime_onnx"
}

// modelReady says whether the model answers requests: some gpu-let that is
// up serves it (for a pipeline, every model of its steps), and a request of
// it can fit limits.max_request_body (limitRefusal).
func (n *node) modelReady(name string) bool {
	return n.readyIn(name, n.router.models()) && n.limitRefusal(name) == ""
}

// readyIn says whether some gpu-let that is up in routed, the router's
// models at one moment, serves the model, or, for a pipeline, every model
// of its steps: where its requests would go, whether or not they fit the
// request limit.
func (n *node) readyIn(name string, routed map[string][]*gpuletRun) bool {
	if p, ok := n.catalog.pipeline(name); ok {
		steps, err := n.catalog.steps(p)
		if err != nil {
			return false
		}
		for _, s := range steps {
			if !n.readyIn(s.Name, routed) {
				return false
			}
		}
		return true
	}
	for _, g := range routed[name] {
		if !g.down.Load() && !g.draining.Load() && !g.stalled() {
			return true
		}
	}
	return false
}

func (n *node) handleModelReady(w http.ResponseWriter, r *http.Request) {
	if name := mux.Vars(r)["model"]; n.catalog.broken(name) != nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"name": name, "ready": false, "state": stateUnservable, "reason": n.notServedReason(name)})
		return
	}
	m, ok := n.servedModel(w, r)
	if !ok {
		return
	}
	if !n.modelReady(m.Name) {
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"name": m.Family, "version": strconv.Itoa(m.Version), "ready": false,
			"state": n.modelState(m.Name, n.router.models()), "reason": n.notReadyReason(m.Name)})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"name": m.Family, "version": strconv.Itoa(m.Version), "ready": true})
}

func (n *node) handleModelConfig(w http.ResponseWriter, r *http.Request) {
	m, ok := n.servedModel(w, r)
	if !ok {
		return
	}
	tc := tritonConfig(m)
	cfg := map[string]any{
		"name": m.Family, "platform": tc.Platform, "max_batch_size": m.Config.MaxBatchSize,
		"input": configTensors(m, m.Inputs, nil), "output": configTensors(m, m.Outputs, m.Config.LabelFiles),
		"slo_ms": float64(m.Config.SLO.D().Microseconds()) / 1000, "version": m.Version,
		"profile": m.Profile(), "sha256": m.SHA256,
	}
	if tc.Backend != "" {
		cfg["backend"] = tc.Backend
	}
	if db := tc.GetDynamicBatching(); db != nil {
		batching := map[string]any{}
		if qp := db.GetDefaultQueuePolicy(); qp != nil {
			batching["default_queue_policy"] = queuePolicyJSON(qp)
		}
		if len(db.PriorityQueuePolicy) > 0 {
			levels := map[string]any{}
			for level, qp := range db.PriorityQueuePolicy {
				levels[strconv.FormatUint(level, 10)] = queuePolicyJSON(qp)
			}
			batching["priority_queue_policy"] = levels
		}
		if l := db.GetPriorityLevels(); l > 0 {
			batching["priority_levels"], batching["default_priority_level"] = l, db.GetDefaultPriorityLevel()
		}
		cfg["dynamic_batching"] = batching
	}
	if sb := tc.GetSequenceBatching(); sb != nil { // as Triton's JSON writes it
		cfg["sequence_batching"] = protoJSONMap(sb)
	}
	if es := tc.GetEnsembleScheduling(); es != nil { // as Triton's JSON writes it
		var steps []map[string]any
		for _, st := range es.Step {
			steps = append(steps, map[string]any{"model_name": st.ModelName, "model_version": st.ModelVersion,
				"input_map": st.InputMap, "output_map": st.OutputMap})
		}
		cfg["ensemble_scheduling"] = map[string]any{"step": steps}
	}
	if tc.ResponseCache != nil {
		cfg["response_cache"] = map[string]any{"enable": true}
	}
	if tc.DefaultModelFilename != "" {
		cfg["default_model_filename"] = tc.DefaultModelFilename
	}
	if len(tc.CcModelFilenames) > 0 {
		cfg["cc_model_filenames"] = tc.CcModelFilenames
	}
	if ra := tc.GetModelRepositoryAgents(); ra != nil { // as Triton's JSON writes it
		cfg["model_repository_agents"] = protoJSONMap(ra)
	}
	if ops := tc.GetModelOperations(); ops != nil {
		cfg["model_operations"] = protoJSONMap(ops)
	}
	if g := tc.GetOptimization().GetGraph(); g != nil { // the part of it gpuletd reads
		cfg["optimization"] = map[string]any{"graph": map[string]any{"level": g.Level}}
	}
	if shapes := n.profileShapes(m); len(shapes) > 0 {
		cfg["profile_shapes"] = shapes // the sizes gpuletd load sends by default
	}
	if len(tc.Parameters) > 0 { // gpuletd's settings as Triton's JSON writes a config.pbtxt's parameters
		params := map[string]any{}
		for k, v := range tc.Parameters {
			params[k] = map[string]string{"string_value": v.GetStringValue()}
		}
		cfg["parameters"] = params
	}
	writeJSON(w, http.StatusOK, cfg)
}

// configTensor is one tensor of REST's model configuration: the protocol's
// metadata (name, datatype, shape with -1 for the batch) and, beside it,
// Triton's configuration fields (data_type TYPE_*, dims without the batch),
// so that Triton's HTTP clients read it as they read Triton's.
type configTensor struct {
	kserve.TensorMetadata
	TritonType string  `json:"data_type"`
	TritonDims []int64 `json:"dims"`
	// LabelFile is an output's label_filename (classification labels).
	LabelFile string `json:"label_filename,omitempty"`
}

// configTensors describes a model's tensors for REST's configuration: the
// protocol's metadata with Triton's type and dims (as tritonConfig gives
// them) beside it.
func configTensors(m *repository.Model, specs []repository.TensorSpec, labels map[string]string) []configTensor {
	specs = repository.RequestTensors(specs)
	md := tensorMetadata(m, specs)
	out := make([]configTensor, len(specs))
	for i, t := range specs {
		dims := t.Dims
		if dims == nil {
			dims = []int64{} // a scalar: [], not null
		}
		out[i] = configTensor{TensorMetadata: md[i], TritonType: repository.TritonDataType(t.DataType).String(), TritonDims: dims,
			LabelFile: labels[t.Name]}
	}
	return out
}

// modelCounters are the statistics extension's counters of one model.
type modelCounters struct {
	success, fail, queue, compute durCount
	// computeInput and computeOutput are Triton's compute_input and
	// compute_output: readying a request's batch's inputs and its outputs.
	computeInput, computeOutput durCount
	// cacheHit and cacheMiss time the response cache's look-ups (a miss
	// with its insertion), as Triton's cache_hit and cache_miss.
	cacheHit, cacheMiss durCount
	last                atomic.Int64 // unix ms of the last inference
	// batches is Triton's execution_count: the batches the answers handed
	// out ran in, each answer adding its share of its batch's rows.
	batches shareCount
	// inferences is Triton's inference_count: the rows of the answers that
	// ran (a request of n rows counts n; one the response cache answered,
	// none).
	inferences atomic.Int64
	// bySize is Triton's batch_stats.
	bySize batchStats
	// miss counts the outcomes the miss rule judges the plan by.
	miss missTally
	// hop times each answer's round trip outside its executor: to the
	// executor and back, less what the executor held it (hopWarning).
	hop durCount
	// failedAs counts the failures by Triton's reason for them
	// (tritonFailureReason), as nv_inference_request_failure's reason
	// label has them.
	failedAs [len(tritonFailureReasons)]atomic.Int64
}

// shareCount sums shares of a whole, concurrently.
type shareCount struct{ bits atomic.Uint64 }

func (s *shareCount) add(x float64) {
	for {
		old := s.bits.Load()
		if s.bits.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+x)) {
			return
		}
	}
}

// whole is the sum, rounded: the batches that ran.
func (s *shareCount) whole() int64 { return int64(math.Round(math.Float64frombits(s.bits.Load()))) }

type durCount struct{ count, ns atomic.Int64 }

func (d *durCount) add(t time.Duration) {
	d.count.Add(1)
	d.ns.Add(int64(t))
}

func (d *durCount) stat() kserve.StatDuration {
	return kserve.StatDuration{Count: d.count.Load(), NS: d.ns.Load()}
}

// counters holds modelCounters per model.
type counters struct{ m sync.Map }

func (c *counters) of(model string) *modelCounters {
	// Load first: LoadOrStore would allocate a new one per request.
	if v, ok := c.m.Load(model); ok {
		return v.(*modelCounters)
	}
	v, _ := c.m.LoadOrStore(model, &modelCounters{})
	return v.(*modelCounters)
}

func (n *node) handleModelStats(w http.ResponseWriter, r *http.Request) {
	var models []*repository.Model
	if _, named := mux.Vars(r)["model"]; named {
		m, ok := n.servedModel(w, r)
		if !ok {
			return
		}
		models = []*repository.Model{m}
	} else {
		models = n.catalog.all()
	}
	out := kserve.StatisticsResponse{ModelStats: make([]kserve.ModelStatistics, 0, len(models))}
	for _, m := range models {
		out.ModelStats = append(out.ModelStats, n.statisticsOf(m))
	}
	writeJSON(w, http.StatusOK, out)
}

// statisticsOf is model m's statistics, for REST and gRPC alike.
func (n *node) statisticsOf(m *repository.Model) kserve.ModelStatistics {
	c := n.counters.of(m.Name)
	return kserve.ModelStatistics{
		Name: m.Family, Version: strconv.Itoa(m.Version),
		LastInference: c.last.Load(), InferenceCount: c.inferences.Load(), ExecutionCount: c.batches.whole(),
		InferenceStats: map[string]kserve.StatDuration{
			kserve.StatSuccess: c.success.stat(), kserve.StatFail: c.fail.stat(), kserve.StatQueue: c.queue.stat(),
			kserve.StatComputeInput: c.computeInput.stat(), kserve.StatComputeInfer: c.compute.stat(), kserve.StatComputeOutput: c.computeOutput.stat(),
			kserve.StatCacheHit: c.cacheHit.stat(), kserve.StatCacheMiss: c.cacheMiss.stat(),
		},
		BatchStats:    c.bySize.list(),
		MemoryUsage:   n.memoryUsage(m.Name),
		ResponseStats: map[string]map[string]kserve.StatDuration{}, // no decoupled models: {} as Triton writes it
	}
}

// queuePolicyJSON is qp as Triton's model configuration JSON writes it,
// numbers as numbers.
func queuePolicyJSON(qp *tritonpb.ModelQueuePolicy) map[string]any {
	return map[string]any{"timeout_action": qp.GetTimeoutAction().String(), "default_timeout_microseconds": qp.GetDefaultTimeoutMicroseconds(),
		"allow_timeout_override": qp.GetAllowTimeoutOverride(), "max_queue_size": qp.GetMaxQueueSize()}
}

// protoJSONMap is a message as protojson writes it with the .proto's field
// names, as a JSON object to nest in a document.
func protoJSONMap(msg proto.Message) map[string]any {
	b, err := protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}.Marshal(msg)
	out := map[string]any{}
	if err == nil {
		_ = json.Unmarshal(b, &out)
	}
	return out
}
