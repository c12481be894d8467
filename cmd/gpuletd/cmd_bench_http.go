package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpulet/gpuletd/daemon/kserve"
	"github.com/gpulet/gpuletd/executor/onnxrt"
	"github.com/gpulet/gpuletd/modelzoo"
	"github.com/gpulet/gpuletd/sim/loadgen"
	"github.com/spf13/cobra"
)

func init() { benchCommands = append(benchCommands, newBenchHTTPCmd) }

// httpBenchModel is the model the HTTP bench serves.
const httpBenchModel = "lenet5"

// overheadFloor is the p50 overhead the HTTP path must stay under.
const overheadFloor = 200 * time.Microsecond

// httpBenchOptions are the flags of bench http.
type httpBenchOptions struct {
	device, policy      string
	rate, maxRate       float64
	duration, probe     time.Duration
	warmup              time.Duration
	binary, asJSON      bool
	concurrency         int
	seed                uint64
	profileTimeout      time.Duration
	exe                 string
	onnxruntimeLibrary  string
	progress            io.Writer
	daemonStartDeadline time.Duration
	slo                 time.Duration
}

func newBenchHTTPCmd(g *globalFlags) *cobra.Command {
	o := httpBenchOptions{}
	cmd := &cobra.Command{
		Use:   "http",
		Short: "The daemon's HTTP path against a bare net/http echo of the same payload",
		Long: `Start gpuletd serve as a child (temporary state, a repository holding the
modelzoo's lenet5, a free port on loopback) and, in this process, a bare
net/http server that reads the same request body and answers the daemon's
answer's bytes. Drive both with the same open-loop generator at the same rate,
one after the other, and compare latency.

The rate is found first (unless --rate is given): from 200 requests/s, doubled
while the daemon's p99 stays under the model's SLO with no failures, up to
--max-rate. overhead_p50_us is the daemon's p50 minus the echo's p50 minus the
mean time a request spent in the executor (queue and compute, from the
statistics extension), so it is what the HTTP decode, routing, the hop to the
executor and the encoding add.

Device: cpu runs "gpuletd profile lenet5 --device cpu" first (the daemon places
models on the CPU once they have a profile); emulated uses an emulated V100
(igniter-v100) on which lenet5 takes the alexnet curve; auto tries cpu and
falls back to emulated, saying why.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch o.device {
			case "auto", "cpu", "emulated":
			default:
				return fmt.Errorf("--device %q: use auto, cpu or emulated", o.device)
			}
			l, err := g.loadConfig()
			if err != nil {
				return err
			}
			if o.exe, err = os.Executable(); err != nil {
				return fmt.Errorf("find this executable: %w", err)
			}
			if o.onnxruntimeLibrary, err = onnxrt.FindLibrary(l.Config.ONNXRuntime.Library); err != nil {
				return err
			}
			o.progress = cmd.ErrOrStderr()
			res, err := benchHTTP(cmd.Context(), o)
			if err != nil {
				return err
			}
			if o.asJSON {
				return printJSON(cmd.OutOrStdout(), res)
			}
			return writeHTTPBench(cmd.OutOrStdout(), res)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.device, "device", "auto", "device of the daemon: auto, cpu or emulated")
	f.StringVar(&o.policy, "policy", "eager", "the daemon's batch scheduling policy (eager does not hold requests back)")
	f.Float64Var(&o.rate, "rate", 0, "request rate; 0 finds a sustainable one")
	f.Float64Var(&o.maxRate, "max-rate", 3200, "highest rate the search tries")
	f.DurationVar(&o.duration, "duration", 10*time.Second, "measured time of each server")
	f.DurationVar(&o.probe, "probe", 2*time.Second, "measured time of each step of the rate search")
	f.DurationVar(&o.warmup, "warmup", 3*time.Second, "unrecorded time before each measurement (connections, re-planning)")
	f.BoolVar(&o.binary, "binary", false, "binary tensors instead of JSON")
	f.IntVar(&o.concurrency, "concurrency", 64, "most requests in flight")
	f.Uint64Var(&o.seed, "seed", 1, "seed of the arrivals and the inputs")
	f.DurationVar(&o.profileTimeout, "profile-timeout", 10*time.Minute, "longest wait for the CPU profile")
	f.DurationVar(&o.daemonStartDeadline, "ready-timeout", 2*time.Minute, "longest wait for the daemon to serve the model")
	f.DurationVar(&o.slo, "slo", 0, "SLO of lenet5 in the temporary repository (default: the modelzoo's)")
	f.BoolVar(&o.asJSON, "json", false, "print JSON")
	return cmd
}

// httpBenchResult is what bench http prints.
type httpBenchResult struct {
	Device        string  `json:"device"`
	DeviceNote    string  `json:"device_note,omitempty"`
	Policy        string  `json:"policy"`
	Model         string  `json:"model"`
	Tensors       string  `json:"tensors"`
	RequestBytes  int     `json:"request_bytes"`
	ResponseBytes float64 `json:"response_bytes"`
	SLOMS         float64 `json:"slo_ms"`
	Rate          float64 `json:"rate"`
	DurationS     float64 `json:"duration_s"`

	DaemonP50US float64 `json:"daemon_p50_us"`
	DaemonP90US float64 `json:"daemon_p90_us"`
	DaemonP99US float64 `json:"daemon_p99_us"`
	DaemonMaxUS float64 `json:"daemon_max_us"`
	EchoP50US   float64 `json:"echo_p50_us"`
	EchoP90US   float64 `json:"echo_p90_us"`
	EchoP99US   float64 `json:"echo_p99_us"`
	EchoMaxUS   float64 `json:"echo_max_us"`
	// ExecutorMeanUS is the mean queue + compute time in the executor.
	ExecutorMeanUS  float64 `json:"executor_mean_us"`
	DifferenceP50US float64 `json:"difference_p50_us"`
	OverheadP50US   float64 `json:"overhead_p50_us"`
	FloorUS         float64 `json:"floor_us"`
	FloorMet        bool    `json:"floor_met"`

	RequestsPerSecond float64          `json:"requests_per_second"`
	DaemonSent        int64            `json:"daemon_sent"`
	DaemonOK          int64            `json:"daemon_ok"`
	DaemonAttainment  float64          `json:"daemon_slo_attainment"`
	DaemonFailed      map[string]int64 `json:"daemon_failed"`
	DaemonFirstError  string           `json:"daemon_first_error,omitempty"`
	EchoOK            int64            `json:"echo_ok"`
	DaemonLagP99US    float64          `json:"daemon_schedule_lag_p99_us"`
	EchoLagP99US      float64          `json:"echo_schedule_lag_p99_us"`
	// CPU time per answered request, from /proc/<pid>/stat; -1: unknown.
	// The net values take away what the processes use when idle.
	DaemonCPUUS      float64 `json:"daemon_cpu_us_per_request"`
	ExecutorCPUUS    float64 `json:"executor_cpu_us_per_request"`
	DaemonNetCPUUS   float64 `json:"daemon_net_cpu_us_per_request"`
	ExecutorNetCPUUS float64 `json:"executor_net_cpu_us_per_request"`
	// Idle CPU use in cores (0.05: 5% of one core); -1: unknown.
	DaemonIdleCPU   float64 `json:"daemon_idle_cpu_cores"`
	ExecutorIdleCPU float64 `json:"executor_idle_cpu_cores"`

	// RefuseP50US is the daemon's p50 for a request it reads and decodes
	// whole, then refuses (400: unknown input) before routing.
	RefuseP50US float64 `json:"daemon_refuse_p50_us"`
	// DecodeP50US is RefuseP50US − EchoP50US: reading, decoding and
	// answering beyond the bare server.
	DecodeP50US float64 `json:"decode_p50_us"`
	// HopP50US is DaemonP50US − RefuseP50US − ExecutorMeanUS: routing, the
	// executor hop both ways and the answer's encoding.
	HopP50US float64 `json:"route_hop_encode_p50_us"`

	Probes []httpProbe `json:"rate_search,omitempty"`
}

// httpProbe is one step of the rate search.
type httpProbe struct {
	Rate   float64 `json:"rate"`
	P99US  float64 `json:"daemon_p99_us"`
	Failed int64   `json:"failed"`
	Kept   bool    `json:"kept"`
}

// benchHTTP runs the whole comparison.
func benchHTTP(ctx context.Context, o httpBenchOptions) (*httpBenchResult, error) {
	dir, err := os.MkdirTemp("", "gpuletd-bench-http-")
	if err != nil {
		return nil, fmt.Errorf("make temporary directory: %w", err)
	}
	defer os.RemoveAll(dir)
	repo := filepath.Join(dir, "models")
	if err := modelzoo.WriteRepository(repo, []string{httpBenchModel}, o.seed); err != nil {
		return nil, err
	}
	if o.slo > 0 {
		if err := setSLO(filepath.Join(repo, httpBenchModel, "config.yaml"), o.slo); err != nil {
			return nil, err
		}
	}
	env := benchEnv(dir, repo, o)

	d, device, note, err := startBenchDaemon(ctx, o, env, dir)
	if err != nil {
		return nil, err
	}
	defer d.stop()
	fmt.Fprintf(o.progress, "daemon on %s (pid %d), device %s\n", d.base, d.cmd.Process.Pid, device)

	client := loadgen.NewClient(o.concurrency)
	defer client.CloseIdleConnections()
	m, err := loadgen.FetchModel(ctx, client, d.base, httpBenchModel)
	if err != nil {
		return nil, err
	}
	payload, err := loadgen.NewPayload(m, o.binary, o.seed)
	if err != nil {
		return nil, err
	}
	answer, err := sampleAnswer(ctx, client, d.base, payload)
	if err != nil {
		return nil, err
	}
	echo, err := startEcho(answer)
	if err != nil {
		return nil, err
	}
	defer echo.stop()

	res := &httpBenchResult{
		Device: device, DeviceNote: note, Policy: o.policy, Model: httpBenchModel, Tensors: "json",
		RequestBytes: len(payload.Body), ResponseBytes: float64(len(answer.body)), SLOMS: ms(m.SLO),
		FloorUS: us(overheadFloor), DaemonCPUUS: -1, ExecutorCPUUS: -1, DaemonNetCPUUS: -1, ExecutorNetCPUUS: -1,
	}
	if o.binary {
		res.Tensors = "binary"
	}
	runWith := func(base string, p *loadgen.Payload, okStatus int, rate float64, dur time.Duration) (*loadgen.Report, error) {
		arr, err := loadgen.OpenArrivals("poisson", rate, o.seed)
		if err != nil {
			return nil, err
		}
		return loadgen.Run(ctx, loadgen.Config{
			URL: base, Model: httpBenchModel, Rate: rate, Arrivals: arr, Duration: dur, Warmup: o.warmup,
			Concurrency: o.concurrency, Payload: p, SLO: m.SLO, Client: client, Seed: o.seed, OKStatus: okStatus,
		})
	}
	run := func(base string, rate float64, dur time.Duration) (*loadgen.Report, error) {
		return runWith(base, payload, http.StatusOK, rate, dur)
	}

	fmt.Fprintf(o.progress, "measuring idle CPU for %s\n", idleSample)
	idle, err := d.idleCPU(ctx, idleSample)
	if err != nil {
		return nil, err
	}
	res.DaemonIdleCPU, res.ExecutorIdleCPU = idle.daemon, idle.executor

	rate := o.rate
	if rate <= 0 {
		if rate, res.Probes, err = searchRate(o, m.SLO, func(r float64) (*loadgen.Report, error) { return run(d.base, r, o.probe) }); err != nil {
			return nil, err
		}
	}
	res.Rate, res.DurationS = rate, o.duration.Seconds()

	fmt.Fprintf(o.progress, "measuring the daemon at %.0f requests/s for %s\n", rate, o.duration)
	before, err := d.sample(ctx)
	if err != nil {
		return nil, err
	}
	dr, err := run(d.base, rate, o.duration)
	if err != nil {
		return nil, daemonError(d.base, err)
	}
	after, err := d.sample(ctx)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(o.progress, "measuring the echo at %.0f requests/s for %s\n", rate, o.duration)
	er, err := run(echo.base, rate, o.duration)
	if err != nil {
		return nil, err
	}

	res.DaemonP50US, res.DaemonP90US, res.DaemonP99US, res.DaemonMaxUS = us(dr.Latency.P50), us(dr.Latency.P90), us(dr.Latency.P99), us(dr.Latency.Max)
	res.EchoP50US, res.EchoP90US, res.EchoP99US, res.EchoMaxUS = us(er.Latency.P50), us(er.Latency.P90), us(er.Latency.P99), us(er.Latency.Max)
	res.DaemonSent, res.DaemonOK, res.DaemonAttainment, res.EchoOK = dr.Sent, dr.OK, dr.Attainment, er.OK
	res.DaemonFailed, res.DaemonFirstError = dr.Failed, dr.FirstError
	if dr.OK == 0 || er.OK == 0 {
		return nil, fmt.Errorf("bench http: no request answered (daemon: %s %s; echo: %s %s)", failures(dr.Failed), dr.FirstError, failures(er.Failed), er.FirstError)
	}
	res.DaemonLagP99US, res.EchoLagP99US = us(dr.Lag.P99), us(er.Lag.P99)
	res.RequestsPerSecond = float64(dr.OK) / dr.Window.Seconds()
	if n := after.executorCount - before.executorCount; n > 0 {
		res.ExecutorMeanUS = float64(after.executorNS-before.executorNS) / float64(n) / 1e3
	}
	res.DifferenceP50US = res.DaemonP50US - res.EchoP50US
	res.OverheadP50US = res.DifferenceP50US - res.ExecutorMeanUS
	res.FloorMet = res.OverheadP50US < res.FloorUS
	if answered := after.answered - before.answered; answered > 0 {
		span := after.at.Sub(before.at)
		if before.daemonCPU >= 0 && after.daemonCPU >= 0 {
			res.DaemonCPUUS = us(after.daemonCPU-before.daemonCPU) / float64(answered)
			res.DaemonNetCPUUS = (us(after.daemonCPU-before.daemonCPU) - idle.daemon*us(span)) / float64(answered)
		}
		if before.executorCPU >= 0 && after.executorCPU >= 0 && slices.Equal(before.executorPIDs, after.executorPIDs) {
			res.ExecutorCPUUS = us(after.executorCPU-before.executorCPU) / float64(answered)
			res.ExecutorNetCPUUS = (us(after.executorCPU-before.executorCPU) - idle.executor*us(span)) / float64(answered)
		}
	}

	// Where the overhead goes: a payload whose input has a name the model
	// does not know is read and decoded whole, then refused with 400
	// before any routing.
	fmt.Fprintf(o.progress, "measuring the daemon's refusal of a decoded request at %.0f requests/s for %s\n", rate, o.probe)
	bad := *m
	bad.Metadata.Inputs = slices.Clone(m.Metadata.Inputs)
	for i := range bad.Metadata.Inputs {
		bad.Metadata.Inputs[i].Name += "_unknown"
	}
	badPayload, err := loadgen.NewPayload(&bad, o.binary, o.seed)
	if err != nil {
		return nil, err
	}
	rr, err := runWith(d.base, badPayload, http.StatusBadRequest, rate, o.probe)
	if err != nil {
		return nil, daemonError(d.base, err)
	}
	if rr.OK > 0 {
		res.RefuseP50US = us(rr.Latency.P50)
		res.DecodeP50US = res.RefuseP50US - res.EchoP50US
		res.HopP50US = res.DaemonP50US - res.RefuseP50US - res.ExecutorMeanUS
	}
	return res, nil
}

// idleSample is how long the bench watches the daemon doing nothing.
const idleSample = 2 * time.Second

// idleShare is the CPU the daemon and its executors use with no requests,
// in cores.
type idleShare struct{ daemon, executor float64 }

// idleCPU measures the CPU the daemon and its executors use while no
// request comes.
func (d *benchDaemon) idleCPU(ctx context.Context, span time.Duration) (idleShare, error) {
	a, err := d.sample(ctx)
	if err != nil {
		return idleShare{}, err
	}
	select {
	case <-time.After(span):
	case <-ctx.Done():
		return idleShare{}, ctx.Err()
	}
	b, err := d.sample(ctx)
	if err != nil {
		return idleShare{}, err
	}
	secs := b.at.Sub(a.at).Seconds()
	share := idleShare{daemon: -1, executor: -1}
	if a.daemonCPU >= 0 && b.daemonCPU >= 0 {
		share.daemon = (b.daemonCPU - a.daemonCPU).Seconds() / secs
	}
	if a.executorCPU >= 0 && b.executorCPU >= 0 && slices.Equal(a.executorPIDs, b.executorPIDs) {
		share.executor = (b.executorCPU - a.executorCPU).Seconds() / secs
	}
	return share, nil
}

// searchRate doubles the rate from 200 requests/s while the daemon keeps its
// p99 under the SLO with no failures and no drops, up to maxRate; below 200
// it halves until a rate holds.
func searchRate(o httpBenchOptions, slo time.Duration, probe func(float64) (*loadgen.Report, error)) (float64, []httpProbe, error) {
	holds := func(r *loadgen.Report) bool {
		return r.OK > 0 && r.OK == r.Sent && r.Dropped == 0 && r.Latency.P99 < slo
	}
	var probes []httpProbe
	try := func(rate float64) (bool, error) {
		rep, err := probe(rate)
		if err != nil {
			return false, err
		}
		ok := holds(rep)
		probes = append(probes, httpProbe{Rate: rate, P99US: us(rep.Latency.P99), Failed: rep.Sent - rep.OK + rep.Dropped, Kept: ok})
		fmt.Fprintf(o.progress, "rate %5.0f/s: daemon p99 %s, %d failed or dropped: %s\n", rate, dur(rep.Latency.P99), rep.Sent-rep.OK+rep.Dropped, map[bool]string{true: "holds", false: "too high"}[ok])
		if rep.FirstError != "" {
			fmt.Fprintf(o.progress, "  first failure: %s\n", clip(rep.FirstError, 200))
		}
		return ok, nil
	}
	best := 0.0
	for rate := 200.0; rate <= o.maxRate; rate *= 2 {
		ok, err := try(rate)
		if err != nil {
			return 0, probes, err
		}
		if !ok {
			break
		}
		best = rate
	}
	for rate := 100.0; best == 0 && rate >= 12.5; rate /= 2 {
		ok, err := try(rate)
		if err != nil {
			return 0, probes, err
		}
		if ok {
			best = rate
		}
	}
	if best == 0 {
		return 0, probes, errors.New("bench http: the daemon misses its SLO even at 12.5 requests/s; see the rate search above")
	}
	return best, probes, nil
}

// sloLine is the slo setting of a model's config.yaml.
var sloLine = regexp.MustCompile(`(?m)^slo:[^#\n]*`)

// setSLO rewrites the slo of a model's config.yaml.
func setSLO(path string, slo time.Duration) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("set slo: %w", err)
	}
	if !sloLine.Match(b) {
		return fmt.Errorf("set slo: %s has no slo line", path)
	}
	b = sloLine.ReplaceAll(b, []byte("slo: "+slo.String()+" "))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("set slo: %w", err)
	}
	return nil
}

// benchEnv is the daemon's environment: this one without GPULETD_ settings,
// plus the bench's own.
func benchEnv(dir, repo string, o httpBenchOptions) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GPULETD_") {
			env = append(env, kv)
		}
	}
	return append(env,
		"GPULETD_STATE_DIR="+filepath.Join(dir, "state"),
		"GPULETD_RUNTIME_DIR="+filepath.Join(dir, "run"),
		"GPULETD_MODEL_REPOSITORY="+repo,
		"GPULETD_ONNXRUNTIME_LIBRARY="+o.onnxruntimeLibrary,
		"GPULETD_SCHEDULER_POLICY="+o.policy,
		"GPULETD_LOG_FORMAT=json",
	)
}

// emulatedDevices is the fallback device: one emulated V100 whose physics
// come from iGniter's measurements (shared/data/igniter).
const emulatedDevices = "[{kind: emulated, profiles: igniter-v100, count: 1}]"

// startBenchDaemon starts the daemon on the device o asks for (profiling
// the model on the CPU first) and waits until it serves the model. It
// returns the device used and, after a fallback, why.
func startBenchDaemon(ctx context.Context, o httpBenchOptions, env []string, dir string) (d *benchDaemon, device, note string, err error) {
	if o.device != "emulated" {
		fmt.Fprintf(o.progress, "profiling %s on the CPU: gpuletd profile %s --device cpu\n", httpBenchModel, httpBenchModel)
		err := profileOnCPU(ctx, o, env, dir)
		if err == nil {
			d, err = startDaemonProcess(ctx, o, append(env, "GPULETD_DEVICES=cpu"), dir)
			if err == nil {
				return d, "cpu", "", nil
			}
		}
		if o.device == "cpu" || ctx.Err() != nil {
			return nil, "", "", err
		}
		note = "cpu: " + err.Error()
		fmt.Fprintf(o.progress, "falling back to an emulated device: %s\n", note)
	}
	d, err = startDaemonProcess(ctx, o, append(env, "GPULETD_DEVICES="+emulatedDevices), dir)
	if err != nil {
		return nil, "", "", err
	}
	return d, "emulated igniter-v100 (lenet5 as alexnet)", note, nil
}

// profileOnCPU runs this binary's profile command for the bench model.
func profileOnCPU(ctx context.Context, o httpBenchOptions, env []string, dir string) error {
	ctx, cancel := context.WithTimeout(ctx, o.profileTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, o.exe, "profile", httpBenchModel, "--device", "cpu")
	cmd.Env, cmd.Dir = append(env, "GPULETD_DEVICES=cpu"), dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("gpuletd profile %s --device cpu: %v: %s", httpBenchModel, err, lastLine(out))
	}
	return nil
}

// lastLine is the last non-empty line of out.
func lastLine(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// benchDaemon is a gpuletd serve child.
type benchDaemon struct {
	cmd  *exec.Cmd
	base string
	log  string
	done chan error
}

// startDaemonProcess starts gpuletd serve on a free loopback port and waits
// until it serves the bench model.
func startDaemonProcess(ctx context.Context, o httpBenchOptions, env []string, dir string) (*benchDaemon, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("find a free port: %w", err)
	}
	addr := ln.Addr().String()
	ln.Close()
	logPath := filepath.Join(dir, "daemon.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open daemon log: %w", err)
	}
	defer logf.Close()
	cmd := exec.Command(o.exe, "serve")
	cmd.Env, cmd.Dir = append(env, "GPULETD_LISTEN="+addr), dir
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start gpuletd serve: %w", err)
	}
	d := &benchDaemon{cmd: cmd, base: "http://" + addr, log: logPath, done: make(chan error, 1)}
	go func() { d.done <- cmd.Wait() }()

	ready := d.base + "/v2/models/" + httpBenchModel + "/ready"
	deadline := time.NewTimer(o.daemonStartDeadline)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-d.done:
			d.done <- err
			return nil, fmt.Errorf("gpuletd serve exited (%v): %s", err, d.logTail())
		case <-ctx.Done():
			d.stop()
			return nil, ctx.Err()
		case <-deadline.C:
			d.stop()
			return nil, fmt.Errorf("gpuletd serve did not serve %s within %s: %s", httpBenchModel, o.daemonStartDeadline, d.logTail())
		case <-tick.C:
			resp, err := http.Get(ready)
			if err != nil {
				continue
			}
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return d, nil
			}
		}
	}
}

// stop interrupts the daemon and waits for it (killing it after 30 s).
func (d *benchDaemon) stop() {
	_ = d.cmd.Process.Signal(os.Interrupt)
	select {
	case err := <-d.done:
		d.done <- err
	case <-time.After(30 * time.Second):
		_ = d.cmd.Process.Kill()
		d.done <- <-d.done
	}
}

// logTail is the daemon log's last lines.
func (d *benchDaemon) logTail() string {
	b, _ := os.ReadFile(d.log)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-5):], "\n")
}

// daemonSample is what the bench reads of the daemon before and after a
// measurement.
type daemonSample struct {
	at                        time.Time
	answered                  int64         // successful inferences
	executorCount, executorNS int64         // queue + compute in the executor
	daemonCPU, executorCPU    time.Duration // -1: unknown
	executorPIDs              []int
}

// sample reads the statistics extension, the gpu-lets' processes and the
// CPU time of the daemon and its executors.
func (d *benchDaemon) sample(ctx context.Context) (daemonSample, error) {
	s := daemonSample{at: time.Now(), daemonCPU: -1, executorCPU: -1}
	var stats struct {
		ModelStats []struct {
			Name           string `json:"name"`
			InferenceCount int64  `json:"inference_count"`
			Stats          map[string]struct {
				Count int64 `json:"count"`
				NS    int64 `json:"ns"`
			} `json:"inference_stats"`
		} `json:"model_stats"`
	}
	if err := adminGet(ctx, d.base, "/v2/models/"+httpBenchModel+"/stats", &stats); err != nil {
		return s, err
	}
	for _, m := range stats.ModelStats {
		s.answered += m.InferenceCount
		s.executorCount += m.Stats["compute_infer"].Count
		s.executorNS += m.Stats["queue"].NS + m.Stats["compute_infer"].NS
	}
	var st adminStatus
	if err := adminGet(ctx, d.base, "/api/v1/status", &st); err != nil {
		return s, err
	}
	for _, g := range st.Gpulets {
		if g.PID > 0 {
			s.executorPIDs = append(s.executorPIDs, g.PID)
		}
	}
	slices.Sort(s.executorPIDs)
	if cpu, err := processCPU(d.cmd.Process.Pid); err == nil {
		s.daemonCPU = cpu
	}
	var total time.Duration
	for _, pid := range s.executorPIDs {
		cpu, err := processCPU(pid)
		if err != nil {
			return s, nil
		}
		total += cpu
	}
	s.executorCPU = total
	return s, nil
}

// userHZ is the unit of the CPU times in /proc/<pid>/stat: USER_HZ, 100 on
// Linux whatever the kernel's own tick rate.
const userHZ = 100

// processCPU is a process's user + system CPU time from /proc/<pid>/stat.
func processCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, fmt.Errorf("read cpu time: %w", err)
	}
	// The command name (field 2) may hold spaces; fields after it start at
	// state (field 3): utime is field 14, stime field 15.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("read cpu time: no command name in /proc stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, errors.New("read cpu time: short /proc stat")
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("read cpu time: bad /proc stat")
	}
	return time.Duration(utime+stime) * time.Second / userHZ, nil
}

// answerSample is the daemon's answer to the payload, which the echo
// returns byte for byte.
type answerSample struct {
	body   []byte
	header http.Header
}

// sampleAnswer sends the payload once and keeps the answer.
func sampleAnswer(ctx context.Context, client *http.Client, base string, p *loadgen.Payload) (*answerSample, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v2/models/"+httpBenchModel+"/infer", bytes.NewReader(p.Body))
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	if p.JSONLen >= 0 {
		req.Header.Set("Content-Type", "application/octet-stream")
		req.Header.Set(kserve.HeaderContentLength, strconv.FormatInt(p.JSONLen, 10))
	} else {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("first request: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("read first answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("first request: %s: %s", resp.Status, bytes.TrimSpace(body))
	}
	h := http.Header{}
	for _, k := range []string{"Content-Type", kserve.HeaderContentLength} {
		if v := resp.Header.Get(k); v != "" {
			h.Set(k, v)
		}
	}
	return &answerSample{body: body, header: h}, nil
}

// echoServer is the in-process net/http server the daemon is compared with.
type echoServer struct {
	srv  *http.Server
	base string
	done chan error
}

func startEcho(a *answerSample) (*echoServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for the echo server: %w", err)
	}
	e := &echoServer{srv: &http.Server{Handler: &loadgen.Echo{Body: a.body, Header: a.header}, ReadHeaderTimeout: 10 * time.Second},
		base: "http://" + ln.Addr().String(), done: make(chan error, 1)}
	go func() { e.done <- e.srv.Serve(ln) }()
	return e, nil
}

func (e *echoServer) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = e.srv.Shutdown(ctx)
	<-e.done
}

// writeHTTPBench prints the comparison.
func writeHTTPBench(w io.Writer, r *httpBenchResult) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "HTTP path: gpuletd serve (device %s, policy %s) against a net/http echo\n", r.Device, r.Policy)
	if r.DeviceNote != "" {
		fmt.Fprintf(bw, "(not on the CPU: %s)\n", clip(r.DeviceNote, 160))
	}
	fmt.Fprintf(bw, "%s, %s tensors: %d-byte requests, %.0f-byte answers; Poisson %.0f requests/s, %gs each\n\n",
		r.Model, r.Tensors, r.RequestBytes, r.ResponseBytes, r.Rate, r.DurationS)
	tw := newTable(bw)
	fmt.Fprintln(tw, "\tP50\tP90\tP99\tMAX\tOK")
	fmt.Fprintf(tw, "daemon\t%s\t%s\t%s\t%s\t%d of %d\n", usStr(r.DaemonP50US), usStr(r.DaemonP90US), usStr(r.DaemonP99US), usStr(r.DaemonMaxUS), r.DaemonOK, r.DaemonSent)
	fmt.Fprintf(tw, "echo\t%s\t%s\t%s\t%s\t%d\n", usStr(r.EchoP50US), usStr(r.EchoP90US), usStr(r.EchoP99US), usStr(r.EchoMaxUS), r.EchoOK)
	if err := tw.Flush(); err != nil {
		return err
	}
	met := "met"
	if !r.FloorMet {
		met = "MISSED"
	}
	fmt.Fprintf(bw, "\nexecutor (queue + compute, mean)  %s\n", usStr(r.ExecutorMeanUS))
	fmt.Fprintf(bw, "overhead p50                      %s  (daemon p50 − echo p50 − executor; floor %s: %s)\n", usStr(r.OverheadP50US), usStr(r.FloorUS), met)
	if r.RefuseP50US > 0 {
		fmt.Fprintf(bw, "  read + decode + refuse          %s  (p50 of a decoded request refused with 400 − echo p50)\n", usStr(r.DecodeP50US))
		fmt.Fprintf(bw, "  route + executor hop + encode   %s  (the rest)\n", usStr(r.HopP50US))
	}
	fmt.Fprintf(bw, "requests/s answered               %.0f (SLO %gms, attainment %.1f%%)\n", r.RequestsPerSecond, r.SLOMS, 100*r.DaemonAttainment)
	fmt.Fprintf(bw, "CPU per request                   daemon %s, executor %s (%s and %s net of idle)\n", cpuStr(r.DaemonCPUUS), cpuStr(r.ExecutorCPUUS), cpuStr(r.DaemonNetCPUUS), cpuStr(r.ExecutorNetCPUUS))
	fmt.Fprintf(bw, "CPU when idle                     daemon %s, executor %s of a core\n", coreStr(r.DaemonIdleCPU), coreStr(r.ExecutorIdleCPU))
	return bw.Flush()
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func usStr(v float64) string { return millis(v / 1000) }

func coreStr(v float64) string {
	if v < 0 {
		return "unknown"
	}
	return percent(v)
}

func cpuStr(v float64) string {
	if v < 0 {
		return "unknown"
	}
	return usStr(v)
}
