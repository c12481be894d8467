package daemon

import (
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/connlimit"
	"github.com/gpulet/gpuletd/internal/listenfile"
	"github.com/gpulet/gpuletd/internal/memcg"
	"github.com/gpulet/gpuletd/mps"
	"github.com/gpulet/gpuletd/profiler/store"
	"go.uber.org/zap"
)

// node is the daemon's live state: what it serves, on what, and how.
type node struct {
	cfg atomic.Pointer[config.Config] // replaced whole on reload
	// restricted is cfg's auth.restricted_apis read (restrictions).
	restricted atomic.Pointer[restrictedAPIs]
	// tritonSums are Triton's latency summaries, while on (summaries).
	tritonSums atomic.Pointer[tritonSummaries]
	log        *zap.Logger
	started    time.Time // when the daemon started (the status's uptime)
	// uncleanStart: the run before this one recorded no stop (killed,
	// crashed); set once at the start.
	uncleanStart bool
	// capacity is the planned capacity of the newest plan's load.
	capacity capacityBook
	st       *store.Store
	devices  *mps.Manager
	devWatch deviceWatch // the devices' health the plan loop last saw
	catalog  *catalog
	uploads  *uploads // model folders loaded from a load request's files
	book     *profileBook
	sup      *supervisor
	router   *router
	events   *events
	rates    *rateMeter
	// stepRates counts the requests pipeline steps send each model (also
	// in rates): the planner gives those models the pipelines' plans
	// instead (planPipelines).
	stepRates *rateMeter
	metrics   *metrics
	counters  counters
	windows   windows
	conns     *connlimit.Listener // client connections open (nil until listening)
	bodies    *connlimit.Budget   // request body bytes in flight
	// besides is the budget of what requests in flight hold beside their
	// bodies (body_beside.go); besideRatio learns how much that is.
	besides     *connlimit.Budget
	besideRatio besideRatios
	tls         *serverCert // the listeners' TLS certificate; nil: plain HTTP and gRPC
	// bound is where the listeners bound (a port of 0 resolved), once
	// they have; status and the listen record say it.
	bound atomic.Pointer[listenfile.Record]
	// grpc serves the gRPC listener; nil when grpc_listen is empty.
	grpc *grpcFront
	// grpcAnswers holds its large answers until sent (nil: not held).
	grpcAnswers *grpcAnswers
	// memGroup is the memory cgroup the daemon and its executors run in;
	// nil where there is none to read.
	memGroup *memcg.Group
	// hostMem is what bounded the CPU device at the last plan (nil before
	// one, or without a CPU device: readCPUBound); readHost, where a test
	// sets it, reads it in place of /proc and the cgroup.
	hostMem    atomic.Pointer[hostMemory]
	readHost   func() hostMemory
	admission  admission  // models held to their share at overload
	priorities priorities // when each priority level of a model last came
	holds      levelHolds // the requests held of the levels a queue policy bounds
	// crashes tells the requests that crash executors from those batched
	// with them (crash_suspects.go).
	crashes crashSuspects
	misses  missRule // the room models that missed their SLOs on their plans are given
	// path is the request path's CPU per request, which the CPU device's
	// plans count (request_path.go).
	path  requestPath
	pipes pipelinePlans // the pipelines' variant mixes (accuracy scaling)
	seqs  sequences     // stateful models' live sequences

	planMu          sync.Mutex // one plan computed and applied at a time
	previews        gate       // one plan preview computed at a time
	migMu           sync.Mutex // one MIG instance chosen and leased at a time
	current         atomic.Pointer[planned]
	history         planHistory // what of the re-plans the store keeps
	reorganizations atomic.Int64
	gpuletStarts    gpuletStarts // the gpu-lets plans started, by how
	ready           atomic.Bool
	level           *zap.AtomicLevel // the process's log level, changed by reloads
	onnxLib         string
	engine          engineStatus                    // the GPU engine check at start
	shm             *sharedMemory                   // registered system shared-memory regions; nil: none served
	cache           *responseCache                  // answers of models that enable the response cache; nil: none
	traces          *tracer                         // the trace extension's settings and traces; nil: none
	unserved        modelNotes                      // why models are not served
	progress        modelNotes                      // how far models on their way at start have come
	liveNotes       modelNotes                      // how far models profiled beside the serving gpu-lets have come
	stale           modelNotes                      // served models whose folder no longer loads (loadFailed)
	moving          atomic.Pointer[map[string]bool] // the models that served when the reorganization under way began and that its plan places; nil: none under way
	profiling       atomic.Pointer[profilingStatus] // the start's profile job running now; nil: none
	slowStarts      slowStarts                      // placements whose batch of one misses the SLO, reported
	reloaded        chan struct{}                   // the planner loop picks up a new period
	repo            *repoWatch                      // the repository's folders as last read (repo_watch.go)
	live            *liveProfiles                   // models waiting for a profile measured while serving; nil: none are
	retuneFailed    sync.Map                        // "gpulet/model" → the last failed reload's error (retuned)
	sendStep        stepSender                      // how pipeline steps are sent; nil: dispatchAny (a test's fake)
	stopping        atomic.Bool
	stopped         chan struct{} // closed when the daemon stops (beginStop); nil: never
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("{}")
	}
	return b
}

// conf is the configuration in force.
func (n *node) conf() *config.Config { return n.cfg.Load() }
