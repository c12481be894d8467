package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// tritonArgs is what tritonserver's command line says, as gpuletd's
// configuration: the fields set (with the flag that set each) and the
// flags taken but ignored, with why.
type tritonArgs struct {
	overrides []configOverride
	notes     []string
}

// tritonFlag reads one of tritonserver's flags into t; values are the
// values it was given, in order (a flag given once has one).
type tritonFlag func(t *tritonState, values []string) error

// tritonState gathers the flags before they become fields: several flags
// make one field (an address and a port, a mode and its models).
type tritonState struct {
	repositories                     []string
	httpAddr, grpcAddr, metricsAddr  string
	httpPort, grpcPort, metricsPort  string
	allowGRPC, allowMetrics, strict  bool
	controlMode, pollSecs            string
	loadModels, restricted, cacheArg []string
	metricsConfig                    []string
	logLevel                         string
	tls                              struct {
		on, mutual      bool
		cert, key, root string
	}
	trace map[string]string
	// traceFrom names the older trace flag (--trace-level…) that gave a
	// trace setting, for --print-config and the notes; --trace-config
	// where none did.
	traceFrom map[string]string
	out       tritonArgs
}

func (s *tritonState) set(path, value, flag string) {
	s.out.overrides = append(s.out.overrides, configOverride{path: path, value: value, flag: "--" + flag})
}

func (s *tritonState) note(flag, why string) {
	s.out.notes = append(s.out.notes, fmt.Sprintf("tritonserver flag --%s ignored: %s", flag, why))
}

// yamlList is a list as the configuration reads one from a flag.
func yamlList(v []string) string {
	if v == nil {
		v = []string{}
	}
	b, _ := json.Marshal(v) // JSON is YAML flow; strings do not fail
	return string(b)
}

func one(name string, values []string) (string, error) {
	if len(values) != 1 {
		return "", fmt.Errorf("--%s is given %d times: give it once", name, len(values))
	}
	return values[0], nil
}

func boolArg(name string, values []string) (bool, error) {
	v, err := one(name, values)
	if err != nil {
		return false, err
	}
	b, perr := strconv.ParseBool(v)
	if perr != nil {
		return false, fmt.Errorf("--%s=%s: give true or false", name, v)
	}
	return b, nil
}

func portArg(name string, values []string) (string, error) {
	return numberArg(name, values, 0, 65535, "give a port number")
}

// numberArg is the flag name's one value, a whole number from lo to hi;
// want says what to give instead of another.
func numberArg(name string, values []string, lo, hi int64, want string) (string, error) {
	v, err := one(name, values)
	if err != nil {
		return "", err
	}
	if n, perr := strconv.ParseInt(v, 10, 64); perr != nil || n < lo || n > hi {
		return "", fmt.Errorf("--%s=%s: %s", name, v, want)
	}
	return v, nil
}

// stringInto reads the flag name's one value into *into.
func stringInto(name string, into func(*tritonState) *string) tritonFlag {
	return func(s *tritonState, v []string) error {
		x, err := one(name, v)
		*into(s) = x
		return err
	}
}

// eachValue is a flag whose values are each one setting, read by read.
func eachValue(read func(s *tritonState, value string) error) tritonFlag {
	return func(s *tritonState, v []string) error {
		for _, x := range v {
			if err := read(s, x); err != nil {
				return err
			}
		}
		return nil
	}
}

// deprecatedTrace is one of Triton's trace flags from before
// --trace-config (--trace-level=…), read as its --trace-config setting.
func deprecatedTrace(setting string) tritonFlag {
	return eachValue(func(s *tritonState, x string) error {
		s.traceFrom[setting] = "trace-" + setting
		return s.traceSetting(setting + "=" + x)
	})
}

// ignored is a flag gpuletd takes and says it ignores, with why.
func ignored(flag, why string) tritonFlag {
	return func(s *tritonState, _ []string) error { s.note(flag, why); return nil }
}

// Why gpuletd ignores flags that share a reason.
const (
	autoCompletes = "gpuletd completes a configuration from its model file where it leaves the inputs, outputs or max_batch_size out, " +
		"as Triton does by default, and reads one that gives them as it is"
	sharesByPlan = "gpuletd's planner shares the GPUs by each model's SLO and rate, and its router holds each gpu-let to its share"
)

// tritonFlags are the flags of tritonserver gpuletd reads: a flag whose
// meaning gpuletd cannot give is refused with why, one that only tunes
// Triton's own machinery is taken and said to be ignored (tunedAway).
var tritonFlags = map[string]tritonFlag{
	"model-repository": func(s *tritonState, v []string) error {
		s.repositories = v // the first is model_repository, the rest extra_model_repositories
		return nil
	},
	"model-namespacing": func(s *tritonState, v []string) error {
		if on, err := boolArg("model-namespacing", v); err != nil || !on {
			return err
		}
		s.note("model-namespacing", "gpuletd serves a model name from one repository: a name more than one holds is served from none and says why, as Triton does without namespacing")
		return nil
	},
	"model-config-name": func(s *tritonState, v []string) error {
		x, err := one("model-config-name", v)
		if err == nil {
			s.set("model_config_name", x, "model-config-name")
		}
		return err
	},
	"http-address":    stringInto("http-address", func(s *tritonState) *string { return &s.httpAddr }),
	"grpc-address":    stringInto("grpc-address", func(s *tritonState) *string { return &s.grpcAddr }),
	"metrics-address": stringInto("metrics-address", func(s *tritonState) *string { return &s.metricsAddr }),
	"http-port":       func(s *tritonState, v []string) (err error) { s.httpPort, err = portArg("http-port", v); return },
	"grpc-port":       func(s *tritonState, v []string) (err error) { s.grpcPort, err = portArg("grpc-port", v); return },
	"metrics-port":    func(s *tritonState, v []string) (err error) { s.metricsPort, err = portArg("metrics-port", v); return },
	"allow-http": func(_ *tritonState, v []string) error {
		if on, err := boolArg("allow-http", v); err != nil || on {
			return err
		}
		return fmt.Errorf("--allow-http=false: gpuletd always serves REST (the admin page and the API beside it); keep it on loopback with --http-address=127.0.0.1")
	},
	"allow-grpc": func(s *tritonState, v []string) (err error) { s.allowGRPC, err = boolArg("allow-grpc", v); return },
	"allow-metrics": func(s *tritonState, v []string) (err error) {
		s.allowMetrics, err = boolArg("allow-metrics", v)
		return
	},
	"strict-readiness":   func(s *tritonState, v []string) (err error) { s.strict, err = boolArg("strict-readiness", v); return },
	"model-control-mode": stringInto("model-control-mode", func(s *tritonState) *string { return &s.controlMode }),
	"repository-poll-secs": func(s *tritonState, v []string) (err error) {
		s.pollSecs, err = numberArg("repository-poll-secs", v, 0, math.MaxInt64, "give whole seconds")
		return err
	},
	"load-model":               func(s *tritonState, v []string) error { s.loadModels = append(s.loadModels, v...); return nil },
	"http-restricted-api":      func(s *tritonState, v []string) error { s.restricted = append(s.restricted, v...); return nil },
	"grpc-restricted-protocol": func(s *tritonState, v []string) error { s.restricted = append(s.restricted, v...); return nil },
	"cache-config":             func(s *tritonState, v []string) error { s.cacheArg = append(s.cacheArg, v...); return nil },
	"metrics-config":           func(s *tritonState, v []string) error { s.metricsConfig = append(s.metricsConfig, v...); return nil },
	"log-verbose": func(s *tritonState, v []string) error {
		x, err := one("log-verbose", v)
		if n, perr := strconv.Atoi(x); err == nil && perr == nil && n > 0 {
			s.logLevel = "debug"
		}
		return err
	},
	"log-info": func(s *tritonState, v []string) error {
		on, err := boolArg("log-info", v)
		if err == nil && !on && s.logLevel == "" {
			s.logLevel = "warn"
		}
		return err
	},
	"log-warning": func(s *tritonState, v []string) error {
		on, err := boolArg("log-warning", v)
		if err == nil && !on && (s.logLevel == "" || s.logLevel == "warn") {
			s.logLevel = "error"
		}
		return err
	},
	"log-error":  ignored("log-error", "gpuletd always logs its errors"),
	"log-format": ignored("log-format", "gpuletd's log.format (json or console) says how lines look"),
	"log-file":   ignored("log-file", "gpuletd logs to standard error, which systemd's journal or the container runtime keeps"),
	"grpc-use-ssl": func(s *tritonState, v []string) (err error) {
		s.tls.on, err = boolArg("grpc-use-ssl", v)
		return
	},
	"grpc-use-ssl-mutual": func(s *tritonState, v []string) (err error) {
		s.tls.mutual, err = boolArg("grpc-use-ssl-mutual", v)
		return
	},
	"grpc-server-cert": stringInto("grpc-server-cert", func(s *tritonState) *string { return &s.tls.cert }),
	"grpc-server-key":  stringInto("grpc-server-key", func(s *tritonState) *string { return &s.tls.key }),
	"grpc-root-cert":   stringInto("grpc-root-cert", func(s *tritonState) *string { return &s.tls.root }),
	"trace-config":     eachValue((*tritonState).traceSetting),
	"backend-config":   eachValue((*tritonState).backendSetting),
	"allow-client-shm": func(s *tritonState, v []string) error {
		on, err := boolArg("allow-client-shm", v)
		if err == nil {
			s.set("allow_client_shm", strconv.FormatBool(on), "allow-client-shm")
		}
		return err
	},
	"http-max-input-size": func(s *tritonState, v []string) error {
		x, err := numberArg("http-max-input-size", v, 1, math.MaxInt64, "give a number of bytes")
		if err == nil {
			s.set("limits.max_request_body", x, "http-max-input-size") // gRPC's messages too: gpuletd has one limit
		}
		return err
	},
	// Triton's trace flags from before --trace-config, which it still reads.
	"trace-file":          deprecatedTrace("file"),
	"trace-level":         deprecatedTrace("level"),
	"trace-rate":          deprecatedTrace("rate"),
	"trace-count":         deprecatedTrace("count"),
	"trace-log-frequency": deprecatedTrace("log-frequency"),
	"exit-timeout-secs": func(s *tritonState, v []string) error {
		x, err := numberArg("exit-timeout-secs", v, 0, 3600, "give whole seconds, 0 to 3600")
		if err == nil {
			s.set("limits.shutdown_timeout", x+"s", "exit-timeout-secs")
		}
		return err
	},
	"id": ignored("id", "gpuletd's server metadata names it gpuletd"),
	// Triton's flag from before --cache-config: the local cache's size.
	"response-cache-byte-size": func(s *tritonState, v []string) error {
		x, err := numberArg("response-cache-byte-size", v, 0, math.MaxInt64, "give a number of bytes")
		if err == nil {
			s.cacheArg = append(s.cacheArg, "local,size="+x)
		}
		return err
	},
	"exit-on-error": ignored("exit-on-error", "gpuletd serves the models it can and says why each other one cannot "+
		"(gpuletd status, GET /v2/models/M/ready); under --strict-readiness it is not ready while one cannot, and /v2/health/ready names them"),
	"strict-model-config":          ignored("strict-model-config", autoCompletes),
	"disable-auto-complete-config": ignored("disable-auto-complete-config", autoCompletes),
	"allow-gpu-metrics":            ignored("allow-gpu-metrics", "gpuletd exports its GPUs' metrics (nv_gpu_* under Triton's names) whenever it has NVIDIA GPUs"),
	"allow-cpu-metrics":            ignored("allow-cpu-metrics", "gpuletd exports the host's CPU and memory (nv_cpu_* under Triton's names) at every scrape"),
	"rate-limit":                   ignored("rate-limit", sharesByPlan),
	"rate-limit-resource":          ignored("rate-limit-resource", sharesByPlan),
	"model-load-gpu-limit":         ignored("model-load-gpu-limit", "gpuletd places models within each GPU's memory by what each was measured to hold"),
}

// tunedAway are tritonserver's flags that tune Triton's own machinery,
// which gpuletd does not have: taken and said to be ignored.
var tunedAway = []string{
	"backend-directory", "repoagent-directory", "pinned-memory-pool-byte-size", "cuda-memory-pool-byte-size",
	"cuda-virtual-address-size", "min-supported-compute-capability", "buffer-manager-thread-count", "model-load-thread-count",
	"model-load-retry-count", "http-thread-count", "http-header-forward-pattern", "grpc-header-forward-pattern",
	"grpc-infer-allocation-pool-size", "grpc-max-response-pool-size", "grpc-keepalive-time", "grpc-keepalive-timeout",
	"grpc-keepalive-permit-without-calls", "grpc-http2-max-pings-without-data", "grpc-http2-min-recv-ping-interval-without-data",
	"grpc-http2-max-ping-strikes", "grpc-infer-response-compression-level", "grpc-restricted-protocol-header", "reuse-http-port",
	"reuse-grpc-port", "metrics-interval-ms", "allow-sagemaker",
	"allow-vertex-ai", "host-policy", "enable-peer-access",
	"cache-directory", "grpc-infer-thread-count", "grpc-max-connection-age", "grpc-max-connection-age-grace",
	"sagemaker-port", "sagemaker-safe-port-range", "sagemaker-thread-count", "vertex-ai-port", "vertex-ai-thread-count",
	"vertex-ai-default-model",
}

// parseTritonArgs reads tritonserver's command line ("--flag=value",
// "--flag value", a bare boolean flag) as gpuletd's configuration, with
// Triton's defaults for what it covers: REST on 0.0.0.0:8000, gRPC on
// 8001, metrics on 8002, strict readiness, every model loaded at start.
func parseTritonArgs(args []string) (tritonArgs, error) {
	values := map[string][]string{}
	var order []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, ok := strings.CutPrefix(a, "--")
		if !ok || name == "" {
			return tritonArgs{}, fmt.Errorf("%q is not one of tritonserver's flags (--name=value)", a)
		}
		name, value, hasValue := strings.Cut(name, "=")
		if name == "model-store" {
			name = "model-repository"
		}
		if _, known := tritonFlags[name]; !known && !slices.Contains(tunedAway, name) {
			return tritonArgs{}, fmt.Errorf("--%s: not a tritonserver flag gpuletd reads; gpuletd tritonserver --help lists them", name)
		}
		if !hasValue {
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
				i++
				value = args[i]
			} else {
				value = "true" // a bare boolean flag
			}
		}
		if _, seen := values[name]; !seen {
			order = append(order, name)
		}
		values[name] = append(values[name], value)
	}
	s := &tritonState{allowGRPC: true, allowMetrics: true, strict: true, trace: map[string]string{}, traceFrom: map[string]string{}}
	for _, name := range order {
		if slices.Contains(tunedAway, name) {
			s.note(name, "it tunes Triton's own machinery, which gpuletd does not have")
			continue
		}
		if err := tritonFlags[name](s, values[name]); err != nil {
			return tritonArgs{}, err
		}
	}
	return s.fields()
}

// fields turns the flags read into the configuration's fields.
func (s *tritonState) fields() (tritonArgs, error) {
	if len(s.repositories) == 0 {
		return tritonArgs{}, fmt.Errorf("give --model-repository=DIR, as tritonserver asks")
	}
	for _, r := range s.repositories {
		if scheme, _, remote := strings.Cut(r, "://"); remote {
			return tritonArgs{}, fmt.Errorf("--model-repository=%s: gpuletd reads a model repository on this machine, not from %s://; copy it into a folder (or mount it) and give that", r, scheme)
		}
	}
	s.set("model_repository", s.repositories[0], "model-repository")
	if len(s.repositories) > 1 {
		s.set("extra_model_repositories", yamlList(s.repositories[1:]), "model-repository")
	}
	addr := func(host, dflt, port, dport string) string {
		return net.JoinHostPort(cmp.Or(host, dflt), cmp.Or(port, dport))
	}
	s.set("listen", addr(s.httpAddr, "0.0.0.0", s.httpPort, "8000"), "http-port")
	grpc := ""
	if s.allowGRPC {
		grpc = addr(s.grpcAddr, "0.0.0.0", s.grpcPort, "8001")
	}
	s.set("grpc_listen", grpc, "grpc-port")
	metrics := ""
	if s.allowMetrics {
		metrics = addr(s.metricsAddr, cmp.Or(s.httpAddr, "0.0.0.0"), s.metricsPort, "8002")
	} else {
		s.note("allow-metrics", "/metrics is served on the REST port all the same, beside the API")
	}
	s.set("metrics.listen", metrics, "metrics-port")
	s.set("metrics.triton_names", "true", "allow-metrics") // Triton's metrics are its names
	if err := s.readMetricsConfig(); err != nil {
		return tritonArgs{}, err
	}
	s.set("strict_readiness", strconv.FormatBool(s.strict), "strict-readiness")

	switch s.controlMode {
	case "", "none":
		s.set("repository_poll", "0s", "model-control-mode")
		s.set("startup_models", yamlList([]string{"*"}), "model-control-mode")
	case "poll":
		s.set("repository_poll", cmp.Or(s.pollSecs, "15")+"s", "repository-poll-secs")
		s.set("startup_models", yamlList([]string{"*"}), "model-control-mode")
	case "explicit":
		s.set("repository_poll", "0s", "model-control-mode")
		s.set("startup_models", yamlList(s.loadModels), "load-model")
	default:
		return tritonArgs{}, fmt.Errorf("--model-control-mode=%s: give none, poll or explicit", s.controlMode)
	}
	if len(s.loadModels) > 0 && s.controlMode != "explicit" {
		return tritonArgs{}, fmt.Errorf("--load-model is for --model-control-mode=explicit, as in Triton")
	}
	if len(s.restricted) > 0 {
		s.set("auth.restricted_apis", yamlList(slices.Compact(slices.Sorted(slices.Values(s.restricted)))), "http-restricted-api")
	}
	for _, c := range s.cacheArg {
		kind, rest, _ := strings.Cut(c, ",")
		size, ok := strings.CutPrefix(rest, "size=")
		if kind != "local" || !ok {
			return tritonArgs{}, fmt.Errorf("--cache-config=%s: gpuletd keeps a local cache in its memory: give local,size=BYTES", c)
		}
		s.set("response_cache.size", size, "cache-config")
	}
	if s.logLevel != "" {
		s.set("log.level", s.logLevel, "log-verbose")
	}
	if s.tls.on || s.tls.mutual {
		if s.tls.cert == "" || s.tls.key == "" {
			return tritonArgs{}, fmt.Errorf("--grpc-use-ssl: give --grpc-server-cert and --grpc-server-key")
		}
		s.set("tls.cert_file", s.tls.cert, "grpc-server-cert")
		s.set("tls.key_file", s.tls.key, "grpc-server-key")
		if s.tls.mutual {
			if s.tls.root == "" {
				return tritonArgs{}, fmt.Errorf("--grpc-use-ssl-mutual: give --grpc-root-cert, the clients' CA")
			}
			s.set("tls.client_ca_file", s.tls.root, "grpc-root-cert")
		}
		s.out.notes = append(s.out.notes, "tritonserver's --grpc-use-ssl serves REST over HTTPS too: gpuletd has one certificate for both")
	}
	for _, k := range slices.Sorted(maps.Keys(s.trace)) {
		switch k {
		case "mode":
			s.set("trace.mode", s.trace[k], "trace-config")
		case "opentelemetry,url":
			s.set("trace.opentelemetry_url", s.trace[k], "trace-config")
		case "opentelemetry,resource":
			s.set("trace.opentelemetry_resource", yamlList(strings.Split(s.trace[k], "\x00")), "trace-config")
		case "opentelemetry,bsp_max_queue_size":
			s.set("trace.opentelemetry_bsp_max_queue_size", s.trace[k], "trace-config")
		case "opentelemetry,bsp_max_export_batch_size":
			s.set("trace.opentelemetry_bsp_max_export_batch_size", s.trace[k], "trace-config")
		case "opentelemetry,bsp_schedule_delay":
			s.set("trace.opentelemetry_bsp_schedule_delay", s.trace[k]+"ms", "trace-config")
		case "level":
			s.set("trace.level", yamlList(strings.Split(s.trace[k], "\x00")), cmp.Or(s.traceFrom[k], "trace-config"))
		case "rate", "count", "file":
			s.set("trace."+k, s.trace[k], cmp.Or(s.traceFrom[k], "trace-config"))
		case "log-frequency":
			s.set("trace.log_frequency", s.trace[k], cmp.Or(s.traceFrom[k], "trace-config"))
		}
	}
	return s.out, nil
}

// traceSetting reads one --trace-config value: [mode,]setting=value.
func (s *tritonState) traceSetting(e string) error {
	key, value, ok := strings.Cut(e, "=")
	if !ok {
		return fmt.Errorf("--trace-config=%s: give [mode,]setting=value", e)
	}
	switch key {
	case "mode", "opentelemetry,url", "opentelemetry,bsp_max_queue_size", "opentelemetry,bsp_max_export_batch_size", "opentelemetry,bsp_schedule_delay":
		s.trace[key] = value
	case "opentelemetry,resource", "level":
		if old, ok := s.trace[key]; ok {
			value = old + "\x00" + value
		}
		s.trace[key] = value
	case "rate", "count", "log-frequency", "triton,log-frequency":
		s.trace[strings.TrimPrefix(key, "triton,")] = value
	case "file", "triton,file":
		s.trace["file"] = filepath.Base(value)
		if filepath.Base(value) != value {
			given := "--trace-config " + e
			if f := s.traceFrom["file"]; f != "" {
				given = "--" + f + " " + value
			}
			s.out.notes = append(s.out.notes, fmt.Sprintf("tritonserver flag %s: the traces go to %s under gpuletd's state_dir, in traces/", given, filepath.Base(value)))
		}
	default:
		return fmt.Errorf("--trace-config=%s: gpuletd reads mode=, level=, rate=, count=, log-frequency=, file=, opentelemetry,url=, opentelemetry,resource= and opentelemetry,bsp_*=", e)
	}
	return nil
}

// backendSetting reads one --backend-config=[backend,]setting=value:
// default-max-batch-size, of every backend or of onnxruntime's, is
// default_max_batch_size; the rest tune Triton's backends and are noted.
func (s *tritonState) backendSetting(e string) error {
	setting, value, ok := strings.Cut(e, "=")
	backend, key, scoped := strings.Cut(setting, ",")
	if !scoped {
		backend, key = "", setting
	}
	if !ok || key == "" {
		return fmt.Errorf("--backend-config=%s: give [backend,]setting=value", e)
	}
	if key != "default-max-batch-size" || (backend != "" && backend != "onnxruntime") {
		s.note("backend-config "+e, "it tunes a Triton backend, which gpuletd does not have (gpuletd runs ONNX Runtime itself: its onnxruntime settings)")
		return nil
	}
	n, err := strconv.Atoi(value)
	switch {
	case err != nil || n < 0:
		return fmt.Errorf("--backend-config=%s: give a whole number of rows", e)
	case n == 0:
		return fmt.Errorf("--backend-config=%s: gpuletd's default_max_batch_size is 1 or more; keep a model from batching with max_batch_size: 0 in its config.pbtxt", e)
	}
	s.set("default_max_batch_size", value, "backend-config")
	return nil
}

// metricsConfigSwitches are --metrics-config's boolean settings and the
// fields they set; "" for one read and noted (histogram_latencies).
var metricsConfigSwitches = map[string]string{
	"summary_latencies": "metrics.triton_summaries", "counter_latencies": "metrics.triton_latency_counters", "histogram_latencies": "",
}

// readMetricsConfig reads --metrics-config's key=value settings: the
// latency counters and summaries and the summaries' quantiles.
func (s *tritonState) readMetricsConfig() error {
	for _, kv := range s.metricsConfig {
		key, value, ok := strings.Cut(kv, "=")
		flag := "metrics-config"
		switch {
		case !ok:
			return fmt.Errorf("--metrics-config=%s: give key=value, such as summary_latencies=true", kv)
		case key == "summary_quantiles":
			s.set("metrics.triton_summary_quantiles", yamlList(strings.Split(value, ",")), flag)
			continue
		}
		field, known := metricsConfigSwitches[key]
		if !known {
			return fmt.Errorf("--metrics-config=%s: gpuletd reads summary_latencies, summary_quantiles, counter_latencies and histogram_latencies", kv)
		}
		on, err := strconv.ParseBool(value)
		switch {
		case err != nil:
			return fmt.Errorf("--metrics-config=%s: give true or false", kv)
		case field != "":
			s.set(field, strconv.FormatBool(on), flag)
		case on: // histogram_latencies
			s.note(flag+" "+kv, "Triton's histogram is the time to a decoupled model's first response, and gpuletd serves no decoupled models; gpuletd_request_duration_seconds is a histogram of every request's time")
		}
	}
	return nil
}
