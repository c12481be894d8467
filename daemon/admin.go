package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"time"

	"github.com/gorilla/mux"
	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/internal/version"
	"github.com/gpulet/gpuletd/mps"
	"github.com/gpulet/gpuletd/profiler/store"
)

func (n *node) adminRoutes(r *mux.Router) {
	r.HandleFunc("/status", n.handleStatus).Methods(http.MethodGet)
	r.HandleFunc("/models", n.handleAdminModels).Methods(http.MethodGet)
	r.HandleFunc("/models/{model}", n.handleAdminModel).Methods(http.MethodGet)
	r.HandleFunc("/models/{model}/profile", n.handleAdminProfile).Methods(http.MethodGet)
	r.Handle("/models/{model}/check", n.adminOnly(http.HandlerFunc(n.handleAdminLoadCheck))).Methods(http.MethodPost)
	r.Handle("/models/{model}/quarantine", n.adminOnly(http.HandlerFunc(n.handleLiftQuarantine))).Methods(http.MethodDelete)
	r.Handle("/models", n.adminOnly(http.HandlerFunc(n.handleAdminRegister))).Methods(http.MethodPost)
	r.HandleFunc("/plan", n.handleAdminPlan).Methods(http.MethodGet)
	r.HandleFunc("/plan/preview", n.handleAdminPreview).Methods(http.MethodPost)
	r.Handle("/reorganize", n.adminOnly(http.HandlerFunc(n.handleAdminReorganize))).Methods(http.MethodPost)
	r.HandleFunc("/events", n.handleAdminEvents).Methods(http.MethodGet)
	r.HandleFunc("/events/stream", n.handleAdminEventStream).Methods(http.MethodGet)
	r.Handle("/backup", n.adminOnly(http.HandlerFunc(n.handleAdminBackup))).Methods(http.MethodGet)
}

// statusModel is one model in the admin status.
type statusModel struct {
	Name    string  `json:"name"`
	Version int     `json:"version"`
	SLOMS   float64 `json:"slo_ms"`
	// SLOFrom says where the SLO came from: config.yaml, config.pbtxt
	// parameters or default_slo.
	SLOFrom      string `json:"slo_from,omitempty"`
	MaxBatchSize int    `json:"max_batch_size"`
	// MaxQueue is how many of its requests each of its gpu-lets' executors
	// holds: its own bound (max_queue) below the server's, else the server's.
	MaxQueue int `json:"max_queue"`
	// PriorityLevels is how many priority levels its requests may ask for
	// (0: none), DefaultPriority the level of those that ask for none.
	PriorityLevels  int `json:"priority_levels,omitempty"`
	DefaultPriority int `json:"default_priority_level,omitempty"`
	// QueuePolicies are the model's queue policies that ask something
	// (repository.QueuePolicies).
	QueuePolicies []repository.QueuePolicyStatus `json:"queue_policies,omitempty"`
	// ConfigFiles are the configuration files read; ConfigNotes say which
	// of their fields took no effect and why.
	ConfigFiles  []string `json:"config_files,omitempty"`
	ConfigNotes  []string `json:"config_notes,omitempty"`
	Rate         float64  `json:"rate"`      // over the last second
	RateEWMA     float64  `json:"rate_ewma"` // what the planner plans for
	AssignedRate float64  `json:"assigned_rate"`
	// ExtraHeadroom is the headroom the miss rule adds to the model's
	// plans over the node's (0.25: 25% of its estimate more), after it
	// missed its SLO on a plan that held none of its demand back; it fades
	// while the model stays within (control.Misses).
	ExtraHeadroom float64 `json:"extra_headroom,omitempty"`
	Unscheduled   float64 `json:"unscheduled_rate,omitempty"`
	Ready         bool    `json:"ready"`
	// State is ready, waiting (on its way to a gpu-let, or back to one)
	// or unservable, as gpuletd_model_state says it.
	State string `json:"state"`
	// Reason says why a model that is not ready is not served.
	Reason string `json:"reason,omitempty"`
	// Warnings say what keeps a served model from serving its requests:
	// placements where a batch of one misses its SLO (slowstart.go), a
	// smallest request above limits.max_request_body (requestlimit.go), a
	// folder that no longer loads while the model serves what it was
	// loaded from before (loadFailed).
	Warnings []string    `json:"warnings,omitempty"`
	Placed   []string    `json:"placed_on"`
	Window   windowStats `json:"recent"`
	// Answered and Failed count the model's requests since the daemon
	// started (the statistics extension's success and fail);
	// LastRequest is when the newest of them ended, nil before the first.
	Answered    int64      `json:"answered"`
	Failed      int64      `json:"failed"`
	LastRequest *time.Time `json:"last_request,omitempty"`
	// Cache is the response cache's account of a model that enables it.
	Cache *statusCache `json:"response_cache,omitempty"`
	// Sequences is a stateful model's sequence batching; absent for other
	// models.
	Sequences *statusSequences `json:"sequences,omitempty"`
	// Runtime is how ONNX Runtime opens a model whose configuration says
	// (custom operator libraries, graph optimizations); absent for others.
	Runtime *statusRuntime `json:"onnxruntime,omitempty"`
}

// statusRuntime is how ONNX Runtime opens a model: the custom operator
// libraries it loads first (paths), and the graph optimizations it runs
// when not all of them ("basic", "extended").
type statusRuntime struct {
	OpLibraries       []string `json:"op_libraries,omitempty"`
	GraphOptimization string   `json:"graph_optimization,omitempty"`
}

// runtimeStatus is m's statusRuntime; nil for a model ONNX Runtime opens
// as it opens any.
func runtimeStatus(m *repository.Model) *statusRuntime {
	if len(m.OpLibraries) == 0 && m.Config.GraphLevel.All() {
		return nil
	}
	return &statusRuntime{OpLibraries: m.OpLibraries, GraphOptimization: m.Config.GraphLevel.Limit()}
}

// statusSequences is a stateful model's sequences (sequence_batching): how
// many are live, how long one may idle, how many may be live at once, and
// the tensors the daemon fills ("START (start)", "ACC from ACC_NEXT").
type statusSequences struct {
	Live     int      `json:"live"`
	IdleMS   float64  `json:"idle_ms"`
	Max      int      `json:"max"`
	Controls []string `json:"controls,omitempty"`
	States   []string `json:"states,omitempty"`
}

// sequencesStatus is m's statusSequences; nil for a model without
// sequence batching.
func (n *node) sequencesStatus(m *repository.Model) *statusSequences {
	s := m.Config.Sequence
	if s == nil {
		return nil
	}
	out := &statusSequences{Live: n.seqs.live(m, time.Now()), IdleMS: ms(s.Idle), Max: s.MaxSequences}
	for _, c := range s.Controls {
		out.Controls = append(out.Controls, fmt.Sprintf("%s (%s)", c.Input, c.Kind.Purpose()))
	}
	for _, st := range s.States {
		out.States = append(out.States, fmt.Sprintf("%s from %s", st.Input, st.Output))
	}
	return out
}

// statusCache is a model's use of the response cache: its look-ups, or
// why the node keeps no cache for it.
type statusCache struct {
	Hits   int64 `json:"hits"`
	Misses int64 `json:"misses"`
	// Rate is the requests per second the cache answered over the last
	// second: none of them is in the model's rate, which is what the
	// planner provisions gpu-lets for.
	Rate float64 `json:"rate"`
	Off  string  `json:"off,omitempty"`
}

// cacheStatus is m's statusCache; nil when m does not enable the cache.
func (n *node) cacheStatus(m *repository.Model) *statusCache {
	if !m.Config.ResponseCache {
		return nil
	}
	c := n.counters.of(m.Name)
	s := &statusCache{Hits: c.cacheHit.count.Load(), Misses: c.cacheMiss.count.Load(), Rate: n.rates.cachedRate(m.Name)}
	if !n.cache.on() {
		s.Off = "the node keeps none (response_cache.size 0)"
	}
	return s
}

// status is GET /api/v1/status.
type status struct {
	Version string `json:"version"`
	Ready   bool   `json:"ready"`
	// Summary is the rest in a line, as systemd's status shows it
	// (statusLine).
	Summary string `json:"summary"`
	Listen  string `json:"listen"`
	// GRPCListen is the gRPC listener's address; empty when it is off.
	GRPCListen string `json:"grpc_listen"`
	// MetricsListen is the address of the listener that serves /metrics
	// alone; empty when there is none (/metrics is on Listen).
	MetricsListen string `json:"metrics_listen"`
	// ModelConfigName is model_config_name: the configs/NAME.pbtxt a
	// model folder serves where it has one; empty: config.pbtxt. A load
	// that sends a folder of its own (gpuletd models load --from) picks
	// the same file.
	ModelConfigName string `json:"model_config_name"`
	// Started is when the daemon started.
	Started    time.Time    `json:"started"`
	Policy     string       `json:"policy"`
	Algorithm  string       `json:"algorithm"`
	Devices    []mps.Device `json:"devices"`
	Engine     engineStatus `json:"engine"`
	Store      storeStatus  `json:"store"`
	WaitingFor []string     `json:"waiting_for,omitempty"`
	// Profiling is the profile job the start runs now; nil when none.
	Profiling *profilingStatus `json:"profiling,omitempty"`
	// ProfiledBeside are the profile runs other processes (gpuletd
	// profile) measure now on the node's devices.
	ProfiledBeside []besideProfile `json:"profiled_beside,omitempty"`
	// NotReadyFor are the models that cannot be served while
	// strict_readiness holds the server not ready for them.
	NotReadyFor []string `json:"not_ready_for,omitempty"`
	// NotLoaded are the repository's folders startup_models left out that
	// nothing loaded since.
	NotLoaded []string `json:"not_loaded,omitempty"`
	// Unloaded are the models and pipelines the repository API unloaded
	// that nothing loaded since.
	Unloaded        []string         `json:"unloaded,omitempty"`
	Gpulets         []statusGpulet   `json:"gpulets"`
	Models          []statusModel    `json:"models"`
	Pipelines       []statusPipeline `json:"pipelines"`
	Plan            *gpulet.Plan     `json:"plan"`
	PlanAt          *time.Time       `json:"plan_at,omitempty"`
	PlanReason      string           `json:"plan_reason,omitempty"`
	Reorganizations int64            `json:"reorganizations"`
	Restarts        int64            `json:"executor_restarts"`
	// RecentProblems counts the warning and error events of the last hour.
	RecentProblems recentProblems `json:"recent_problems"`
	// Capacity is how far the planned load may grow, in the same mix,
	// before the planner cannot place it all; nil before a plan with load.
	Capacity *capacityStatus `json:"capacity,omitempty"`
	// RequestPath is the CPU one request takes beyond its model's run, as
	// last measured; nil before a period answered enough requests.
	RequestPath *requestPathStatus `json:"request_path,omitempty"`
	// Cache is what the response cache holds; nil when the node keeps none.
	Cache *cacheUsage `json:"response_cache,omitempty"`
	// TLS is the listeners' certificate; nil when they serve plain text.
	TLS *tlsStatus `json:"tls,omitempty"`
	// Memory is the daemon's memory cgroup, its executors' memory with
	// its own; nil where there is none to read.
	Memory *memoryStatus `json:"memory,omitempty"`
	// CPUMemory is what bounds the models of the CPU device and what the
	// plan places there; nil without a CPU device or before a plan.
	CPUMemory *cpuMemoryStatus `json:"cpu_memory,omitempty"`
	// Connections are the client connections against
	// limits.max_connections; nil before the listener opened.
	Connections *connectionsStatus `json:"connections,omitempty"`
	// RequestBytes are the request bytes in flight against
	// limits.max_inflight_bytes; nil in a node without the budget.
	RequestBytes *requestBytesStatus `json:"request_bytes,omitempty"`
}

// requestBytesStatus is the request body bytes held in flight within
// limits.max_inflight_bytes, the budget, what requests hold beside their
// bodies in a budget as large (decoded inputs, outputs), what was refused
// for want of room in either since the start (gpuletd_http_inflight_*),
// and what each model's requests hold of both (models holding none are
// left out).
type requestBytesStatus struct {
	Held    int64            `json:"held"`
	Beside  int64            `json:"beside"`
	Max     int64            `json:"max"`
	Refused int64            `json:"refused"`
	Models  map[string]int64 `json:"models"`
}

// connectionsStatus is the client connections open within
// limits.max_connections, the cap, and what was refused over it since the
// start (gpuletd_http_connections*).
type connectionsStatus struct {
	Open    int64 `json:"open"`
	Max     int64 `json:"max"`
	Refused int64 `json:"refused"`
}

// tlsStatus is the certificate the listeners serve, and whether they ask
// clients for theirs.
type tlsStatus struct {
	Subject            string    `json:"subject"`
	NotAfter           time.Time `json:"not_after"`
	ClientCertificates bool      `json:"client_certificates"`
}

func (n *node) status() status {
	ready, waiting, unservable := n.readiness()
	inv := n.inventory()
	rest, grpcAt, metricsAt := n.listeners()
	s := status{
		Version: version.Version, Started: n.started, Ready: ready, WaitingFor: waiting, NotReadyFor: unservable, NotLoaded: n.catalog.notLoadedNames(), Unloaded: n.catalog.unloadedNames(), Engine: n.engine, Store: n.storeStatus(), Listen: rest, GRPCListen: grpcAt, MetricsListen: metricsAt, ModelConfigName: n.conf().ModelConfigName,
		Policy: n.conf().Scheduler.Policy, Algorithm: n.conf().Scheduler.Algorithm,
		Devices: inv.Devices, Reorganizations: n.reorganizations.Load(), Restarts: n.sup.restarts.Load(),
		Profiling: n.profiling.Load(), RecentProblems: n.events.recent(time.Now()), Capacity: n.capacity.get(),
		RequestPath: n.path.get(), Memory: n.memoryNow(), CPUMemory: n.cpuMemoryNow(),
	}
	if n.cache.on() {
		u := n.cache.usage()
		s.Cache = &u
	}
	if n.conns != nil {
		s.Connections = &connectionsStatus{Open: n.conns.Open(), Max: n.conns.Max(), Refused: n.conns.Refused()}
	}
	if n.bodies != nil {
		s.RequestBytes = &requestBytesStatus{Held: n.bodies.InUse(), Beside: n.besideInUse(), Max: n.bodies.Max(), Refused: n.budgetRefused(), Models: n.heldByModel()}
	}
	if n.tls != nil {
		l := n.tls.leaf()
		s.TLS = &tlsStatus{Subject: l.Subject.String(), NotAfter: l.NotAfter, ClientCertificates: n.tls.clientCAFile != ""}
	}
	cur := n.current.Load()
	if cur != nil {
		s.Plan, s.PlanReason = cur.plan, cur.reason
		at := cur.at
		s.PlanAt = &at
	}
	placedOn := map[string][]string{}
	gls := n.sup.list()
	sort.Slice(gls, func(i, j int) bool { return gls[i].id < gls[j].id })
	for _, g := range gls {
		sg := g.status(inv)
		for _, p := range sg.Models {
			placedOn[p.Name] = append(placedOn[p.Name], g.id)
		}
		s.Gpulets = append(s.Gpulets, sg)
	}
	rates, now := n.rates.estimates(time.Now()), n.rates.current()
	var assigned map[string]float64
	if cur != nil {
		assigned = cur.plan.Assigned()
	}
	routed := n.router.models()
	room := n.room()
	for _, m := range n.catalog.all() {
		state := n.modelState(m.Name, routed)
		sm := statusModel{
			Name: m.Name, Version: m.Version, SLOMS: ms(m.Config.SLO.D()), SLOFrom: m.SLOSource, MaxBatchSize: m.Config.MaxBatchSize,
			MaxQueue: int(queueBound(m, n.conf().Limits.MaxQueuedPerModel)), ConfigFiles: m.ConfigFiles, ConfigNotes: m.Notes,
			PriorityLevels: m.Config.PriorityLevels, DefaultPriority: m.Config.DefaultPriority, QueuePolicies: repository.QueuePolicies(m.Config),
			Rate: now[m.Name], RateEWMA: rates[m.Name], AssignedRate: assigned[m.Name], Ready: state == stateReady, State: state,
			ExtraHeadroom: room.Extra[m.Name], Placed: placedOn[m.Name], Window: n.windows.of(m.Name).stats(),
			Cache: n.cacheStatus(m),
		}
		sm.Warnings = n.modelWarnings(m, sm.Window)
		sm.Sequences = n.sequencesStatus(m)
		sm.Runtime = runtimeStatus(m)
		c := n.counters.of(m.Name)
		sm.Answered, sm.Failed = c.success.count.Load(), c.fail.count.Load()
		if ms := c.last.Load(); ms > 0 {
			last := time.UnixMilli(ms)
			sm.LastRequest = &last
		}
		if cur != nil {
			sm.Unscheduled = cur.plan.Unscheduled[m.Name]
		}
		if sm.Placed == nil {
			sm.Placed = []string{}
		}
		if !sm.Ready {
			sm.Reason = n.notReadyReason(m.Name)
		}
		s.Models = append(s.Models, sm)
	}
	for _, name := range n.catalog.brokenNames() {
		s.Models = append(s.Models, statusModel{Name: name, State: stateUnservable, Reason: n.notServedReason(name), Placed: []string{}})
	}
	if s.Gpulets == nil {
		s.Gpulets = []statusGpulet{}
	}
	if s.Models == nil {
		s.Models = []statusModel{}
	}
	s.Pipelines = n.pipelineStatus()
	s.Summary = statusLine(s)
	return s
}

func (n *node) handleStatus(w http.ResponseWriter, r *http.Request) {
	s := n.status()
	// Read from the database here alone: the systemd status line and the
	// model endpoints, which build the status too, say nothing of it.
	s.ProfiledBeside = n.profiledBeside(r.Context())
	writeJSON(w, http.StatusOK, s)
}

func (n *node) handleAdminModels(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, n.status().Models)
}

func (n *node) handleAdminModel(w http.ResponseWriter, r *http.Request) {
	m, ok := n.servedModel(w, r)
	if !ok {
		return
	}
	if m.Config.Ensemble != nil {
		for _, sp := range n.pipelineStatus() {
			if sp.Name == m.Name {
				writeJSON(w, http.StatusOK, map[string]any{
					"pipeline": sp, "inputs": tensorMetadata(m, m.Inputs), "outputs": tensorMetadata(m, m.Outputs)})
				return
			}
		}
	}
	for _, sm := range n.status().Models {
		if sm.Name == m.Name {
			doc := map[string]any{
				"model": sm, "inputs": tensorMetadata(m, m.Inputs), "outputs": tensorMetadata(m, m.Outputs),
				"file": m.File, "sha256": m.SHA256, "bytes": m.Bytes,
			}
			if len(m.ExternalData) > 0 {
				doc["external_data"] = m.ExternalData
			}
			if n.hasEmulated() { // the curve it takes from the reference set there
				doc["profile"] = m.Profile()
			}
			writeJSON(w, http.StatusOK, doc)
			return
		}
	}
	writeError(w, http.StatusNotFound, "unknown model "+m.Name)
}

// profileDoc is a model's L(b,p) on one device type with its knee.
type profileDoc struct {
	DeviceType string         `json:"device_type"`
	Points     []gpulet.Point `json:"points"`
	KneeSize   int            `json:"knee_size,omitempty"`
	Knee       any            `json:"knee,omitempty"`
	// MemoryMB is what the planner counts for one loaded copy on the
	// device type, and MemorySource where it comes from: config,
	// measured (the profile run's peak resident memory less what its
	// executor held before the load, on the CPU),
	// estimated (from the file's size) or reference set.
	MemoryMB     float64 `json:"memory_mb"`
	MemorySource string  `json:"memory_source"`
	// Unfinished is set when the latest profile run on the device type did
	// not complete (stopped midway, failed): the points may lack sizes or
	// batches the planner could use.
	Unfinished *unfinishedRun `json:"unfinished,omitempty"`
	// Borrowed is set when the model's file has no profile of its own on
	// the device type and is placed with the one of the file it replaced
	// (profile_borrow.go).
	Borrowed *borrowedProfile `json:"borrowed,omitempty"`
	// InputsAt is what the newest complete profile run measured the
	// inputs' dynamic dimensions at (profile_shapes, as perf_analyzer's
	// --shape writes them); "" when at 1, or no run says.
	InputsAt string `json:"inputs_at,omitempty"`
}

// borrowedProfile names the file whose profile a model's file is placed
// with, and the command that measures its own.
type borrowedProfile struct {
	FromSHA256 string `json:"from_sha256"`
	Fix        string `json:"fix"`
}

// hasEmulated says whether the node serves on emulated GPUs, where a model
// takes its latency curve from a reference set (repository.Model.Profile).
func (n *node) hasEmulated() bool {
	return slices.ContainsFunc(n.devices.Inventory().Devices, func(d mps.Device) bool { return d.Kind == mps.KindEmulated })
}

// borrowedProfile is set when m's profile on d is its predecessor's.
func (n *node) borrowedProfile(ctx context.Context, m *repository.Model, d mps.Device) *borrowedProfile {
	l, ok := n.book.loanOf(m.SHA256)
	if !ok || d.Kind == mps.KindEmulated {
		return nil // no store query for the models that borrow nothing
	}
	if _, borrowed, err := n.book.storedLatency(ctx, m.SHA256, d.Type); err != nil || !borrowed {
		return nil
	}
	return &borrowedProfile{FromSHA256: l.From, Fix: measureCommand(m, d)}
}

// unfinishedRun is a profile run that stopped before it measured all its
// points, and the command that completes the profile.
type unfinishedRun struct {
	Status  store.RunStatus `json:"status"`
	Message string          `json:"message"`
	At      time.Time       `json:"at"`
	Fix     string          `json:"fix"`
}

// unfinishedProfile is the latest profile run of m on d when it did not
// complete; nil when it did, or there is none.
func (n *node) unfinishedProfile(ctx context.Context, m *repository.Model, d mps.Device) *unfinishedRun {
	if d.Kind == mps.KindEmulated {
		return nil
	}
	runs, err := n.st.Runs(ctx, m.SHA256, d.Type, 1)
	if err != nil || len(runs) == 0 || (runs[0].Status != store.RunIncomplete && runs[0].Status != store.RunFailed) {
		return nil
	}
	r := runs[0]
	return &unfinishedRun{Status: r.Status, Message: r.Message, At: r.StartedAt,
		Fix: measureCommand(m, d)}
}

func (n *node) handleAdminProfile(w http.ResponseWriter, r *http.Request) {
	m, ok := n.servedModel(w, r)
	if !ok {
		return
	}
	seen := map[string]bool{}
	docs := []profileDoc{}
	for _, d := range n.devices.Inventory().Devices {
		if seen[d.Type] {
			continue
		}
		seen[d.Type] = true
		p, from, err := n.book.profileAndMemory(r.Context(), m, d)
		if err != nil {
			continue
		}
		doc := profileDoc{DeviceType: d.Type, Points: p.Points(), Unfinished: n.unfinishedProfile(r.Context(), m, d),
			Borrowed: n.borrowedProfile(r.Context(), m, d), MemoryMB: p.MemoryMB, MemorySource: from, InputsAt: n.inputsAt(r.Context(), m, d)}
		for i := range doc.Points {
			u := &doc.Points[i].Util // NaN does not go into JSON
			u.SM, u.L2, u.DRAM = jsonNum(u.SM), jsonNum(u.L2), jsonNum(u.DRAM)
		}
		if k, err := gpulet.Knee(p, ms(m.Config.SLO.D())); err == nil {
			doc.Knee = k
			doc.KneeSize = k.Knee
		}
		docs = append(docs, doc)
	}
	writeJSON(w, http.StatusOK, map[string]any{"model": m.Name, "slo_ms": ms(m.Config.SLO.D()), "profiles": docs})
}

func jsonNum(f float64) float64 {
	if f != f {
		return -1
	}
	return f
}

// handleAdminRegister serves a model of the repository (as the repository
// load call does) and places it.
func (n *node) handleAdminRegister(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Name string `json:"name"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&body); err != nil || body.Name == "" {
		writeError(w, http.StatusBadRequest, `want {"name": "<model folder in the repository>"}`)
		return
	}
	r = mux.SetURLVars(r, map[string]string{"model": body.Name})
	n.handleRepoLoad(w, r)
}

func (n *node) handleAdminPlan(w http.ResponseWriter, _ *http.Request) {
	cur := n.current.Load()
	if cur == nil {
		writeError(w, http.StatusServiceUnavailable, "no plan yet")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"plan": cur.plan, "at": cur.at, "reason": cur.reason, "rates": cur.rates})
}

func (n *node) handleAdminReorganize(w http.ResponseWriter, r *http.Request) {
	// Asked for: gpu-lets and executors waiting after a start the kernel
	// killed for memory are tried at once.
	n.sup.oomHolds.clear()
	n.sup.retry.fire()
	if err := n.replan(r.Context(), planAsked, n.planRates()); err != nil {
		writeError(w, http.StatusInternalServerError, "reorganize: "+err.Error())
		return
	}
	cur := n.current.Load()
	out := map[string]any{"plan": cur.plan, "at": cur.at, "saved": true}
	if ok, why := n.st.Writable(); !ok {
		out["saved"] = false
		out["warning"] = "the plan is applied but not saved: the database cannot be written (" + why.Error() + ")"
	}
	writeJSON(w, http.StatusOK, out)
}
