package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// tritonserver's command line becomes the configuration's fields, with
// Triton's defaults for what it covers; what gpuletd cannot give is
// refused with why, and Triton's own tuning is noted as ignored.
func TestParseTritonArgs(t *testing.T) {
	base := map[string]string{
		"model_repository": "/models", "listen": "0.0.0.0:8000", "grpc_listen": "0.0.0.0:8001", "metrics.listen": "0.0.0.0:8002",
		"strict_readiness": "true", "repository_poll": "0s", "startup_models": `["*"]`, "metrics.triton_names": "true",
	}
	with := func(changes map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range base {
			out[k] = v
		}
		for k, v := range changes {
			out[k] = v
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		args   []string
		fields map[string]string
		notes  []string
		err    string
	}{
		{"Triton's defaults", []string{"--model-repository=/models"}, base, nil, ""},
		{"model-store, spaced values, addresses", []string{"--model-store", "/models", "--http-address=127.0.0.1", "--http-port", "9000", "--grpc-port=9001", "--allow-metrics=false", "--strict-readiness=false"},
			with(map[string]string{"listen": "127.0.0.1:9000", "grpc_listen": "0.0.0.0:9001", "metrics.listen": "", "strict_readiness": "false"}),
			[]string{"tritonserver flag --allow-metrics ignored: /metrics is served on the REST port all the same, beside the API"}, ""},
		{"the metrics address follows the HTTP one", []string{"--model-repository=/models", "--http-address=10.0.0.5", "--allow-grpc=false"},
			with(map[string]string{"listen": "10.0.0.5:8000", "metrics.listen": "10.0.0.5:8002", "grpc_listen": ""}), nil, ""},
		{"poll", []string{"--model-repository=/models", "--model-control-mode=poll", "--repository-poll-secs=30"},
			with(map[string]string{"repository_poll": "30s"}), nil, ""},
		{"explicit", []string{"--model-repository=/models", "--model-control-mode=explicit", "--load-model=a", "--load-model", "b"},
			with(map[string]string{"startup_models": `["a","b"]`}), nil, ""},
		{"explicit, none at start", []string{"--model-repository=/models", "--model-control-mode=explicit"},
			with(map[string]string{"startup_models": `[]`}), nil, ""},
		{"restrictions from both protocols, once each", []string{"--model-repository=/models", "--http-restricted-api=model-repository:admin-key=v",
			"--grpc-restricted-protocol=model-repository:admin-key=v", "--grpc-restricted-protocol=inference:k=w"},
			with(map[string]string{"auth.restricted_apis": `["inference:k=w","model-repository:admin-key=v"]`}), nil, ""},
		{"cache, logs, TLS, traces", []string{"--model-repository=/models", "--cache-config=local,size=1048576", "--log-verbose=1",
			"--grpc-use-ssl=true", "--grpc-server-cert=c.pem", "--grpc-server-key=k.pem", "--grpc-use-ssl-mutual", "--grpc-root-cert=ca.pem",
			"--trace-config", "mode=opentelemetry", "--trace-config=opentelemetry,url=http://c:4318/v1/traces",
			"--trace-config=opentelemetry,resource=a=1", "--trace-config=opentelemetry,resource=b=2", "--trace-config=opentelemetry,bsp_schedule_delay=200",
			"--trace-config=rate=100", "--trace-config", "level=TIMESTAMPS", "--trace-config=level=TENSORS", "--trace-config=count=5",
			"--trace-config=triton,file=/tmp/trace.json", "--trace-config=log-frequency=50"},
			with(map[string]string{"response_cache.size": "1048576", "log.level": "debug", "tls.cert_file": "c.pem", "tls.key_file": "k.pem",
				"tls.client_ca_file": "ca.pem", "trace.mode": "opentelemetry", "trace.opentelemetry_url": "http://c:4318/v1/traces",
				"trace.opentelemetry_resource": `["a=1","b=2"]`, "trace.opentelemetry_bsp_schedule_delay": "200ms",
				"trace.rate": "100", "trace.level": `["TIMESTAMPS","TENSORS"]`, "trace.count": "5", "trace.file": "trace.json", "trace.log_frequency": "50"}),
			[]string{"tritonserver flag --trace-config triton,file=/tmp/trace.json: the traces go to trace.json under gpuletd's state_dir, in traces/",
				"tritonserver's --grpc-use-ssl serves REST over HTTPS too: gpuletd has one certificate for both"}, ""},
		{"Triton's own tuning", []string{"--model-repository=/models", "--backend-config=tensorflow,version=2", "--model-load-thread-count=8"},
			base, []string{"tritonserver flag --backend-config tensorflow,version=2 ignored: it tunes a Triton backend, which gpuletd does not have (gpuletd runs ONNX Runtime itself: its onnxruntime settings)",
				"tritonserver flag --model-load-thread-count ignored: it tunes Triton's own machinery, which gpuletd does not have"}, ""},
		{"the response cache's size, as Triton's flag before --cache-config gave it", []string{"--model-repository=/models", "--response-cache-byte-size=1048576"},
			with(map[string]string{"response_cache.size": "1048576"}), nil, ""},
		{"a cache size that is no number of bytes", []string{"--model-repository=/models", "--response-cache-byte-size=1MB"}, nil, nil, "--response-cache-byte-size=1MB: give a number of bytes"},
		{"flags whose behaviour gpuletd has its own way of", []string{"--model-repository=/models", "--exit-on-error=false", "--strict-model-config=false", "--rate-limit=execution_count"},
			base, []string{"tritonserver flag --exit-on-error ignored: gpuletd serves the models it can and says why each other one cannot (gpuletd status, GET /v2/models/M/ready); under --strict-readiness it is not ready while one cannot, and /v2/health/ready names them",
				"tritonserver flag --strict-model-config ignored: gpuletd completes a configuration from its model file where it leaves the inputs, outputs or max_batch_size out, as Triton does by default, and reads one that gives them as it is",
				"tritonserver flag --rate-limit ignored: gpuletd's planner shares the GPUs by each model's SLO and rate, and its router holds each gpu-let to its share"}, ""},
		{"the time to let requests finish at exit", []string{"--model-repository=/models", "--exit-timeout-secs=30"},
			with(map[string]string{"limits.shutdown_timeout": "30s"}), nil, ""},
		{"an exit timeout that is no number of seconds", []string{"--model-repository=/models", "--exit-timeout-secs=1m"}, nil, nil, "--exit-timeout-secs=1m: give whole seconds, 0 to 3600"},
		{"latency summaries", []string{"--model-repository=/models", "--metrics-config", "summary_latencies=true", "--metrics-config=summary_quantiles=0.5:0.05,0.99:0.001",
			"--metrics-config=counter_latencies=false", "--metrics-config=histogram_latencies=true"},
			with(map[string]string{"metrics.triton_summaries": "true", "metrics.triton_summary_quantiles": `["0.5:0.05","0.99:0.001"]`, "metrics.triton_latency_counters": "false"}),
			[]string{"tritonserver flag --metrics-config histogram_latencies=true ignored: Triton's histogram is the time to a decoupled model's first response, and gpuletd serves no decoupled models; gpuletd_request_duration_seconds is a histogram of every request's time"}, ""},
		{"a metrics setting gpuletd does not read", []string{"--model-repository=/models", "--metrics-config=summary_window=5"}, nil, nil, "gpuletd reads summary_latencies, summary_quantiles"},
		{"a metrics setting that is not a boolean", []string{"--model-repository=/models", "--metrics-config=summary_latencies=sometimes"}, nil, nil, "--metrics-config=summary_latencies=sometimes: give true or false"},
		{"no repository", []string{"--http-port=8000"}, nil, nil, "give --model-repository=DIR"},
		{"cloud storage", []string{"--model-repository=s3://bucket/models"}, nil, nil, "gpuletd reads a model repository on this machine, not from s3://"},
		{"three repositories", []string{"--model-repository=/a", "--model-store=/b", "--model-repository", "/c", "--model-namespacing=false"},
			with(map[string]string{"model_repository": "/a", "extra_model_repositories": `["/b","/c"]`}), nil, ""},
		{"namespacing", []string{"--model-repository=/models", "--model-namespacing=true"}, base,
			[]string{"tritonserver flag --model-namespacing ignored: gpuletd serves a model name from one repository: a name more than one holds is served from none and says why, as Triton does without namespacing"}, ""},
		{"clients' shared memory, the body limit", []string{"--model-repository=/models", "--allow-client-shm=true", "--http-max-input-size", "1048576"},
			with(map[string]string{"allow_client_shm": "true", "limits.max_request_body": "1048576"}), nil, ""},
		{"a body limit that is no size", []string{"--model-repository=/models", "--http-max-input-size=64MB"}, nil, nil, "--http-max-input-size=64MB: give a number of bytes"},
		{"the trace flags before --trace-config", []string{"--model-repository=/models", "--trace-file=/tmp/t.json", "--trace-level=TIMESTAMPS", "--trace-level", "TENSORS",
			"--trace-rate=10", "--trace-count=3", "--trace-log-frequency=5"},
			with(map[string]string{"trace.file": "t.json", "trace.level": `["TIMESTAMPS","TENSORS"]`, "trace.rate": "10", "trace.count": "3", "trace.log_frequency": "5"}),
			[]string{"tritonserver flag --trace-file /tmp/t.json: the traces go to t.json under gpuletd's state_dir, in traces/"}, ""},
		{"Triton's own tuning, newer flags", []string{"--model-repository=/models", "--grpc-infer-thread-count=4", "--sagemaker-port=8080"}, base,
			[]string{"tritonserver flag --grpc-infer-thread-count ignored: it tunes Triton's own machinery, which gpuletd does not have",
				"tritonserver flag --sagemaker-port ignored: it tunes Triton's own machinery, which gpuletd does not have"}, ""},
		{"the default max batch size", []string{"--model-repository=/models", "--backend-config=onnxruntime,default-max-batch-size=16", "--backend-config", "onnxruntime,enable-global-threadpool=1"},
			with(map[string]string{"default_max_batch_size": "16"}), []string{"tritonserver flag --backend-config onnxruntime,enable-global-threadpool=1 ignored: " +
				"it tunes a Triton backend, which gpuletd does not have (gpuletd runs ONNX Runtime itself: its onnxruntime settings)"}, ""},
		{"the default max batch size of every backend", []string{"--model-repository=/models", "--backend-config=default-max-batch-size=8"},
			with(map[string]string{"default_max_batch_size": "8"}), nil, ""},
		{"a default max batch size of 0", []string{"--model-repository=/models", "--backend-config=default-max-batch-size=0"}, nil, nil, "keep a model from batching with max_batch_size: 0"},
		{"a backend setting without a value", []string{"--model-repository=/models", "--backend-config=onnxruntime"}, nil, nil, "give [backend,]setting=value"},
		{"a custom configuration name", []string{"--model-repository=/models", "--model-config-name", "h100"},
			with(map[string]string{"model_config_name": "h100"}), nil, ""},
		{"a custom configuration name twice", []string{"--model-repository=/models", "--model-config-name=h100", "--model-config-name=a100"}, nil, nil,
			"--model-config-name is given 2 times: give it once"},
		{"a second repository in cloud storage", []string{"--model-repository=/models", "--model-repository=gs://b/m"}, nil, nil, "not from gs://"},
		{"an unknown flag", []string{"--model-repository=/models", "--bogus=1"}, nil, nil, "--bogus: not a tritonserver flag gpuletd reads"},
		{"not a flag", []string{"/models"}, nil, nil, `"/models" is not one of tritonserver's flags`},
		{"REST off", []string{"--model-repository=/models", "--allow-http=false"}, nil, nil, "gpuletd always serves REST"},
		{"a mode", []string{"--model-repository=/models", "--model-control-mode=lazy"}, nil, nil, "give none, poll or explicit"},
		{"load-model without explicit", []string{"--model-repository=/models", "--load-model=a"}, nil, nil, "--load-model is for --model-control-mode=explicit"},
		{"a port", []string{"--model-repository=/models", "--http-port=80000"}, nil, nil, "--http-port=80000: give a port number"},
		{"a port twice", []string{"--model-repository=/models", "--http-port=1", "--http-port=2"}, nil, nil, "--http-port is given 2 times: give it once"},
		{"a boolean", []string{"--model-repository=/models", "--strict-readiness=maybe"}, nil, nil, "--strict-readiness=maybe: give true or false"},
		{"redis", []string{"--model-repository=/models", "--cache-config=redis,host=r"}, nil, nil, "give local,size=BYTES"},
		{"SSL without a certificate", []string{"--model-repository=/models", "--grpc-use-ssl=true"}, nil, nil, "give --grpc-server-cert and --grpc-server-key"},
		{"a trace setting", []string{"--model-repository=/models", "--trace-config=opentelemetry,bogus=1"}, nil, nil, "--trace-config=opentelemetry,bogus=1: gpuletd reads"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseTritonArgs(tc.args)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			fields := map[string]string{}
			for _, o := range got.overrides {
				fields[o.path] = o.value
				require.NotEmpty(t, o.flag)
			}
			require.Equal(t, tc.fields, fields)
			require.Equal(t, tc.notes, got.notes)
		})
	}
}

// gpuletd's own flags stay gpuletd's around tritonserver's: --config read
// before or among them.
// TestOlderTraceFlagsAreNamed: a setting the trace flags from before
// --trace-config gave is said to come from them (gpuletd tritonserver
// --print-config), one --trace-config gave from it.
func TestOlderTraceFlagsAreNamed(t *testing.T) {
	got, err := parseTritonArgs([]string{"--model-repository=/models", "--trace-level=TIMESTAMPS", "--trace-config=rate=5"})
	require.NoError(t, err)
	flags := map[string]string{}
	for _, o := range got.overrides {
		flags[o.path] = o.flag
	}
	require.Equal(t, "--trace-level", flags["trace.level"])
	require.Equal(t, "--trace-config", flags["trace.rate"])
}

func TestTritonServerTakesGpuletdFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--config", "/nonexistent/gpuletd.yaml", "tritonserver", "--model-repository=/models"},
		{"tritonserver", "--model-repository=/models", "--config=/nonexistent/gpuletd.yaml"},
	} {
		code, _, stderr := runCLI(t, args...)
		require.NotEqual(t, 0, code)
		require.Contains(t, stderr, "read config file: open /nonexistent/gpuletd.yaml", args)
	}
	code, _, stderr := runCLI(t, "tritonserver", "--model-repository=/models", "--config")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "tritonserver: --config needs a value")
}

// --print-config prints the configuration tritonserver's flags make, each
// field with the flag that set it, and the flags ignored, serving nothing.
func TestTritonServerPrintsItsConfiguration(t *testing.T) {
	code, out, stderr := runCLI(t, "tritonserver", "--print-config", "--model-repository=/models", "--http-port=9000",
		"--model-control-mode=explicit", "--load-model=a", "--backend-config=onnxruntime,x=1")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "listen: 0.0.0.0:9000 # flag --http-port\n")
	require.Contains(t, out, "model_repository: /models # flag --model-repository\n")
	require.Contains(t, out, "startup_models: [a] # flag --load-model\n")
	require.Contains(t, out, "strict_readiness: true # flag --strict-readiness\n")
	require.Contains(t, stderr, "warning: tritonserver flag --backend-config onnxruntime,x=1 ignored")
}
