package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/internal/bytefmt"
	"github.com/gpulet/gpuletd/sim/loadgen"
	"github.com/spf13/cobra"
)

func newStatusCmd(g *globalFlags) *cobra.Command {
	var (
		url    string
		asJSON bool
		short  bool
		watch  time.Duration
	)
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show a running daemon's devices, gpu-lets and models",
		Long: `Ask a running gpuletd (GET /api/v1/status) for its devices, its gpu-lets with
the models placed on them (batch, planned rate, busy ratio) and its models
(measured and assigned rate, SLO, recent attainment and latency, where placed).
The daemon is found at --url, or at the configured listen address.

--watch asks again every 2 s (--watch=5s: every 5 s) until interrupted: on a
terminal the screen is drawn again, as watch(1) does; otherwise each answer
follows the last (with --short, a line each; with --json, a line of JSON
each). A daemon that stops answering meanwhile is said so and asked again.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, err := g.daemon(cmd.ErrOrStderr(), url)
			if err != nil {
				return err
			}
			show := func(w io.Writer, compact bool) error {
				var raw json.RawMessage
				if err := adminFetch(cmd.Context(), d, "/api/v1/status", &raw); err != nil {
					return g.failWithLastRun(cmd.Context(), d, url, err)
				}
				if asJSON && compact {
					var b bytes.Buffer
					if err := json.Compact(&b, raw); err != nil {
						return fmt.Errorf("compact JSON: %w", err)
					}
					_, err := fmt.Fprintln(w, b.String())
					return err
				}
				if asJSON {
					return printRaw(w, raw)
				}
				var s adminStatus
				if err := json.Unmarshal(raw, &s); err != nil {
					return fmt.Errorf("decode status: %w", err)
				}
				if short {
					_, err := fmt.Fprintln(w, s.Summary)
					return err
				}
				return writeStatus(w, d.base, &s)
			}
			if watch <= 0 {
				return show(cmd.OutOrStdout(), false)
			}
			return watchStatus(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), watch, isTerminal(cmd.OutOrStdout()), show)
		},
	}
	addDaemonFlags(cmd, &url, &asJSON)
	cmd.Flags().BoolVar(&short, "short", false, "print one line, as systemctl status shows it: readiness, models, gpu-lets, rate, SLO attainment, what to look at")
	cmd.Flags().DurationVar(&watch, "watch", 0, "ask again every interval until interrupted (--watch: every 2s; --watch=5s)")
	cmd.Flags().Lookup("watch").NoOptDefVal = "2s"
	return cmd
}

// watchStatus shows the status every interval until ctx ends (Ctrl-C):
// on a terminal the screen is cleared and headed by the time first, as
// watch(1) draws it; elsewhere each answer follows the last, compact. A
// failed ask is said (in place of the answer on a terminal, on errW
// elsewhere, so that the answers stay parseable) and tried again.
func watchStatus(ctx context.Context, w, errW io.Writer, every time.Duration, terminal bool, show func(w io.Writer, compact bool) error) error {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		var b bytes.Buffer
		if err := show(&b, !terminal); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			b.Reset()
			line := fmt.Sprintf("%v (asking again every %s)\n", err, every)
			if terminal {
				b.WriteString(line)
			} else {
				fmt.Fprint(errW, line)
			}
		}
		if terminal {
			fmt.Fprintf(w, "\x1b[H\x1b[2JEvery %s: gpuletd status%*s\n\n", every, 40, time.Now().Format(time.DateTime))
		}
		if _, err := w.Write(b.Bytes()); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// addDaemonFlags adds --url and --json, the flags of every command that
// talks to a running daemon.
func addDaemonFlags(cmd *cobra.Command, url *string, asJSON *bool) {
	cmd.Flags().StringVar(url, "url", "", urlUsage)
	cmd.Flags().BoolVar(asJSON, "json", false, "print JSON")
}

// adminTimeout bounds one call to a daemon's admin API (a variable for
// the tests).
var adminTimeout = 10 * time.Second

// adminGet fetches one document of a daemon's API. A daemon that does not
// answer is one clear line and exit status 1.
func adminGet(ctx context.Context, d *daemonAPI, path string, v any) error {
	return d.fail(adminFetch(ctx, d, path, v))
}

// adminFetch is adminGet with the error as loadgen gives it: a
// loadgen.HTTPError for the daemon's error answers.
func adminFetch(ctx context.Context, d *daemonAPI, path string, v any) error {
	cctx, cancel := context.WithTimeout(ctx, adminTimeout)
	defer cancel()
	defer d.client.CloseIdleConnections()
	err := loadgen.GetJSON(cctx, d.client, d.base+path, v)
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		return fmt.Errorf("%w within %s", errNoAnswerInTime, adminTimeout)
	}
	return err
}

// errNoAnswerInTime: a daemon took the connection but did not answer
// within adminTimeout (stopped, hung, or swamped).
var errNoAnswerInTime = errors.New("did not answer")

// fail turns err, from a call to the daemon, into one clear line: "nothing
// answers" (with where the installed service listens instead, d.hint), the
// TLS mismatches, and the daemon's error answers.
func (d *daemonAPI) fail(err error) error {
	base := d.base
	var he *loadgen.HTTPError
	var verify *tls.CertificateVerificationError
	var record tls.RecordHeaderError
	switch {
	case errors.As(err, &verify):
		return &exitError{code: 1, msg: fmt.Sprintf("gpuletd at %s: its certificate is not trusted here (%v): give its certificate as tls.cert_file, or one its issuer signed to the system's roots", base, verify.Err)}
	case errors.Is(err, loadgen.ErrUnreachable) && strings.Contains(err.Error(), "remote error: tls:"):
		return &exitError{code: 1, msg: fmt.Sprintf("gpuletd at %s refused this client (%s): it %s",
			base, err.Error()[strings.Index(err.Error(), "remote error: tls:"):], asksForClientCert)}
	case errors.As(err, &record), errors.Is(err, loadgen.ErrUnreachable) && strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return &exitError{code: 1, msg: "gpuletd at " + base + " does not speak TLS: reach it with --url http://…"}
	case errors.As(err, &he) && he.Code == http.StatusBadRequest && strings.Contains(he.Message, "HTTP request to an HTTPS server"):
		return &exitError{code: 1, msg: "gpuletd at " + base + " speaks TLS: set tls.cert_file (GPULETD_TLS_CERT_FILE) to its certificate, or reach it with --url https://…"}
	case errors.Is(err, loadgen.ErrUnreachable) && strings.HasPrefix(base, "https://") &&
		!errors.Is(err, syscall.ECONNREFUSED) && !errors.As(err, new(*net.DNSError)):
		// Something answered and broke the connection off. A TLS 1.3
		// server checks a client's certificate after the client thinks
		// the handshake done, so its refusal may arrive as a closed or
		// reset connection, or a failed write, rather than an alert.
		return &exitError{code: 1, msg: fmt.Sprintf("gpuletd at %s broke the connection off (%v): if it %s", base, err, asksForClientCert)}
	case errors.Is(err, loadgen.ErrUnreachable):
		msg := "no gpuletd answers at " + base + ": is it running?"
		if hint := d.serviceHint(); hint != "" {
			msg += " (" + hint + ")"
		}
		return &exitError{code: 1, msg: msg}
	case errors.Is(err, errNoAnswerInTime):
		return &exitError{code: 1, msg: fmt.Sprintf("gpuletd at %s took the connection but %v: it is hung or swamped (its log may say which)", base, err)}
	case errors.As(err, &he) && he.Code == http.StatusNotFound:
		return &exitError{code: 1, msg: "gpuletd: " + he.Message}
	case errors.As(err, &he):
		return &exitError{code: 1, msg: fmt.Sprintf("gpuletd: the daemon at %s answered %d %s: %s", base, he.Code, http.StatusText(he.Code), he.Message)}
	}
	return err
}

// printRaw writes a JSON document indented.
func printRaw(w io.Writer, raw json.RawMessage) error {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return fmt.Errorf("indent JSON: %w", err)
	}
	b.WriteByte('\n')
	_, err := w.Write(b.Bytes())
	return err
}

// adminStatus is the part of GET /api/v1/status the tables show.
type adminStatus struct {
	Version         string             `json:"version"`
	Ready           bool               `json:"ready"`
	Started         *time.Time         `json:"started"`     // nil from a daemon that does not say
	GRPCListen      *string            `json:"grpc_listen"` // nil from a daemon that does not say
	MetricsListen   string             `json:"metrics_listen"`
	Policy          string             `json:"policy"`
	Algorithm       string             `json:"algorithm"`
	Devices         []adminDevice      `json:"devices"`
	Engine          adminEngine        `json:"engine"`
	Store           adminStore         `json:"store"`
	Summary         string             `json:"summary"`
	WaitingFor      []string           `json:"waiting_for"`
	Profiling       *adminProfiling    `json:"profiling"`
	NotReadyFor     []string           `json:"not_ready_for"`
	NotLoaded       []string           `json:"not_loaded"`
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
}

// words says them in the status's header when they matter: some requests
// were refused for want of room, or two thirds of the budget are held (one
// model's flood takes about three quarters); "" otherwise. It names the
// three models holding the most.
func (r *adminRequestBytes) words() string {
	if r == nil || r.Max <= 0 || (r.Refused == 0 && r.Held*3 < r.Max*2) {
		return ""
	}
	line := fmt.Sprintf("request bytes in flight: %s of %s (limits.max_inflight_bytes)", bytefmt.Size(r.Held), bytefmt.Size(r.Max))
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
const spreadWords = "no model has traffic: each has an equal share of the GPUs' time, as much as the node holds, so that a load that begins is served from its first request; the planned rates are that room, not load"

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

// words says it in a line of the status's header.
func (c *adminCapacity) words() string {
	rate := func(r float64) string { return strings.TrimSuffix(perSecond(r), "/s") + " req/s" }
	ratio := fmt.Sprintf("%.1f×", c.Ratio)
	if c.Ratio >= 10 {
		ratio = fmt.Sprintf("%.0f×", c.Ratio)
	}
	atLeast := ""
	switch {
	case c.AtLeast:
		atLeast = "≥"
	case c.Ratio < 1:
		return fmt.Sprintf("capacity (planner's estimate): %s the %s planned for: overloaded", ratio, rate(c.Load))
	}
	line := fmt.Sprintf("capacity (planner's estimate): %s%s the %s planned for, %s%s", atLeast, ratio, rate(c.Load), atLeast, rate(c.Rate))
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
	PerRequestUS float64   `json:"per_request_us"`
	DaemonUS     float64   `json:"daemon_us"`
	ExecutorsUS  float64   `json:"executors_us"`
	Answered     int64     `json:"answered"`
	At           time.Time `json:"at"`
}

// words says it in a line of the status's header.
func (p *adminRequestPath) words() string {
	return fmt.Sprintf("request path: %s of CPU a request (daemon %s, executor %s), over %s to %s",
		millis(p.PerRequestUS/1000), millis(p.DaemonUS/1000), millis(p.ExecutorsUS/1000),
		counted(p.Answered, "request"), p.At.Local().Format(time.TimeOnly))
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

// adminDevice is one device of the status.
type adminDevice struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Type    string `json:"type"`
	Backend string `json:"backend"`
	Health  string `json:"health"`
	// HealthDetail says why a device is degraded or failed.
	HealthDetail string `json:"health_detail"`
	// MemoryTotal and MemoryFree are the driver's, on an NVIDIA GPU.
	MemoryTotal uint64 `json:"memory_total"`
	MemoryFree  uint64 `json:"memory_free"`
	// Cores are the CPU device's cores; CPULimit the cgroup's CPU limit
	// that narrowed them from OnlineCores, set by CPULimitOf.
	Cores       []int   `json:"cores"`
	CPULimit    float64 `json:"cpu_limit"`
	CPULimitOf  string  `json:"cpu_limit_of"`
	OnlineCores int     `json:"online_cores"`
	MIG         *struct {
		Instances []struct {
			Profile    string `json:"profile"`
			UUID       string `json:"uuid"`
			Leased     int    `json:"leased"`
			MPSPipeDir string `json:"mps_pipe_dir"`
		} `json:"instances"`
	} `json:"mig"`
}

// cpuLimitText says that the CPU device holds fewer cores than this
// machine lets gpuletd run on, because its cgroup's CPU limit pays for no
// more; "" otherwise.
func (d adminDevice) cpuLimitText() string {
	if d.Kind != "cpu" || d.CPULimit <= 0 {
		return ""
	}
	return cpuLimitWords(d.ID, len(d.Cores), d.OnlineCores, d.CPULimit) + " (" + d.CPULimitOf + ")"
}

// cpuLimitWords says that the CPU device id holds cores of online cores,
// the whole cores its cgroup's CPU limit of limit CPUs pays for (gpuletd
// status and doctor).
func cpuLimitWords(id string, cores, online int, limit float64) string {
	return fmt.Sprintf("%s: %d of %d cores, the whole cores its cgroup's CPU limit of %s CPUs pays for",
		id, cores, online, strconv.FormatFloat(limit, 'f', -1, 64))
}

// memoryText is a GPU's memory in use and its total, as the driver says,
// in whole GiB ("12/80GiB"); for the CPU, what the plan places on it and
// what its models may hold ("1.4/3.9GiB"); "-" for other devices (an
// emulated GPU's memory is its profile set's, with nothing in use to tell).
func (d adminDevice) memoryText(cpu *adminCPUMemory) string {
	gib := func(b uint64, prec int) string { return strconv.FormatFloat(float64(b)/(1<<30), 'f', prec, 64) }
	switch {
	case d.Kind == "cpu" && cpu != nil && cpu.Models > 0:
		return gib(uint64(cpu.Placed), 1) + "/" + gib(uint64(cpu.Models), 1) + "GiB"
	case d.Kind != "nvidia" || d.MemoryTotal == 0:
		return "-"
	}
	return gib(d.MemoryTotal-min(d.MemoryFree, d.MemoryTotal), 0) + "/" + gib(d.MemoryTotal, 0) + "GiB"
}

// adminCPUMemory is what bounds the models of the CPU device (host memory,
// or gpuletd's memory limit, less the daemon's peak) and what the plan
// places there.
type adminCPUMemory struct {
	Models int64  `json:"models_bytes"` // 0: nothing bounds it
	Placed int64  `json:"placed_bytes"`
	From   string `json:"from"`
}

// words says it in the status's header.
func (c *adminCPUMemory) words() string {
	if c.Models <= 0 {
		return "models on the CPU: " + bytefmt.Size(c.Placed) + " placed; " + c.From
	}
	return fmt.Sprintf("models on the CPU: %s placed of the %s they may hold (%s)", bytefmt.Size(c.Placed), bytefmt.Size(c.Models), c.From)
}

// adminGpulet is one running gpu-let of the status.
type adminGpulet struct {
	ID        string           `json:"id"`
	Device    string           `json:"device"`
	Size      int              `json:"size"`
	State     string           `json:"state"`
	PID       int              `json:"pid"`
	Restarts  int              `json:"restarts"`
	BusyRatio float64          `json:"busy_ratio"`
	Policy    string           `json:"policy"`
	Memory    *adminMemory     `json:"memory"`
	Models    []adminPlacement `json:"models"`
	NextTry   *time.Time       `json:"next_try"` // while its dead executor waits to be started again
}

// adminMemory is what a gpu-let's executor holds.
type adminMemory struct {
	HostBytes   int64 `json:"host_bytes"`
	DeviceBytes int64 `json:"device_bytes"`
}

// memoryText is a gpu-let's MEMORY cell: the GPU memory its executor holds
// where NVML lists it, else its resident memory; "-" without a process.
func (g adminGpulet) memoryText() string {
	switch m := g.Memory; {
	case m == nil:
		return "-"
	case m.DeviceBytes > 0:
		return bytefmt.Size(m.DeviceBytes) + " GPU"
	default:
		return bytefmt.Size(m.HostBytes)
	}
}

// adminPlacement is one model on a gpu-let.
type adminPlacement struct {
	Name      string  `json:"name"`
	Batch     int     `json:"batch"`
	Rate      float64 `json:"rate"`
	LatencyMS float64 `json:"latency_ms"`
	MeanBatch float64 `json:"mean_batch"`
	Requests  int64   `json:"requests"`
	Received  int64   `json:"received"`
	Failed    int64   `json:"failed"`
}

// adminModel is one model of the status (GET /api/v1/models).
type adminModel struct {
	Name         string   `json:"name"`
	Version      int      `json:"version"`
	SLOMS        float64  `json:"slo_ms"`
	SLOFrom      string   `json:"slo_from"`
	MaxBatchSize int      `json:"max_batch_size"`
	ConfigFiles  []string `json:"config_files"`
	ConfigNotes  []string `json:"config_notes"`
	Warnings     []string `json:"warnings"`
	Rate         float64  `json:"rate"`
	AssignedRate float64  `json:"assigned_rate"`
	// ExtraHeadroom is what the miss rule adds to the model's headroom.
	ExtraHeadroom float64     `json:"extra_headroom"`
	Unscheduled   float64     `json:"unscheduled_rate"`
	Ready         bool        `json:"ready"`
	Reason        string      `json:"reason"`
	Placed        []string    `json:"placed_on"`
	Recent        adminRecent `json:"recent"`
	Cache         *adminCache `json:"response_cache"`
	Answered      *int64      `json:"answered"` // nil from a daemon that does not count them
	Failed        int64       `json:"failed"`
	LastRequest   *time.Time  `json:"last_request"`
}

// requestsText says how many requests the model had since the daemon
// started and when the last ended; "" from a daemon that does not say.
func (m *adminModel) requestsText(now time.Time) string {
	switch {
	case m.Answered == nil:
		return ""
	case m.LastRequest == nil:
		return "none since the start"
	}
	out := fmt.Sprintf("%d answered", *m.Answered)
	if m.Failed > 0 {
		out += fmt.Sprintf(", %d failed", m.Failed)
	}
	at := m.LastRequest.Local()
	when := at.Format(time.DateTime)
	if at.Format(time.DateOnly) == now.Local().Format(time.DateOnly) {
		when = at.Format(time.TimeOnly) // today
	}
	return out + fmt.Sprintf(" since the start; the last %s ago, at %s", uptime(now.Sub(*m.LastRequest)), when)
}

// adminCache is a model's use of the response cache (nil: not enabled).
type adminCache struct {
	Hits   int64   `json:"hits"`
	Misses int64   `json:"misses"`
	Rate   float64 `json:"rate"` // answered over the last second, outside the model's rate
	Off    string  `json:"off"`
}

// text says how the response cache served a model or pipeline.
func (c *adminCache) text() string {
	if c.Off != "" {
		return "enabled, but off: " + c.Off
	}
	if c.Rate > 0 {
		return fmt.Sprintf("%d hits, %d misses, %s now", c.Hits, c.Misses, perSecond(c.Rate))
	}
	return fmt.Sprintf("%d hits, %d misses", c.Hits, c.Misses)
}

// adminRecent is a model's latency window.
type adminRecent struct {
	Requests   int     `json:"requests"`
	P50MS      float64 `json:"p50_ms"`
	P99MS      float64 `json:"p99_ms"`
	Attainment float64 `json:"slo_attainment"`
	MeanBatch  float64 `json:"mean_batch"`
	Violations int     `json:"violations"`
}

// uptime writes how long a daemon has run to the minute, or to the second
// in its first minute: 45s, 12m, 3h12m, 4d3h.
func uptime(d time.Duration) string {
	switch {
	case d < time.Minute:
		return d.Round(time.Second).String()
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
	return fmt.Sprintf("%dd%dh", int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour))
}

// writeStatus prints the status as a header and three tables.
func writeStatus(w io.Writer, base string, s *adminStatus) error {
	state := "not ready"
	if s.Ready {
		state = "ready"
	}
	if s.Started != nil && !s.Started.IsZero() {
		state += fmt.Sprintf(", up %s (since %s)", uptime(time.Since(*s.Started)), s.Started.Local().Format(time.DateTime))
	}
	fmt.Fprintf(w, "gpuletd %s at %s: %s\n", s.Version, base, state)
	switch {
	case s.GRPCListen == nil:
	case *s.GRPCListen == "":
		fmt.Fprintln(w, "gRPC off (grpc_listen is empty)")
	default:
		fmt.Fprintf(w, "gRPC on %s (inference.GRPCInferenceService, grpc.health.v1.Health)\n", *s.GRPCListen)
	}
	if s.MetricsListen != "" {
		fmt.Fprintf(w, "metrics also on %s (/metrics alone)\n", s.MetricsListen)
	}
	fmt.Fprintf(w, "policy %s, placement %s, %s, %s\n", s.Policy, s.Algorithm,
		counted(s.Reorganizations, "reorganization"), counted(s.Restarts, "executor restart"))
	if old := olderPolicies(s); len(old) > 0 {
		fmt.Fprintf(w, "  still on an earlier policy (the reload could not switch them: see the events): %s\n", strings.Join(old, ", "))
	}
	if line := s.Connections.words(); line != "" {
		writeWrappedLine(w, line)
	}
	if line := s.RequestBytes.words(); line != "" {
		writeWrappedLine(w, line)
	}
	if p := s.RecentProblems; p != nil && p.Warnings+p.Errors > 0 {
		var what []string
		if p.Warnings > 0 {
			what = append(what, counted(p.Warnings, "warning"))
		}
		if p.Errors > 0 {
			what = append(what, counted(p.Errors, "error"))
		}
		window := p.Window // 1h0m0s, as Go writes durations: 1h
		if strings.HasSuffix(window, "m0s") {
			window = strings.TrimSuffix(window, "0s")
		}
		if strings.HasSuffix(window, "h0m") {
			window = strings.TrimSuffix(window, "0m")
		}
		words := "last " + window
		if window == "1h" {
			words = "last hour"
		}
		fmt.Fprintf(w, "%s: %s; gpuletd events --severity warning --since %s\n", words, strings.Join(what, ", "), window)
	}
	switch {
	case s.PlanAt != nil:
		fmt.Fprintf(w, "plan of %s (%s)\n", s.PlanAt.Local().Format("2006-01-02 15:04:05"), orDash(s.PlanReason))
		if s.Plan != nil && s.Plan.Spread {
			writeWrappedLine(w, spreadWords)
		}
		if s.Capacity != nil {
			fmt.Fprintln(w, s.Capacity.words())
		}
		if p := s.RequestPath; p != nil {
			writeWrappedLine(w, p.words())
		}
	default:
		fmt.Fprintln(w, "no plan yet")
	}
	switch e := s.Engine; {
	case e.Reason != "":
		fmt.Fprintf(w, "serving on the CPU: %s\n  fix: %s\n", e.Reason, e.Fix)
	case e.UsingGPUs:
		fmt.Fprintf(w, "%d NVIDIA GPU(s), execution provider %s\n", e.GPUs, e.Provider)
		if e.Asked != "" {
			fmt.Fprintf(w, "  not %s as configured: %s\n", e.Asked, e.ProviderNote)
			if e.ProviderFix != "" {
				fmt.Fprintf(w, "  fix: %s\n", e.ProviderFix)
			}
		}
	}
	if s.Store.Reason != "" {
		fmt.Fprintf(w, "READ-ONLY: %s\n", s.Store.Reason)
	}
	if c := s.Cache; c != nil {
		fmt.Fprintf(w, "response cache: %s of %s, %s\n", bytefmt.Size(c.Bytes), config.ByteSize(c.Budget), counted(c.Entries, "answer"))
	}
	if m := s.Memory; m != nil {
		writeWrappedLine(w, m.words())
	}
	if c := s.CPUMemory; c != nil {
		writeWrappedLine(w, c.words())
	}
	if t := s.TLS; t != nil {
		clients := ""
		if t.ClientCertificates {
			clients = ", client certificates required"
		}
		fmt.Fprintf(w, "TLS: %s, valid until %s%s\n", t.Subject, t.NotAfter.UTC().Format(time.DateOnly), clients)
	}
	if len(s.NotReadyFor) > 0 {
		fmt.Fprintf(w, "not ready (strict_readiness) while these cannot be served: %s\n", strings.Join(s.NotReadyFor, ", "))
	}
	if len(s.NotLoaded) > 0 {
		fmt.Fprintf(w, "in the repository, not loaded (startup_models; gpuletd models load NAME): %s\n", strings.Join(s.NotLoaded, ", "))
	}
	if p := s.Profiling; p != nil {
		fmt.Fprintln(w, p.words())
	}
	if len(s.WaitingFor) > 0 {
		fmt.Fprintf(w, "waiting for: %s\n", strings.Join(s.WaitingFor, ", "))
	}

	fmt.Fprintln(w)
	tw := newTable(w)
	fmt.Fprintln(tw, "DEVICE\tKIND\tTYPE\tBACKEND\tHEALTH\tMEMORY\tNAME")
	for _, d := range s.Devices {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", d.ID, d.Kind, d.Type, orDash(d.Backend), orDash(d.Health), d.memoryText(s.CPUMemory), clip(d.Name, 28))
		if d.MIG != nil {
			for _, in := range d.MIG.Instances {
				use := "free"
				if in.Leased > 0 {
					use = fmt.Sprintf("%d%% leased", in.Leased)
				}
				if in.MPSPipeDir != "" {
					use += ", MPS inside"
				}
				fmt.Fprintf(tw, "  %s\t\t\t%s\t%s\t\t%s\n", in.Profile, "mig instance", use, in.UUID)
			}
		}
	}
	if len(s.Devices) == 0 {
		fmt.Fprintln(tw, "(none)")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, d := range s.Devices {
		if line := d.cpuLimitText(); line != "" {
			fmt.Fprintln(w, line)
		}
		if d.HealthDetail != "" {
			writeWrappedLine(w, fmt.Sprintf("%s %s: %s", d.ID, d.Health, d.HealthDetail))
		}
	}

	fmt.Fprintln(w)
	tw = newTable(w)
	fmt.Fprintln(tw, "GPU-LET\tSIZE\tSTATE\tBUSY\tMEMORY\tMODEL\tBATCH\tRATE\tMEAN BATCH")
	for _, g := range s.Gpulets {
		state := g.State
		if g.Restarts > 0 {
			state = fmt.Sprintf("%s (%s)", g.State, counted(int64(g.Restarts), "restart"))
		}
		lead := fmt.Sprintf("%s\t%d%%\t%s\t%s\t%s", g.ID, g.Size, state, percent(g.BusyRatio), g.memoryText())
		if len(g.Models) == 0 {
			fmt.Fprintf(tw, "%s\t-\t\t\t\n", lead)
		}
		for i, m := range g.Models {
			if i > 0 {
				lead = "\t\t\t\t"
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", lead, m.Name, m.Batch, perSecond(m.Rate), meanBatch(m.Requests, m.MeanBatch))
		}
	}
	if len(s.Gpulets) == 0 {
		fmt.Fprintln(tw, "(none)")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, g := range s.Gpulets {
		if g.NextTry != nil {
			fmt.Fprintf(w, "%s: its executor died; tried again at %s (gpuletd events --kind executor_restart says why)\n", g.ID, g.NextTry.Local().Format(time.TimeOnly))
		}
		for _, m := range g.Models {
			if m.Failed > 0 {
				writeWrappedLine(w, fmt.Sprintf("%s on %s: %s", m.Name, g.ID, failedWords(m.Failed, m.Received)))
			}
		}
	}

	fmt.Fprintln(w)
	return writeServables(w, s)
}

// writeServables prints the models table, then the pipelines' where there
// are any.
func writeServables(w io.Writer, s *adminStatus) error {
	if err := writeModels(w, s.Models); err != nil {
		return err
	}
	if len(s.Pipelines) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	return writePipelines(w, s.Pipelines)
}

// adminPipeline is one pipeline of the status.
type adminPipeline struct {
	Name   string   `json:"name"`
	SLOMS  float64  `json:"slo_ms"`
	Steps  []string `json:"steps"`
	Fanout string   `json:"fanout"`
	Ready  bool     `json:"ready"`
	Reason string   `json:"reason"`
	// Warnings say what keeps it from serving its requests.
	Warnings []string    `json:"warnings"`
	Rate     float64     `json:"rate"`
	Recent   adminRecent `json:"recent"`
	// Scaling is the pipeline's accuracy scaling.
	Scaling struct {
		Scaling  string  `json:"scaling"`
		Planned  float64 `json:"planned_accuracy"`
		Accuracy float64 `json:"accuracy"`
		Served   int64   `json:"served"`
		Mix      [][]struct {
			Model string  `json:"model"`
			Share float64 `json:"share"`
		} `json:"mix"`
	} `json:"scaling"`
	Cache *adminCache `json:"response_cache"`
}

// stepsText is a pipeline's steps in order, its fan-out named.
func (p adminPipeline) stepsText() string {
	steps := strings.Join(p.Steps, " -> ")
	if p.Fanout != "" {
		steps += " (fan-out: " + p.Fanout + ")"
	}
	return steps
}

// accuracyText is the accuracy a pipeline serves at and its scaling mode.
func (p adminPipeline) accuracyText() string {
	sc := p.Scaling
	if sc.Served == 0 {
		if sc.Scaling == "" {
			return "-"
		}
		return "- (" + sc.Scaling + ")"
	}
	s := fmt.Sprintf("%.1f%%", 100*sc.Accuracy)
	if sc.Scaling != "" {
		s += " (" + sc.Scaling + ")"
	}
	return s
}

// mixText is a pipeline's variant mix where some step runs more than one
// model: "step[1]: a 60% + b 40%"; "" otherwise.
func (p adminPipeline) mixText() string {
	var parts []string
	for i, step := range p.Scaling.Mix {
		if len(step) < 2 && (len(step) == 0 || i >= len(p.Steps) || step[0].Model == p.Steps[i]) {
			continue
		}
		var vs []string
		for _, v := range step {
			vs = append(vs, fmt.Sprintf("%s %.0f%%", v.Model, 100*v.Share))
		}
		parts = append(parts, fmt.Sprintf("step[%d]: %s", i, strings.Join(vs, " + ")))
	}
	return strings.Join(parts, ", ")
}

// writePipelines prints the pipelines table and why those that cannot run
// cannot.
func writePipelines(w io.Writer, ps []adminPipeline) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "PIPELINE\tSTEPS\tSLO\tRATE\tACCURACY\tATTAIN\tP50\tP99")
	for _, p := range ps {
		attain, p50, p99 := p.Recent.texts()
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Name, p.stepsText(), sloText(p.SLOMS), perSecond(p.Rate), p.accuracyText(), attain, p50, p99)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, p := range ps {
		if !p.Ready && p.Reason != "" {
			writeWrappedLine(w, p.Name+": not served: "+p.Reason)
		}
		for _, warning := range p.Warnings {
			if p.Ready || warning != p.Reason {
				writeWrappedLine(w, p.Name+": warning: "+warning)
			}
		}
		if mix := p.mixText(); mix != "" {
			fmt.Fprintf(w, "%s: runs cheaper variants: %s\n", p.Name, mix)
		}
		if c := p.Cache; c != nil {
			fmt.Fprintf(w, "%s: response cache: %s\n", p.Name, c.text())
		}
	}
	return nil
}

// extraHeadroomText says what the miss rule gave a model: x more headroom
// than the node's.
func extraHeadroomText(x float64) string {
	return fmt.Sprintf("planned with %.0f%% more headroom: it missed its SLO on a plan that held none of its load back (this fades while it stays within)", 100*x)
}

// notReadyWord is what a model that is not ready is: placed on a gpu-let
// that cannot answer it (its requests cannot fit the request limit), or not
// served at all.
func notReadyWord(placed bool) string {
	if placed {
		return "not ready"
	}
	return "not served"
}

// writeModels prints the models table and a line per unscheduled load.
func writeModels(w io.Writer, models []adminModel) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "MODEL\tSLO\tFROM\tRATE\tASSIGNED\tATTAIN\tP50\tP99\tPLACED ON")
	for _, m := range models {
		attain, p50, p99 := m.Recent.texts()
		placed := strings.Join(m.Placed, ",")
		if placed == "" {
			placed = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", m.Name, sloText(m.SLOMS), sloFrom(m.SLOFrom), perSecond(m.Rate), perSecond(m.AssignedRate), attain, p50, p99, placed)
	}
	if len(models) == 0 {
		fmt.Fprintln(tw, "(none)")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, m := range models {
		if m.Unscheduled > 0 {
			fmt.Fprintf(w, "%s: %s of its load has no gpu-let\n", m.Name, perSecond(m.Unscheduled))
		}
		if m.ExtraHeadroom > 0 {
			writeWrappedLine(w, m.Name+": "+extraHeadroomText(m.ExtraHeadroom))
		}
		if !m.Ready && m.Reason != "" {
			writeWrappedLine(w, m.Name+": "+notReadyWord(len(m.Placed) > 0)+": "+m.Reason)
		}
		for _, warning := range m.Warnings {
			if m.Ready || warning != m.Reason {
				writeWrappedLine(w, m.Name+": warning: "+warning)
			}
		}
		if c := m.Cache; c != nil && c.Rate > 0 {
			fmt.Fprintf(w, "%s: %s more answered by the response cache, outside RATE\n", m.Name, perSecond(c.Rate))
		}
	}
	writeConfigNotes(w, models)
	return nil
}

// writeConfigNotes prints each configuration note once, after the models it
// applies to (a Triton repository gives most models the same ones), in the
// order they first appear; gpuletd models show M lists a model's own.
func writeConfigNotes(w io.Writer, models []adminModel) {
	var notes []string
	who := map[string][]string{}
	for _, m := range models {
		for _, note := range m.ConfigNotes {
			if _, seen := who[note]; !seen {
				notes = append(notes, note)
			}
			who[note] = append(who[note], m.Name)
		}
	}
	for _, note := range notes {
		fmt.Fprintf(w, "%s: configuration: %s\n", someNames(who[note], 3), note)
	}
}

// someNames joins names, the first few and how many more past that.
func someNames(names []string, few int) string {
	if len(names) <= few+1 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:few], ", "), len(names)-few)
}

// texts are the window's attainment, p50 and p99 for a table, dashes
// before any request.
func (r adminRecent) texts() (attain, p50, p99 string) {
	if r.Requests == 0 {
		return "-", "-", "-"
	}
	return percent(r.Attainment), millis(r.P50MS), millis(r.P99MS)
}

// sloText is a model's SLO, a dash for one not known (a broken entry).
func sloText(ms float64) string {
	if ms <= 0 {
		return "-"
	}
	return millis(ms)
}

// sloFrom shortens where a model's SLO came from for the models table.
func sloFrom(s string) string {
	switch s {
	case repository.SLOFromYAML:
		return "yaml"
	case repository.SLOFromPbtxt:
		return "pbtxt"
	case repository.SLOFromDefault:
		return "default"
	case repository.SLOFromOverride:
		return "load"
	}
	return orDash(s)
}

func newTable(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0) }

// perSecond writes requests per second.
func perSecond(r float64) string {
	switch {
	case r >= 100:
		return fmt.Sprintf("%.0f/s", r)
	case r >= 10:
		return fmt.Sprintf("%.1f/s", r)
	}
	return fmt.Sprintf("%.2f/s", r)
}

// millis writes a duration given in milliseconds with three significant
// digits, in µs below 1 ms.
func millis(ms float64) string {
	switch {
	case ms < 1:
		return fmt.Sprintf("%.0fµs", ms*1000)
	case ms < 10:
		return fmt.Sprintf("%.2fms", ms)
	case ms < 100:
		return fmt.Sprintf("%.1fms", ms)
	}
	return fmt.Sprintf("%.0fms", ms)
}

func percent(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }

// failedWords says what failed of a model's requests on one gpu-let: failed
// answered with an error of the received, both since the gpu-let's
// executor started.
func failedWords(failed, received int64) string {
	return fmt.Sprintf("%s of %d failed there since its executor started (dropped or expired by its scheduler, refused, failed runs)",
		counted(failed, "request"), received)
}

func meanBatch(requests int64, mean float64) string {
	if requests == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", mean)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// clip shortens s to n runes with an ellipsis.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// olderPolicies lists the gpu-lets whose executors run another policy than
// the one configured (a reload changed it and could not switch them), as
// "<gpu-let> (<policy>)".
func olderPolicies(s *adminStatus) []string {
	var out []string
	for _, g := range s.Gpulets {
		if g.Policy != "" && g.Policy != s.Policy {
			out = append(out, g.ID+" ("+g.Policy+")")
		}
	}
	return out
}

// counted writes n things, "1 thing" or "2 things".
func counted(n int64, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
