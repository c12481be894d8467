package config

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpulet/gpuletd/profiler/refset"
)

// FieldError is one value that failed validation: which field, the bad value
// and what is allowed.
type FieldError struct {
	Field   string
	Value   string
	Allowed string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("%s: %s is not allowed; %s", e.Field, e.Value, e.Allowed)
}

// Allowed values of the enumerated fields.
var (
	LogLevels   = []string{"debug", "info", "warn", "error"}
	LogFormats  = []string{"auto", "json", "console", "journal"}
	Backends    = []string{"mps", "mig", "none"}
	Algorithms  = []string{"gpulet-int", "gpulet", "sbp", "ideal"}
	IdlePlans   = []string{IdlePlanSpread, IdlePlanPack}
	Providers   = []string{"cuda", "tensorrt"}
	DeviceModes = []string{DevicesAuto, DevicesNvidia, DevicesCPU}
	DeviceKinds = []string{KindCPU, KindNvidia, KindEmulated}
)

// The range of an emulated device's time_scale.
const (
	MinTimeScale = 0.01
	MaxTimeScale = 1000.0
)

// Validate checks every field and returns all problems at once, joined; each
// is a *FieldError and the whole wraps ErrInvalid.
func (c *Config) Validate() error {
	var errs []error
	bad := func(field string, value any, allowed string) {
		errs = append(errs, &FieldError{Field: field, Value: fmt.Sprintf("%q", fmt.Sprint(value)), Allowed: allowed})
	}
	oneOf := func(field, value string, allowed []string) {
		if !slices.Contains(allowed, value) {
			bad(field, value, "use one of "+strings.Join(allowed, ", "))
		}
	}

	if err := checkListen(c.Listen); err != nil {
		bad("listen", c.Listen, err.Error())
	}
	if c.GRPCListen != "" {
		if err := checkListen(c.GRPCListen); err != nil {
			bad("grpc_listen", c.GRPCListen, err.Error())
		} else if other := sameAddress(c.GRPCListen, map[string]string{"listen": c.Listen}); other != "" {
			bad("grpc_listen", c.GRPCListen, "it is "+other+"'s address; give gRPC a port of its own, such as 127.0.0.1:8701")
		}
	}
	if c.Metrics.Listen != "" {
		if err := checkListen(c.Metrics.Listen); err != nil {
			bad("metrics.listen", c.Metrics.Listen, err.Error())
		} else if other := sameAddress(c.Metrics.Listen, map[string]string{"listen": c.Listen, "grpc_listen": c.GRPCListen}); other != "" {
			bad("metrics.listen", c.Metrics.Listen, "it is "+other+"'s address; give the metrics a port of their own, such as 127.0.0.1:8702")
		}
	}
	for _, d := range []struct{ name, v string }{
		{"state_dir", c.StateDir}, {"runtime_dir", c.RuntimeDir}, {"model_repository", c.ModelRepository},
	} {
		if strings.TrimSpace(d.v) == "" {
			bad(d.name, d.v, "give a directory path")
		}
	}
	for i, d := range c.ExtraModelRepositories {
		f := fmt.Sprintf("extra_model_repositories[%d]", i)
		if strings.TrimSpace(d) == "" {
			bad(f, d, "give a directory path")
		} else if j := slices.IndexFunc(c.ModelRepositories()[:i+1], func(o string) bool { return filepath.Clean(o) == filepath.Clean(d) }); j >= 0 {
			bad(f, d, "it is "+RepositoryField(j)+" already; list each model repository once")
		}
	}
	if _, err := SummaryObjectives(c.Metrics.TritonSummaryQuantiles); err != nil {
		bad("metrics.triton_summary_quantiles", c.Metrics.TritonSummaryQuantiles, err.Error())
	} else if c.Metrics.TritonSummaries && len(c.Metrics.TritonSummaryQuantiles) == 0 {
		bad("metrics.triton_summary_quantiles", "[]", "give the quantiles the summaries track, such as [\"0.5:0.05\", \"0.99:0.001\"]")
	}
	if d := c.HistoryRetention.D(); d != 0 && d < time.Hour {
		bad("history_retention", d, "use 0s (keep everything) or at least 1h, such as 720h (30 days)")
	}
	if d := c.RepositoryPoll.D(); d != 0 && (d < time.Second || d > 24*time.Hour) {
		bad("repository_poll", d, "use 0s (no polling: a reload or the repository API) or 1s to 24h, such as 30s")
	}
	if name := c.ModelConfigName; name != "" && (strings.ContainsAny(name, "/\\ \t\n") || name == "." || name == ".." || strings.HasSuffix(name, ".pbtxt")) {
		bad("model_config_name", name, "give the name of the configs/<name>.pbtxt files to prefer, such as h100 (no spaces or slashes, no .pbtxt), or \"\" for config.pbtxt alone")
	}
	for i, name := range c.StartupModels {
		if name != StartupAll && (name == "" || strings.ContainsAny(name, "/ \t") || name == "." || name == "..") {
			bad(fmt.Sprintf("startup_models[%d]", i), name, `give a model folder's name, or "*" for every one`)
		}
	}
	if c.DefaultMaxBatchSize < 1 || c.DefaultMaxBatchSize > MaxBatchSizeLimit {
		bad("default_max_batch_size", c.DefaultMaxBatchSize, fmt.Sprintf("use 1 to %d, such as 32 (a model keeps from batching with max_batch_size: 0 in its configuration)", MaxBatchSizeLimit))
	}
	if d := c.DefaultSLO.D(); d < 0 || d > time.Hour {
		bad("default_slo", d, "use 0s (none) or a duration up to 1h, such as 100ms")
	}
	oneOf("log.level", c.Log.Level, LogLevels)
	oneOf("log.format", c.Log.Format, LogFormats)
	c.validateDevices(bad, oneOf)

	oneOf("partitioning.backend", c.Partitioning.Backend, Backends)
	if len(c.Partitioning.Sizes) == 0 {
		bad("partitioning.sizes", "[]", "list at least one gpu-let size in percent, such as [50, 100]")
	}
	seen := map[int]bool{}
	for i, s := range c.Partitioning.Sizes {
		f := fmt.Sprintf("partitioning.sizes[%d]", i)
		switch {
		case s < 1 || s > 100:
			bad(f, s, "sizes are percent of a GPU, 1 to 100")
		case seen[s]:
			bad(f, s, "each size once")
		}
		seen[s] = true
	}
	if m := c.Partitioning.MaxGPUletsPerGPU; m < 1 || m > 48 {
		// MPS serves at most 48 client processes per GPU (CUDA MPS documentation).
		bad("partitioning.max_gpulets_per_gpu", m, "use 1 to 48 (MPS serves at most 48 clients per GPU)")
	}

	if err := CheckPolicy(c.Scheduler.Policy); err != nil {
		bad("scheduler.policy", c.Scheduler.Policy, err.Error())
	}
	oneOf("scheduler.algorithm", c.Scheduler.Algorithm, Algorithms)
	oneOf("scheduler.idle_plan", c.Scheduler.IdlePlan, IdlePlans)
	if p := c.Scheduler.ReorganizePeriod.D(); p < time.Second || p > 24*time.Hour {
		bad("scheduler.reorganize_period", p, "use 1s to 24h")
	}
	if r := c.Scheduler.PriorityReserve; !(r >= 0 && r < MaxPriorityReserve) {
		bad("scheduler.priority_reserve", strconv.FormatFloat(r, 'g', -1, 64), fmt.Sprintf("use a share from 0 (levels change nothing) to below %g", MaxPriorityReserve))
	}
	if h := c.Scheduler.HangTimeout.D(); h != 0 && (h < time.Second || h > time.Hour) {
		bad("scheduler.hang_timeout", h, "use 1s to 1h, or 0 (5s on the CPU, 30s on GPUs)")
	}
	if w := c.Scheduler.EWMAWeight; !(w > 0 && w <= 1) {
		bad("scheduler.ewma_weight", strconv.FormatFloat(w, 'g', -1, 64), "use a weight above 0 and at most 1")
	}

	if b := c.Limits.MaxRequestBody; b < 1<<10 || b > 4<<30 {
		bad("limits.max_request_body", b, "use 1KiB to 4GiB")
	}
	if q := c.Limits.MaxQueuedPerModel; q < 1 || q > 1<<20 {
		bad("limits.max_queued_per_model", q, "use 1 to 1048576")
	}
	if d := c.Limits.BodyTimeout.D(); d < time.Second || d > time.Hour {
		bad("limits.body_timeout", d, "use 1s to 1h")
	}
	if d := c.Limits.IdleTimeout.D(); d < time.Second || d > time.Hour {
		bad("limits.idle_timeout", d, "use 1s to 1h")
	}
	if d := c.Limits.ShutdownTimeout.D(); d < 0 || d > time.Hour {
		bad("limits.shutdown_timeout", d, "use 0s to 1h")
	}
	if m := c.Limits.MaxConnections; m < 1 || m > 1<<20 {
		bad("limits.max_connections", m, "use 1 to 1048576")
	}
	// One body may fill three quarters of the budget, holding a byte more
	// than it has (connlimit.Budget.MaxBody): a budget below that would
	// refuse the largest bodies the limit lets in, every time.
	if b := c.Limits.MaxInflightBytes; b-b/4-1 < c.Limits.MaxRequestBody || b > 64<<30 {
		bad("limits.max_inflight_bytes", b, fmt.Sprintf("use at least %s, 4/3 of limits.max_request_body (one body may fill three quarters of it), at most 64GiB",
			minInflightBytes(c.Limits.MaxRequestBody)))
	}
	if b := c.ResponseCache.Size; b < 0 || b > 1<<40 {
		bad("response_cache.size", b, "use 0 (no cache) to 1024GiB")
	}
	oneOf("trace.mode", c.Trace.Mode, []string{TraceModeTriton, TraceModeOpenTelemetry})
	if c.Trace.Mode == TraceModeOpenTelemetry {
		if u, err := url.Parse(c.Trace.OpenTelemetryURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("trace.opentelemetry_url", c.Trace.OpenTelemetryURL, "give the collector's OTLP/HTTP traces endpoint, such as http://localhost:4318/v1/traces")
		}
	}
	for i, kv := range c.Trace.OpenTelemetryResource {
		if k, _, ok := strings.Cut(kv, "="); !ok || strings.TrimSpace(k) == "" {
			bad(fmt.Sprintf("trace.opentelemetry_resource[%d]", i), kv, "give key=value, such as deployment.environment=prod")
		}
	}
	validateTraceStart(c.Trace, func(field, value, why string) { bad(field, value, why) })
	if c.Trace.OpenTelemetryBSPMaxQueueSize < 1 {
		bad("trace.opentelemetry_bsp_max_queue_size", strconv.Itoa(c.Trace.OpenTelemetryBSPMaxQueueSize), "give a number of spans from 1 (default 2048)")
	}
	if n := c.Trace.OpenTelemetryBSPMaxExportBatchSize; n < 1 || n > c.Trace.OpenTelemetryBSPMaxQueueSize {
		bad("trace.opentelemetry_bsp_max_export_batch_size", strconv.Itoa(n), fmt.Sprintf("give a number of spans from 1 to trace.opentelemetry_bsp_max_queue_size (%d); default 512", c.Trace.OpenTelemetryBSPMaxQueueSize))
	}
	if d := c.Trace.OpenTelemetryBSPScheduleDelay.D(); d < time.Millisecond || d > time.Hour {
		bad("trace.opentelemetry_bsp_schedule_delay", d.String(), "give a duration from 1ms to 1h (default 5s)")
	}
	validateRestrictions(c.Auth.RestrictedAPIs, func(field, value, why string) { bad(field, value, why) })
	if (c.TLS.CertFile == "") != (c.TLS.KeyFile == "") {
		bad("tls", fmt.Sprintf("cert_file %q, key_file %q", c.TLS.CertFile, c.TLS.KeyFile), "give both a certificate and its key, or neither (plain HTTP and gRPC)")
	}
	if c.TLS.ClientCAFile != "" && c.TLS.CertFile == "" {
		bad("tls.client_ca_file", c.TLS.ClientCAFile, "client certificates are asked for over TLS: give tls.cert_file and tls.key_file too")
	}
	if (c.TLS.ClientCertFile == "") != (c.TLS.ClientKeyFile == "") {
		bad("tls", fmt.Sprintf("client_cert_file %q, client_key_file %q", c.TLS.ClientCertFile, c.TLS.ClientKeyFile), "give both the commands' client certificate and its key, or neither")
	}
	for i, g := range c.Partitioning.MIGReconfigure {
		if strings.TrimSpace(g) == "" {
			bad(fmt.Sprintf("partitioning.mig_reconfigure[%d]", i), g, `name a GPU by index or UUID, or "all"`)
		}
	}
	oneOf("onnxruntime.provider", c.ONNXRuntime.Provider, Providers)
	for i, d := range c.ONNXRuntime.CUDALibraryDirs {
		if !filepath.IsAbs(d) {
			bad(fmt.Sprintf("onnxruntime.cuda_library_dirs[%d]", i), d, "give an absolute directory (glob patterns allowed)")
		}
	}
	if strings.TrimSpace(c.MPS.ControlBinary) == "" {
		bad("mps.control_binary", c.MPS.ControlBinary, "name the nvidia-cuda-mps-control program")
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrInvalid, errors.Join(errs...))
}

func (c *Config) validateDevices(bad func(string, any, string), oneOf func(string, string, []string)) {
	if c.Devices.Mode != DevicesList {
		oneOf("devices", c.Devices.Mode, DeviceModes)
		return
	}
	if len(c.Devices.List) == 0 {
		bad("devices", "[]", "use auto, nvidia, cpu or list at least one device")
	}
	cpus := 0
	for i, d := range c.Devices.List {
		f := fmt.Sprintf("devices[%d]", i)
		oneOf(f+".kind", d.Kind, DeviceKinds)
		switch d.Kind {
		case KindEmulated:
			oneOf(f+".profiles", d.Profiles, refset.Names())
			if d.Count < 1 || d.Count > 64 {
				bad(f+".count", d.Count, "use 1 to 64 emulated GPUs")
			}
			if d.MemoryGB < 0 {
				bad(f+".memory_gb", d.MemoryGB, "use 0 (the set's memory) or a positive size")
			}
			if d.TimeScale != 0 && !(d.TimeScale >= MinTimeScale && d.TimeScale <= MaxTimeScale) {
				bad(f+".time_scale", d.TimeScale, fmt.Sprintf("use 0 (the set's own speed) or %g to %g", MinTimeScale, MaxTimeScale))
			}
		case KindCPU:
			cpus++
			if cpus > 1 {
				bad(f+".kind", d.Kind, "list the cpu device once")
			}
		}
		if d.Kind != KindEmulated && (d.Profiles != "" || d.Count != 0 || d.MemoryGB != 0 || d.TimeScale != 0) {
			bad(f, d.Kind, "profiles, count, memory_gb and time_scale belong to emulated devices only")
		}
		if d.Kind != KindNvidia && len(d.GPUs) > 0 {
			bad(f+".gpus", strings.Join(d.GPUs, ","), "gpus belongs to nvidia devices only")
		}
	}
}

func checkListen(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return errors.New("use host:port, such as 127.0.0.1:8700")
	}
	if host != "" && host != "localhost" && net.ParseIP(host) == nil {
		return errors.New("use an IP address or localhost as the host, such as 127.0.0.1:8700")
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 {
		return errors.New("use a port from 0 to 65535")
	}
	return nil
}

// sameAddress names the listener of others (by field) whose address addr
// would take too, or "": the same port on the same host, or on any host
// where either listens on all of them (0.0.0.0, ::, no host); port 0 (any
// free port) clashes with none.
func sameAddress(addr string, others map[string]string) string {
	host, port, _ := net.SplitHostPort(addr)
	if port == "0" {
		return ""
	}
	everywhere := func(h string) bool { return h == "" || net.ParseIP(h) != nil && net.ParseIP(h).IsUnspecified() }
	for _, field := range slices.Sorted(maps.Keys(others)) {
		h, p, err := net.SplitHostPort(others[field])
		if err == nil && p == port && (h == host || everywhere(h) || everywhere(host)) {
			return field
		}
	}
	return ""
}

// CheckPolicy accepts deferred, eager, flex and timeout:<duration>.
func CheckPolicy(p string) error {
	switch {
	case p == "deferred" || p == "eager" || p == "flex":
		return nil
	case strings.HasPrefix(p, "timeout:"):
		d, err := time.ParseDuration(strings.TrimPrefix(p, "timeout:"))
		if err != nil || d <= 0 {
			return errors.New("timeout needs a positive duration, such as timeout:2ms")
		}
		return nil
	}
	return errors.New("use deferred, eager, flex or timeout:<duration>")
}

// IsLoopback reports whether the listener only accepts local connections.
func (c *Config) IsLoopback() bool { return IsLoopbackAddr(c.Listen) }

// IsLoopbackAddr reports whether a listener's host:port only accepts local
// connections: localhost, 127.0.0.0/8 or ::1.
func IsLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// minInflightBytes is the least limits.max_inflight_bytes that holds one
// body of limits.max_request_body, rounded up to whole KiB.
func minInflightBytes(body ByteSize) ByteSize {
	const kib = 1 << 10
	b := (4*(body+1)/3 + kib - 1) / kib * kib
	for b-b/4-1 < body {
		b += kib
	}
	return b
}

// RepositoryField names the field of model repository i of
// Config.ModelRepositories.
func RepositoryField(i int) string {
	if i == 0 {
		return "model_repository"
	}
	return fmt.Sprintf("extra_model_repositories[%d]", i-1)
}
