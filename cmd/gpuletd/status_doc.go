package main

import (
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gpulet/gpuletd/internal/bytefmt"
)

// adminStatus is the part of GET /api/v1/status the tables show.
type adminStatus struct {
	Version         string             `json:"version"`
	Ready           bool               `json:"ready"`
	Started         *time.Time         `json:"started"`     // nil from a daemon that does not say
	GRPCListen      *string            `json:"grpc_listen"` // nil from a daemon that does not say
	MetricsListen   string             `json:"metrics_listen"`
	ModelConfigName string             `json:"model_config_name"`
	Policy          string             `json:"policy"`
	Algorithm       string             `json:"algorithm"`
	Devices         []adminDevice      `json:"devices"`
	Engine          adminEngine        `json:"engine"`
	Store           adminStore         `json:"store"`
	Summary         string             `json:"summary"`
	WaitingFor      []string           `json:"waiting_for"`
	Profiling       *adminProfiling    `json:"profiling"`
	ProfiledBeside  []adminBeside      `json:"profiled_beside"`
	NotReadyFor     []string           `json:"not_ready_for"`
	NotLoaded       []string           `json:"not_loaded"`
	Unloaded        []string           `json:"unloaded"`
	Gpulets         []adminGpulet      `json:"gpulets"`
	Models          []adminModel       `json:"models"`
	Pipelines       []adminPipeline    `json:"pipelines"`
	Plan            *adminPlan         `json:"plan"`
	PlanAt          *time.Time         `json:"plan_at"`
	PlanReason      string             `json:"plan_reason"`
	Reorganizations int64              `json:"reorganizations"`
	Restarts        int64              `json:"executor_restarts"`
	RecentProblems  *adminProblems     `json:"recent_problems"` // nil from a daemon that does not count them
	Capacity        *adminCapacity     `json:"capacity"`        // nil before a plan with load, or from a daemon that does not say
	RequestPath     *adminRequestPath  `json:"request_path"`    // nil before it was measured, or from a daemon that does not say
	Cache           *adminCacheUse     `json:"response_cache"`
	TLS             *adminTLS          `json:"tls"`
	Memory          *adminCgroupMemory `json:"memory"`        // nil where the daemon has no memory cgroup to read
	CPUMemory       *adminCPUMemory    `json:"cpu_memory"`    // nil without a CPU device, before a plan, or from a daemon that does not say
	Connections     *adminConnections  `json:"connections"`   // nil from a daemon that does not say
	RequestBytes    *adminRequestBytes `json:"request_bytes"` // nil from a daemon that does not say
}

// adminRequestBytes is the request bytes in flight against
// limits.max_inflight_bytes, and each model's share of them.
type adminRequestBytes struct {
	Held    int64            `json:"held"`
	Max     int64            `json:"max"`
	Refused int64            `json:"refused"`
	Models  map[string]int64 `json:"models"`
	// Beside is what requests hold beside their bodies, in a budget as
	// large as Max.
	Beside int64 `json:"beside"`
}

// words says them in the status's header when they matter: some requests
// were refused for want of room, or two thirds of either budget are held
// (one model's flood takes about three quarters); "" otherwise. It names
// the three models holding the most.
func (r *adminRequestBytes) words() string {
	if r == nil || r.Max <= 0 || (r.Refused == 0 && max(r.Held, r.Beside)*3 < r.Max*2) {
		return ""
	}
	line := fmt.Sprintf("request bytes in flight: %s of %s (limits.max_inflight_bytes)", bytefmt.Size(r.Held), bytefmt.Size(r.Max))
	if r.Beside > 0 {
		line += fmt.Sprintf(", and %s of as much beside them (decoded inputs, outputs)", bytefmt.Size(r.Beside))
	}
	models := make([]string, 0, len(r.Models))
	for m := range r.Models {
		models = append(models, m)
	}
	sort.Slice(models, func(i, j int) bool {
		a, b := r.Models[models[i]], r.Models[models[j]]
		return a > b || (a == b && models[i] < models[j])
	})
	if len(models) > 0 {
		var held []string
		for _, m := range models[:min(3, len(models))] {
			held = append(held, fmt.Sprintf("%s %s", m, bytefmt.Size(r.Models[m])))
		}
		if len(models) > 3 {
			held = append(held, fmt.Sprintf("%d more", len(models)-3))
		}
		line += ": " + strings.Join(held, ", ")
	}
	if r.Refused > 0 {
		line += fmt.Sprintf("; %d refused for want of room since the start (memory_budget)", r.Refused)
	}
	return line
}

// adminConnections is the client connections against
// limits.max_connections.
type adminConnections struct {
	Open    int64 `json:"open"`
	Max     int64 `json:"max"`
	Refused int64 `json:"refused"`
}

// words says them in the status's header when they matter: some were
// refused over the cap, or nine tenths of it are open; "" otherwise.
func (c *adminConnections) words() string {
	if c == nil || c.Max <= 0 || (c.Refused == 0 && c.Open*10 < c.Max*9) {
		return ""
	}
	line := fmt.Sprintf("connections: %d of %d open (limits.max_connections)", c.Open, c.Max)
	if c.Refused > 0 {
		line += fmt.Sprintf(", %d refused over it since the start (health checks and scrapes are answered over it)", c.Refused)
	}
	return line
}

// adminCgroupMemory is the daemon's memory cgroup, its executors' memory
// with its own.
type adminCgroupMemory struct {
	Cgroup     string `json:"cgroup"`
	WorkingSet int64  `json:"working_set_bytes"`
	Limit      int64  `json:"limit_bytes"`
	LimitOf    string `json:"limit_of"`
	OOMKills   int64  `json:"oom_kills"`
	NearLimit  bool   `json:"near_limit"` // the daemon's word: past 90% of the limit
}

// words says it in the status's header: a line, and a second with what to
// do when the working set is near the limit.
func (m *adminCgroupMemory) words() string {
	var b strings.Builder
	fmt.Fprintf(&b, "memory: %s", bytefmt.Size(m.WorkingSet))
	if m.Limit > 0 {
		fmt.Fprintf(&b, " of a %s limit (%.0f%%)", bytefmt.Size(m.Limit), 100*float64(m.WorkingSet)/float64(m.Limit))
	} else {
		b.WriteString(", no limit")
	}
	// The path and the kills keep their words together: a clause that would
	// push the line past 80 columns starts a line of its own.
	clause := func(sep, text string) {
		line := b.String()[strings.LastIndex(b.String(), "\n")+1:]
		if utf8.RuneCountInString(line+sep+" "+text) <= 80 {
			b.WriteString(sep + " " + text)
		} else {
			b.WriteString(sep + "\n  " + text)
		}
	}
	clause(",", "cgroup "+m.Cgroup)
	if m.OOMKills > 0 {
		clause(";", counted(m.OOMKills, "out-of-memory kill")+" since it started")
	}
	if m.NearLimit {
		fmt.Fprintf(&b, "\n  near the limit: at it the kernel kills an executor; raise MemoryMax= of %s (systemctl edit gpuletd) or place fewer models", m.LimitOf)
	}
	return b.String()
}

// adminPlan is the part of the status's plan the command says.
type adminPlan struct {
	// Spread: planned for an idle node (gpulet.Plan.Spread).
	Spread bool `json:"spread"`
}

// spreadWords say what a plan of an idle node is.
const spreadWords = "planned for no traffic: each model has an equal share of the GPUs' time, as much as the node holds, so that a load that begins is served from its first request; the planned rates are that room, not load"

// adminCapacity is how far the planned load may grow, in the same mix,
// before the planner cannot place it all.
type adminCapacity struct {
	Ratio   float64 `json:"ratio"`
	Load    float64 `json:"load"`
	Rate    float64 `json:"rate"`
	AtLeast bool    `json:"at_least"`
	CPU     bool    `json:"cpu"`
	// ExecutorPathUS is the executors' CPU per request the estimate
	// counted on the CPU, DaemonPathUS the daemon's, which it did not; 0
	// before they were measured.
	ExecutorPathUS float64 `json:"executor_path_us"`
	DaemonPathUS   float64 `json:"daemon_path_us"`
}

// words says it in a line of the status's header; spread: the plan is an
// idle node's (Spread), whose planned rates are room, not load, so that
// only the rate it would hold says anything.
func (c *adminCapacity) words(spread bool) string {
	rate := func(r float64) string { return strings.TrimSuffix(perSecond(r), "/s") + " req/s" }
	ratio := fmt.Sprintf("%.1f×", c.Ratio)
	if c.Ratio >= 10 {
		ratio = fmt.Sprintf("%.0f×", c.Ratio)
	}
	atLeast := ""
	switch {
	case c.AtLeast:
		atLeast = "≥"
	case c.Ratio == 0:
		// Not even a hundredth of the load fits: the mix, not the load.
		return fmt.Sprintf("capacity (planner's estimate): none: however light the %s planned for,\n  the plan leaves a model out (below: which, and why)", rate(c.Load))
	case c.Ratio < 1:
		return fmt.Sprintf("capacity (planner's estimate): %s the %s planned for: overloaded", ratio, rate(c.Load))
	}
	line := fmt.Sprintf("capacity (planner's estimate): %s%s the %s planned for, %s%s", atLeast, ratio, rate(c.Load), atLeast, rate(c.Rate))
	if spread {
		line = fmt.Sprintf("capacity (planner's estimate): %s%s in all, in the planned mix", atLeast, rate(c.Rate))
	}
	if utf8.RuneCountInString(line) > 80 { // a terminal's width
		line = strings.Replace(line, " planned for, ", " planned for,\n  ", 1)
	}
	switch {
	case c.CPU && c.ExecutorPathUS+c.DaemonPathUS > 0:
		line += fmt.Sprintf("\n  on the CPU it counts the executors' %s of CPU a request; the daemon's\n  %s shares the cores too: gpuletd load --rate-range measures what it serves",
			millis(c.ExecutorPathUS/1000), millis(c.DaemonPathUS/1000))
	case c.CPU:
		line += "\n  on the CPU it counts the models' compute alone, and the request path\n  shares those cores: gpuletd load --rate-range measures what it serves"
	}
	return line
}

// adminRequestPath is the CPU one request takes beyond its model's run, as
// the daemon last measured it.
type adminRequestPath struct {
	PerRequestUS float64 `json:"per_request_us"`
	DaemonUS     float64 `json:"daemon_us"`
	// ExecutorsUS is nil where the daemon did not measure it (only the
	// CPU's gpu-lets of one core do).
	ExecutorsUS *float64  `json:"executors_us"`
	Answered    int64     `json:"answered"`
	At          time.Time `json:"at"`
}

// words says it in a line of the status's header.
func (p *adminRequestPath) words() string {
	over := fmt.Sprintf("over %s to %s", counted(p.Answered, "request"), p.At.Local().Format(time.TimeOnly))
	if p.ExecutorsUS == nil {
		return fmt.Sprintf("request path: %s of the daemon's CPU a request (executors' measured on CPU gpu-lets of one core alone), %s",
			millis(p.DaemonUS/1000), over)
	}
	return fmt.Sprintf("request path: %s of CPU a request (daemon %s, executor %s), %s",
		millis(p.PerRequestUS/1000), millis(p.DaemonUS/1000), millis(*p.ExecutorsUS/1000), over)
}

// adminProblems counts the warning and error events of the status's
// window (the last hour).
type adminProblems struct {
	Window   string `json:"window"`
	Warnings int64  `json:"warnings"`
	Errors   int64  `json:"errors"`
}

// adminTLS is the listeners' certificate (nil: plain text).
type adminTLS struct {
	Subject            string    `json:"subject"`
	NotAfter           time.Time `json:"not_after"`
	ClientCertificates bool      `json:"client_certificates"`
}

// adminCacheUse is what the response cache holds (nil: none kept).
type adminCacheUse struct {
	Budget  int64 `json:"budget_bytes"`
	Bytes   int64 `json:"bytes"`
	Entries int64 `json:"entries"`
}

// adminProfiling is the profile job the daemon's start runs now, or one
// beside the serving gpu-lets (Beside) with Queued more to come.
type adminProfiling struct {
	Model   string    `json:"model"`
	Device  string    `json:"device"`
	Since   time.Time `json:"since"`
	Profile int       `json:"profile"`
	Of      int       `json:"of"`
	Beside  bool      `json:"beside"`
	Queued  int       `json:"queued"`
}

// words says what is profiled, where and since when.
func (p *adminProfiling) words() string {
	since := p.Since.Local().Format(time.TimeOnly)
	if !p.Beside {
		return fmt.Sprintf("profiling %s on %s since %s (profile %d of %d)", p.Model, p.Device, since, p.Profile, p.Of)
	}
	more := ""
	if p.Queued > 0 {
		more = fmt.Sprintf(" (%d more to profile)", p.Queued)
	}
	return fmt.Sprintf("profiling %s on %s beside the serving gpu-lets since %s%s", p.Model, p.Device, since, more)
}

// adminBeside is a profile run another process (gpuletd profile) measures
// now on the daemon's devices.
type adminBeside struct {
	By         string    `json:"by"`
	Models     []string  `json:"models"`
	SHA256     string    `json:"sha256"`
	DeviceType string    `json:"device_type"`
	Since      time.Time `json:"since"`
}

// words says who measures what beside the serving gpu-lets, since when.
func (b *adminBeside) words() string {
	what := strings.Join(b.Models, ", ")
	if what == "" {
		what = "a model file it does not serve (sha256 " + clip(b.SHA256, 13) + ")"
	}
	return fmt.Sprintf("%s measures %s on %s beside the serving gpu-lets since %s",
		b.By, what, b.DeviceType, b.Since.Local().Format(time.TimeOnly))
}

// adminStore is the state of the daemon's database.
type adminStore struct {
	Writable bool   `json:"writable"`
	Reason   string `json:"reason"`
}

// adminEngine is the GPU engine check of the status.
type adminEngine struct {
	GPUs      int    `json:"gpus"`
	UsingGPUs bool   `json:"using_gpus"`
	Provider  string `json:"provider"`
	Reason    string `json:"reason"`
	Fix       string `json:"fix"`
	// Asked is the configured provider when another serves (see
	// ProviderNote, ProviderFix).
	Asked        string `json:"asked"`
	ProviderNote string `json:"provider_note"`
	ProviderFix  string `json:"provider_fix"`
}
