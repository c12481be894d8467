package httpbench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/gpulet/gpuletd/internal/procfs"
	"github.com/gpulet/gpuletd/sim/loadgen"
	"google.golang.org/protobuf/proto"
)

// ErrNoAnswer is returned when a measurement got no answer at all.
var ErrNoAnswer = errors.New("no request answered")

// idleSpan is how long the bench watches the daemon doing nothing.
const idleSpan = 2 * time.Second

// Run starts the daemon and the echo server, finds or takes the rate,
// measures both one after the other, then the daemon's refusal path, and
// stops everything it started.
func Run(ctx context.Context, o Options) (*Result, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "gpuletd-bench-http-")
	if err != nil {
		return nil, fmt.Errorf("make temporary directory: %w", err)
	}
	defer os.RemoveAll(dir)
	repo := filepath.Join(dir, "models")
	if err := o.Repository(repo); err != nil {
		return nil, fmt.Errorf("write model repository: %w", err)
	}
	if o.SLO > 0 {
		if err := SetSLO(filepath.Join(repo, o.Model, "config.yaml"), o.SLO); err != nil {
			return nil, err
		}
	}

	d, device, note, err := startOnDevice(ctx, &o, environ(&o, dir, repo, o.GRPC), dir)
	if err != nil {
		return nil, err
	}
	defer d.stop()
	grpcAddr := d.grpc
	fmt.Fprintf(o.Progress, "daemon on %s (pid %d), device %s\n", d.base, d.cmd.Process.Pid, device)

	client := loadgen.NewClient(o.Concurrency, nil, nil)
	defer client.CloseIdleConnections()
	m, err := loadgen.FetchModel(ctx, client, d.base, o.Model, "")
	if err != nil {
		return nil, err
	}
	payload, err := loadgen.NewPayload(m, o.Binary, o.Seed)
	if err != nil {
		return nil, err
	}
	res := &Result{
		Device: device, DeviceNote: note, Policy: o.Policy, Model: o.Model, Protocol: "http", Tensors: "json",
		RequestBytes: len(payload.Body), SLOMS: ms(m.SLO),
		FloorUS: us(Floor), DaemonAllocs: -1, DaemonAllocBytes: -1, DaemonCPUUS: -1, ExecutorCPUUS: -1, DaemonNetCPUUS: -1, ExecutorNetCPUUS: -1, EchoCPUUS: -1,
	}
	if o.Binary {
		res.Tensors = "binary"
	}
	// The daemon and its bare twin: where each is reached.
	daemonAt, echoAt := target{url: d.base}, target{url: d.base}
	var spec *EchoSpec
	if o.GRPC {
		req, err := payload.GRPCRequest(o.Model)
		if err != nil {
			return nil, err
		}
		ans, err := firstGRPCAnswer(ctx, grpcAddr, req)
		if err != nil {
			return nil, fmt.Errorf("%w; the daemon's log ends: %s", err, d.logTail())
		}
		raw, err := proto.Marshal(ans)
		if err != nil {
			return nil, fmt.Errorf("keep the first answer: %w", err)
		}
		spec = &EchoSpec{Protocol: "grpc", GRPCAnswer: raw}
		daemonAt.grpc = grpcAddr
		res.Protocol, res.Tensors, res.FloorUS = "grpc", "raw", us(GRPCFloor)
		res.RequestBytes, res.ResponseBytes = proto.Size(req), float64(proto.Size(ans))
	} else {
		ans, err := firstAnswer(ctx, client, d.base, o.Model, payload)
		if err != nil {
			return nil, fmt.Errorf("%w; the daemon's log ends: %s", err, d.logTail())
		}
		spec = &EchoSpec{Protocol: "http", Body: ans.body, Header: map[string]string{}}
		for k := range ans.header {
			spec.Header[k] = ans.header.Get(k)
		}
		res.ResponseBytes = float64(len(ans.body))
	}
	echo, err := startBareServer(&o, dir, spec)
	if err != nil {
		return nil, err
	}
	defer echo.stop()
	res.Echo = "process"
	if o.InProcessEcho {
		res.Echo = "in-process"
	}
	if o.GRPC {
		echoAt.grpc = echo.addr
	} else {
		echoAt.url = "http://" + echo.addr
	}
	drive := func(at target, p *loadgen.Payload, okStatus int, rate float64, span time.Duration) (*loadgen.Report, error) {
		arr, err := loadgen.OpenArrivals("poisson", rate, o.Seed)
		if err != nil {
			return nil, err
		}
		return loadgen.Run(ctx, loadgen.Config{
			URL: at.url, GRPC: at.grpc, Model: o.Model, Rate: rate, Arrivals: arr, Duration: span, Warmup: o.Warmup,
			Concurrency: o.Concurrency, Payload: p, SLO: m.SLO, Client: client, Seed: o.Seed, OKStatus: okStatus,
		})
	}

	fmt.Fprintf(o.Progress, "measuring idle CPU for %s\n", idleSpan)
	idle, err := d.idle(ctx, client, idleSpan)
	if err != nil {
		return nil, err
	}
	res.DaemonIdleCPU, res.ExecutorIdleCPU = idle.daemon, idle.executor

	rate := o.Rate
	if rate <= 0 {
		probe := func(r float64) (*loadgen.Report, error) { return drive(daemonAt, payload, http.StatusOK, r, o.Probe) }
		if rate, res.Probes, err = SearchRate(o.Progress, o.MaxRate, probe); err != nil {
			return nil, err
		}
	}
	res.Rate, res.DurationS = rate, o.Duration.Seconds()

	fmt.Fprintf(o.Progress, "measuring the daemon at %g requests/s for %s\n", rate, o.Duration)
	before, err := d.sample(ctx, client)
	if err != nil {
		return nil, err
	}
	dr, err := drive(daemonAt, payload, http.StatusOK, rate, o.Duration)
	if err != nil {
		return nil, err
	}
	after, err := d.sample(ctx, client)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Progress, "measuring the echo at %g requests/s for %s\n", rate, o.Duration)
	echoCPU := processCPUSpan(echo.pid)
	er, err := drive(echoAt, payload, http.StatusOK, rate, o.Duration)
	if err != nil {
		return nil, err
	}
	res.EchoCPUUS = echoCPU(er.OK)
	if dr.OK == 0 || er.OK == 0 {
		return nil, fmt.Errorf("%w: daemon %d of %d (%s), echo %d of %d (%s)", ErrNoAnswer, dr.OK, dr.Sent, dr.FirstError, er.OK, er.Sent, er.FirstError)
	}
	res.fill(dr, er, before, after, idle)

	// Where the overhead goes: a payload whose inputs have names the model
	// does not know is read and decoded whole, then refused with 400
	// before any routing. (Over gRPC a refusal is an error the generator
	// does not time: not measured.)
	if o.GRPC {
		return res, nil
	}
	fmt.Fprintf(o.Progress, "measuring the daemon's refusal of a decoded request at %g requests/s for %s\n", rate, o.Probe)
	bad := *m
	bad.Metadata.Inputs = slices.Clone(m.Metadata.Inputs)
	for i := range bad.Metadata.Inputs {
		bad.Metadata.Inputs[i].Name += "_unknown"
	}
	badPayload, err := loadgen.NewPayload(&bad, o.Binary, o.Seed)
	if err != nil {
		return nil, err
	}
	rr, err := drive(daemonAt, badPayload, http.StatusBadRequest, rate, o.Probe)
	if err != nil {
		return nil, err
	}
	end, err := d.sample(ctx, client)
	if err != nil {
		return nil, err
	}
	res.Reorganizations = end.reorganizations - before.reorganizations
	if rr.OK > 0 {
		res.RefuseP50US = us(rr.Latency.P50)
		res.DecodeP50US = res.RefuseP50US - res.EchoP50US
		res.HopP50US = res.DaemonP50US - res.RefuseP50US - res.ExecutorMeanUS
	}
	return res, nil
}

// processCPUSpan starts measuring the CPU time of process pid; the
// function it returns gives the CPU per answered request since, in µs (-1
// when unknown: pid 0, a server in this process; no answer; /proc
// unreadable).
func processCPUSpan(pid int) func(answered int64) float64 {
	if pid <= 0 {
		return func(int64) float64 { return -1 }
	}
	before, err := procfs.CPUTime(pid)
	return func(answered int64) float64 {
		after, err2 := procfs.CPUTime(pid)
		if err != nil || err2 != nil || answered <= 0 {
			return -1
		}
		return us(after-before) / float64(answered)
	}
}

// target is where a server is reached: its base URL and, over gRPC, its
// gRPC address.
type target struct{ url, grpc string }

// fill derives the result from the two measurements and the daemon's
// samples around the first.
func (res *Result) fill(dr, er *loadgen.Report, before, after sample, idle idleShare) {
	res.DaemonP50US, res.DaemonP90US, res.DaemonP99US, res.DaemonMaxUS = us(dr.Latency.P50), us(dr.Latency.P90), us(dr.Latency.P99), us(dr.Latency.Max)
	res.EchoP50US, res.EchoP90US, res.EchoP99US, res.EchoMaxUS = us(er.Latency.P50), us(er.Latency.P90), us(er.Latency.P99), us(er.Latency.Max)
	res.DaemonSent, res.DaemonOK, res.DaemonAttainment, res.EchoOK = dr.Sent, dr.OK, dr.Attainment, er.OK
	res.DaemonFailed, res.DaemonFirstError = dr.Failed, dr.FirstError
	res.DaemonLagP99US, res.EchoLagP99US = us(dr.Lag.P99), us(er.Lag.P99)
	res.RequestsPerSecond = float64(dr.OK) / dr.Window.Seconds()
	if n := after.executorCount - before.executorCount; n > 0 {
		res.ExecutorMeanUS = float64(after.executorNS-before.executorNS) / float64(n) / 1e3
	}
	if after.hopCount > before.hopCount {
		res.HopMeanUS = (after.hopSum - before.hopSum) / float64(after.hopCount-before.hopCount) * 1e6
	}
	res.DifferenceP50US = res.DaemonP50US - res.EchoP50US
	res.OverheadP50US = res.DifferenceP50US - res.ExecutorMeanUS
	res.FloorMet = res.OverheadP50US < res.FloorUS
	answered := after.answered - before.answered
	if answered <= 0 {
		return
	}
	if before.mallocs >= 0 && after.mallocs >= 0 {
		res.DaemonAllocs = (after.mallocs - before.mallocs) / float64(answered)
		res.DaemonAllocBytes = (after.allocBytes - before.allocBytes) / float64(answered)
	}
	span := us(after.at.Sub(before.at))
	if before.daemonCPU >= 0 && after.daemonCPU >= 0 {
		cpu := us(after.daemonCPU - before.daemonCPU)
		res.DaemonCPUUS = cpu / float64(answered)
		if idle.daemon >= 0 {
			res.DaemonNetCPUUS = max(cpu-idle.daemon*span, 0) / float64(answered)
		}
	}
	if before.executorCPU >= 0 && after.executorCPU >= 0 && slices.Equal(before.executorPIDs, after.executorPIDs) {
		cpu := us(after.executorCPU - before.executorCPU)
		res.ExecutorCPUUS = cpu / float64(answered)
		if idle.executor >= 0 {
			res.ExecutorNetCPUUS = max(cpu-idle.executor*span, 0) / float64(answered)
		}
	}
}
