package config

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/daemon/connlimit"
	"github.com/gpulet/gpuletd/systemd"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

func TestShippedFileEqualsDefaults(t *testing.T) {
	var fromFile Config
	dec := yaml.NewDecoder(bytes.NewReader(systemd.DefaultConfig))
	dec.KnownFields(true)
	require.NoError(t, dec.Decode(&fromFile))
	require.Equal(t, Default(), fromFile, "systemd/gpuletd.yaml and config.Default() must hold the same values")
}

// TestShippedFileDocumentsEveryField checks that each field appears in the
// shipped file under a comment that states its default.
func TestShippedFileDocumentsEveryField(t *testing.T) {
	var comments []string
	documented := map[string]bool{}
	var section string
	sc := bufio.NewScanner(bytes.NewReader(systemd.DefaultConfig))
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "#"):
			comments = append(comments, trimmed)
			continue
		case trimmed == "":
			comments = nil
			continue
		}
		key, _, _ := strings.Cut(trimmed, ":")
		if !strings.HasPrefix(line, " ") {
			section = key
			if strings.HasSuffix(trimmed, ":") {
				comments = nil
				continue
			}
			key, section = section, ""
		}
		path := key
		if section != "" {
			path = section + "." + key
		}
		documented[path] = strings.Contains(strings.Join(comments, " "), "Default")
		comments = nil
	}
	for _, f := range fieldPaths() {
		ok, present := documented[f.path]
		require.True(t, present, "field %s is missing from systemd/gpuletd.yaml", f.path)
		require.True(t, ok, "field %s needs a comment stating its default", f.path)
	}
}

func TestLoadWithoutFileGivesDefaults(t *testing.T) {
	l, err := Load("", nil)
	require.NoError(t, err)
	require.Equal(t, Default(), l.Config)
	require.Equal(t, Source{Kind: FromDefault}, l.Sources["scheduler.policy"])
}

func TestEnvOverridesNeedNoFile(t *testing.T) {
	l, err := Load("", []string{
		"GPULETD_LISTEN=127.0.0.1:9000",
		"GPULETD_DEVICES=cpu",
		"GPULETD_PARTITIONING_SIZES=50,100",
		"GPULETD_SCHEDULER_REORGANIZE_PERIOD=5s",
		"GPULETD_LIMITS_MAX_REQUEST_BODY=1MiB",
		"GPULETD_AUTH_ADMIN_TOKEN=s3cret: yes",
		"GPULETD_NO_SUCH_THING=1",
		"GPULETD_EXEC_CPU_CORES=0",
		"PATH=/usr/bin",
	})
	require.NoError(t, err)
	c := l.Config
	require.Equal(t, "127.0.0.1:9000", c.Listen)
	require.Equal(t, Devices{Mode: DevicesCPU}, c.Devices)
	require.Equal(t, []int{50, 100}, c.Partitioning.Sizes)
	require.Equal(t, 5*time.Second, c.Scheduler.ReorganizePeriod.D())
	require.Equal(t, ByteSize(1<<20), c.Limits.MaxRequestBody)
	require.Equal(t, "s3cret: yes", c.Auth.AdminToken)
	require.Equal(t, Source{Kind: FromEnv, Detail: "GPULETD_LISTEN"}, l.Sources["listen"])
	require.Len(t, l.Warnings, 1)
	require.Contains(t, l.Warnings[0], "GPULETD_NO_SUCH_THING")
	require.NotContains(t, l.Warnings[0], "did you mean")

	l, err = Load("", []string{"GPULETD_SCHEDULER_POLICI=eager"})
	require.NoError(t, err)
	require.Equal(t, []string{"environment variable GPULETD_SCHEDULER_POLICI names no configuration field; ignored (did you mean GPULETD_SCHEDULER_POLICY?)"}, l.Warnings)
}

func TestEnvDeviceList(t *testing.T) {
	l, err := Load("", []string{"GPULETD_DEVICES=[{kind: cpu}, {kind: emulated, profiles: igniter-v100, count: 2}]"})
	require.NoError(t, err)
	require.Equal(t, Devices{Mode: DevicesList, List: []DeviceEntry{
		{Kind: KindCPU},
		{Kind: KindEmulated, Profiles: "igniter-v100", Count: 2},
	}}, l.Config.Devices)
}

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "gpuletd.yaml")
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	return p
}

func TestFileThenEnvPrecedence(t *testing.T) {
	p := writeFile(t, "listen: 127.0.0.1:8800\nscheduler:\n  policy: eager\n")
	l, err := Load(p, []string{"GPULETD_SCHEDULER_POLICY=flex"})
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:8800", l.Config.Listen)
	require.Equal(t, "flex", l.Config.Scheduler.Policy)
	require.Equal(t, "deferred", Default().Scheduler.Policy)
	require.Equal(t, Source{Kind: FromFile, Detail: p}, l.Sources["listen"])
	require.Equal(t, Source{Kind: FromEnv, Detail: "GPULETD_SCHEDULER_POLICY"}, l.Sources["scheduler.policy"])
	require.Equal(t, Source{Kind: FromDefault}, l.Sources["scheduler.algorithm"])
	// A section given in the file keeps the defaults of the fields it omits.
	require.Equal(t, "gpulet-int", l.Config.Scheduler.Algorithm)
}

func TestBadConfigsSayWhatToFix(t *testing.T) {
	tests := []struct {
		name  string
		file  string
		env   []string
		wants []string
	}{
		{"unknown top field", "listne: 1.2.3.4:1\n", nil, []string{`line 1: unknown field "listne" at the top level (did you mean listen?)`}},
		{"unknown section field", "scheduler:\n  polcy: eager\n", nil, []string{`line 2: unknown field "polcy" in scheduler (did you mean scheduler.policy?)`}},
		{"unknown device field", "devices:\n  - kind: emulated\n    profile: x\n", nil, []string{`line 3: unknown field "profile" in a devices entry (did you mean profiles?)`}},
		{"unknown field like no other", "scheduler:\n  speed: 3\n", nil, []string{`line 2: unknown field "speed" in scheduler`}},
		{"bad device value", "devices:\n  - kind: emulated\n    profiles: igniter-v100\n    count: many\n", nil, []string{`line 4: devices[0].count: "many" is not a whole number`}},
		{"a number that is not", "limits:\n  max_connections: lots\n", nil, []string{`line 2: limits.max_connections: "lots" is not a whole number`}},
		{"a list for a word", "listen: [a, b]\n", nil, []string{`line 1: listen: want a string, not a list`}},
		{"a flag that is not", "strict_readiness: sure\n", nil, []string{`line 1: strict_readiness: "sure" is not true or false`}},
		{"not yaml", "listen: [\n", nil, []string{"config"}},
		{"bad policy", "scheduler:\n  policy: fastest\n", nil, []string{"scheduler.policy", `"fastest"`, "deferred, eager, flex or timeout"}},
		{"bad timeout", "scheduler:\n  policy: timeout:-1s\n", nil, []string{"scheduler.policy", "positive duration"}},
		{"bad backend", "partitioning:\n  backend: slices\n", nil, []string{"partitioning.backend", `"slices"`, "mps, mig, none"}},
		{"bad size", "partitioning:\n  sizes: [50, 150]\n", nil, []string{"partitioning.sizes[1]", `"150"`, "1 to 100"}},
		{"duplicate size", "partitioning:\n  sizes: [50, 50]\n", nil, []string{"partitioning.sizes[1]", "each size once"}},
		{"bad listen", "listen: nowhere\n", nil, []string{"listen", `"nowhere"`, "host:port"}},
		{"a variable that is no number", "", []string{"GPULETD_LIMITS_MAX_CONNECTIONS=lots"}, []string{`GPULETD_LIMITS_MAX_CONNECTIONS="lots": limits.max_connections: "lots" is not a whole number`}},
		{"a variable's list entry", "", []string{"GPULETD_PARTITIONING_SIZES=20,x"}, []string{`GPULETD_PARTITIONING_SIZES="20,x": partitioning.sizes[1]: "x" is not a whole number`}},
		{"a variable's duration", "", []string{"GPULETD_SCHEDULER_REORGANIZE_PERIOD=20"}, []string{`GPULETD_SCHEDULER_REORGANIZE_PERIOD="20": scheduler.reorganize_period: "20" is not a duration`}},
		{"bad metrics listener", "", []string{"GPULETD_METRICS_LISTEN=:http"}, []string{"metrics.listen", `":http"`, "port from 0 to 65535"}},
		{"gRPC on the HTTP listener", "", []string{"GPULETD_GRPC_LISTEN=:8700"}, []string{"grpc_listen", "listen's address", "a port of its own"}},
		{"metrics on the gRPC listener", "grpc_listen: 0.0.0.0:8701\nmetrics:\n  listen: 0.0.0.0:8701\n", nil, []string{"metrics.listen", "grpc_listen's address", "a port of their own"}},
		{"bad devices word", "devices: tpu\n", nil, []string{"devices", `"tpu"`, "auto, nvidia, cpu"}},
		{"devices as a mapping", "devices:\n  kind: cpu\n", nil, []string{"line 2: devices: want auto, nvidia, cpu or a list of devices"}},
		{"emulated without set", "devices:\n  - kind: emulated\n    count: 2\n", nil, []string{"devices[0].profiles", "igniter-v100"}},
		{"emulated with an unknown set", "devices:\n  - kind: emulated\n    profiles: nosuchset\n    count: 2\n", nil, []string{"devices[0].profiles", `"nosuchset"`, "use one of", "igniter-v100"}},
		{"emulated time scale out of range", "devices:\n  - kind: emulated\n    profiles: igniter-v100\n    count: 1\n    time_scale: 5000\n", nil, []string{"devices[0].time_scale", "0.01 to 1000"}},
		{"time scale on the cpu", "devices:\n  - kind: cpu\n    time_scale: 2\n", nil, []string{"devices[0]", "time_scale belong to emulated devices only"}},
		{"bad duration", "scheduler:\n  reorganize_period: soon\n", nil, []string{`line 2: scheduler.reorganize_period: "soon" is not a duration`}},
		{"every mistake at once, refused values included", "scheduler:\n  reorganize_period: 20\nlimits:\n  max_connections: lots\n  max_request_body: huge\n  body_timeout: [1]\n", nil,
			[]string{`line 2: scheduler.reorganize_period: "20" is not a duration (use a number with a unit: 500ms, 20s, 1m); line 4: limits.max_connections: "lots" is not a whole number; line 5: limits.max_request_body: "huge" is not a size (use bytes or a unit: 512KiB, 64MiB, 1GiB); line 6: limits.body_timeout: want a duration such as 20s or 500ms`}},
		{"bad size unit", "limits:\n  max_request_body: 10 parsecs\n", nil, []string{`line 2: limits.max_request_body: "10 parsecs" is not a size`}},
		{"bad body timeout", "limits:\n  body_timeout: 10ms\n", nil, []string{"limits.body_timeout", "1s to 1h"}},
		{"bad idle timeout", "limits:\n  idle_timeout: 2h\n", nil, []string{"limits.idle_timeout", "1s to 1h"}},
		{"no connections", "limits:\n  max_connections: 0\n", nil, []string{"limits.max_connections", "1 to 1048576"}},
		{"budget under one body", "limits:\n  max_request_body: 64MiB\n  max_inflight_bytes: 32MiB\n", nil, []string{"limits.max_inflight_bytes", "at least 87382KiB, 4/3 of limits.max_request_body"}},
		{"budget that one body would overfill", "limits:\n  max_request_body: 64MiB\n  max_inflight_bytes: 80MiB\n", nil, []string{"limits.max_inflight_bytes", "at least 87382KiB, 4/3 of limits.max_request_body"}},
		{"budget one byte short of a body", "limits:\n  max_request_body: 3MiB\n  max_inflight_bytes: 4194303\n", nil, []string{"limits.max_inflight_bytes", "at least 4097KiB"}},
		{"bad ewma", "scheduler:\n  ewma_weight: 0\n", nil, []string{"scheduler.ewma_weight", "above 0"}},
		{"priority reserve too large", "scheduler:\n  priority_reserve: 0.95\n", nil, []string{"scheduler.priority_reserve", "0.95", "below 0.9"}},
		{"priority reserve negative", "scheduler:\n  priority_reserve: -0.1\n", nil, []string{"scheduler.priority_reserve", "-0.1"}},
		{"hang timeout too short", "scheduler:\n  hang_timeout: 100ms\n", nil, []string{"scheduler.hang_timeout", "100ms", "use 1s to 1h, or 0"}},
		{"unknown idle plan", "scheduler:\n  idle_plan: sleep\n", nil, []string{"scheduler.idle_plan", `"sleep"`, "spread, pack"}},
		{"response cache beyond memory", "response_cache:\n  size: 2000GiB\n", nil, []string{"response_cache.size", "0 (no cache) to 1024GiB"}},
		{"unknown trace mode", "trace:\n  mode: zipkin\n", nil, []string{"trace.mode", `"zipkin"`, "triton, opentelemetry"}},
		{"opentelemetry without a collector", "", []string{"GPULETD_TRACE_MODE=opentelemetry"}, []string{"trace.opentelemetry_url", "OTLP/HTTP traces endpoint"}},
		{"a collector that is no URL", "trace:\n  mode: opentelemetry\n  opentelemetry_url: localhost:4318\n", nil, []string{"trace.opentelemetry_url", `"localhost:4318"`}},
		{"a resource attribute without a value", "trace:\n  opentelemetry_resource: [team]\n", nil, []string{"trace.opentelemetry_resource[0]", "key=value"}},
		{"tls certificate without its key", "tls:\n  cert_file: /etc/gpuletd/cert.pem\n", nil, []string{"tls", "give both a certificate and its key"}},
		{"tls key without a certificate", "", []string{"GPULETD_TLS_KEY_FILE=/etc/gpuletd/key.pem"}, []string{"tls", "give both a certificate and its key"}},
		{"client CAs without TLS", "tls:\n  client_ca_file: /etc/gpuletd/ca.pem\n", nil, []string{"tls.client_ca_file", "give tls.cert_file and tls.key_file too"}},
		{"a client certificate without its key", "", []string{"GPULETD_TLS_CLIENT_CERT_FILE=/etc/gpuletd/client.pem"}, []string{"tls", "give both the commands' client certificate and its key"}},
		{"bad env", "", []string{"GPULETD_PARTITIONING_MAX_GPULETS_PER_GPU=lots"}, []string{"GPULETD_PARTITIONING_MAX_GPULETS_PER_GPU", "lots"}},
		{"env fails validation", "", []string{"GPULETD_LOG_LEVEL=loud"}, []string{"log.level", `"loud"`, "debug, info, warn, error"}},
		{"default slo too long", "", []string{"GPULETD_DEFAULT_SLO=2h"}, []string{"default_slo", "2h0m0s", "up to 1h"}},
		{"default slo negative", "default_slo: -5ms\n", nil, []string{"default_slo", "-5ms"}},
		{"history kept for minutes", "history_retention: 10m\n", nil, []string{"history_retention", "10m0s", "at least 1h"}},
		{"history retention negative", "", []string{"GPULETD_HISTORY_RETENTION=-1h"}, []string{"history_retention", "-1h0m0s"}},
		{"the model repository again", "model_repository: /srv/models\nextra_model_repositories: [/srv/more, /srv/models/]\n", nil,
			[]string{"extra_model_repositories[1]", "/srv/models/", "it is model_repository already"}},
		{"an extra repository twice", "", []string{"GPULETD_EXTRA_MODEL_REPOSITORIES=/srv/a,/srv/b,/srv/a"}, []string{"extra_model_repositories[2]", "it is extra_model_repositories[0] already"}},
		{"a quantile without its error", "metrics:\n  triton_summary_quantiles: ['0.99']\n", nil, []string{"metrics.triton_summary_quantiles", "give quantile:error"}},
		{"a quantile past 1", "", []string{"GPULETD_METRICS_TRITON_SUMMARY_QUANTILES=0.5:0.05,1.5:0.01"}, []string{"metrics.triton_summary_quantiles", "between 0 and 1"}},
		{"an error past the quantile's room", "metrics:\n  triton_summary_quantiles: ['0.99:0.05']\n", nil, []string{"metrics.triton_summary_quantiles", "allowed error"}},
		{"a quantile twice", "metrics:\n  triton_summary_quantiles: ['0.5:0.05', '0.50:0.01']\n", nil, []string{"metrics.triton_summary_quantiles", "given twice"}},
		{"summaries of no quantile", "metrics:\n  triton_summaries: true\n  triton_summary_quantiles: []\n", nil, []string{"metrics.triton_summary_quantiles", "give the quantiles"}},
		{"an empty extra repository", "extra_model_repositories: ['']\n", nil, []string{"extra_model_repositories[0]", "give a directory path"}},
		{"no default batch", "default_max_batch_size: 0\n", nil, []string{"default_max_batch_size", "use 1 to 4096", "max_batch_size: 0"}},
		{"a default batch past the limit", "", []string{"GPULETD_DEFAULT_MAX_BATCH_SIZE=5000"}, []string{"default_max_batch_size", "5000"}},
		{"a configuration name that is a path", "model_config_name: ../h100\n", nil, []string{"model_config_name", `"../h100"`, "no spaces or slashes"}},
		{"a configuration name with its extension", "", []string{"GPULETD_MODEL_CONFIG_NAME=h100.pbtxt"}, []string{"model_config_name", "no .pbtxt"}},
		{"a configuration name with a space", "model_config_name: 'h 100'\n", nil, []string{"model_config_name", "no spaces"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := ""
			if tc.file != "" {
				path = writeFile(t, tc.file)
			}
			_, err := Load(path, tc.env)
			require.Error(t, err)
			require.True(t, errors.Is(err, ErrInvalid), "every config error wraps ErrInvalid: %v", err)
			for _, w := range tc.wants {
				require.Contains(t, err.Error(), w)
			}
			if path != "" && tc.env == nil {
				require.Contains(t, err.Error(), path, "the error names the file")
			}
		})
	}
}

func TestMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.yaml"), nil)
	require.ErrorIs(t, err, ErrInvalid)
	require.Contains(t, err.Error(), "nope.yaml")
}

func TestEmptyFileKeepsDefaults(t *testing.T) {
	l, err := Load(writeFile(t, "# nothing\n"), nil)
	require.NoError(t, err)
	require.Equal(t, Default(), l.Config)
}

func TestPrintedYAMLRoundTrips(t *testing.T) {
	p := writeFile(t, "devices:\n  - kind: cpu\n  - kind: emulated\n    profiles: igniter-v100\n    count: 2\n")
	l, err := Load(p, []string{"GPULETD_LISTEN=127.0.0.1:9100"})
	require.NoError(t, err)
	out, err := l.YAML()
	require.NoError(t, err)
	s := string(out)
	require.Contains(t, s, "listen: 127.0.0.1:9100 # env GPULETD_LISTEN")
	require.Contains(t, s, "# file "+p)
	require.Contains(t, s, "policy: deferred # default")
	require.Contains(t, s, "sizes: [20, 40, 50, 60, 80, 100] # default")

	back, err := Load(writeFile(t, s), nil)
	require.NoError(t, err)
	require.Equal(t, l.Config, back.Config)
}

func TestPrintedYAMLRedactsToken(t *testing.T) {
	l, err := Load("", []string{"GPULETD_AUTH_ADMIN_TOKEN=hunter2"})
	require.NoError(t, err)
	out, err := l.YAML()
	require.NoError(t, err)
	require.NotContains(t, string(out), "hunter2")
	require.Contains(t, string(out), "admin_token: <redacted> # env GPULETD_AUTH_ADMIN_TOKEN")
}

func TestByteSize(t *testing.T) {
	tests := []struct {
		in   string
		want ByteSize
		ok   bool
	}{
		{"1024", 1024, true}, {"64MiB", 64 << 20, true}, {"1GB", 1e9, true}, {"512 KiB", 512 << 10, true},
		{"-1", 0, false}, {"lots", 0, false}, {"99999999999999GiB", 0, false},
	}
	for _, tc := range tests {
		got, err := ParseByteSize(tc.in)
		if !tc.ok {
			require.Error(t, err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
	require.Equal(t, "64MiB", ByteSize(64<<20).String())
	require.Equal(t, "1000", ByteSize(1000).String())
}

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8700": true, "localhost:1": true, "[::1]:8700": true,
		"0.0.0.0:8700": false, ":8700": false, "10.0.0.2:80": false,
	} {
		c := Config{Listen: addr}
		require.Equal(t, want, c.IsLoopback(), addr)
	}
}

func TestTheSuggestedBudgetHoldsOneBody(t *testing.T) {
	for _, body := range []ByteSize{1 << 10, 3 << 20, 64 << 20, 4 << 30} {
		m := minInflightBytes(body)
		require.GreaterOrEqual(t, connlimit.NewBudget(int64(m)).MaxBody(), int64(body), "body %s, budget %s", body, m)
		require.Less(t, connlimit.NewBudget(int64(m)-1<<10).MaxBody(), int64(body), "%s is the least whole KiB", m)
		c := Default()
		c.Limits.MaxRequestBody, c.Limits.MaxInflightBytes = body, m
		require.NoError(t, c.Validate())
	}
}

// TestSameAddress: a listener's address clashes with another listener's
// when they are the same, but port 0 (any free port) clashes with none.
func TestSameAddress(t *testing.T) {
	others := map[string]string{"listen": "127.0.0.1:8700", "grpc_listen": "127.0.0.1:0"}
	require.Equal(t, "listen", sameAddress("127.0.0.1:8700", others))
	require.Empty(t, sameAddress("127.0.0.1:0", others))
	require.Equal(t, "listen", sameAddress("0.0.0.0:8700", others), "every host takes loopback's port too")
	require.Equal(t, "listen", sameAddress(":8700", others))
	require.Empty(t, sameAddress("127.0.0.2:8700", others), "another host")
	require.Empty(t, sameAddress("127.0.0.1:8702", others))
	require.Empty(t, sameAddress("127.0.0.1:8702", map[string]string{"grpc_listen": ""}), "a listener that is off")
}
