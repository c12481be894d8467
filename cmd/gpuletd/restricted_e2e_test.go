package main

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"

	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
)

// TestRestrictedAPIs restricts groups of the inference API as Triton's
// --http-restricted-api does: a request without the group's header is
// refused 403 over REST and PERMISSION_DENIED over gRPC, one with it is
// served, the groups not named (health here) and gpuletd's own API need
// nothing, and gpuletd's commands, reading the same configuration, send
// the headers themselves: infer over REST and gRPC, models, trace, load;
// or take them as perf_analyzer's -H.
func TestRestrictedAPIs(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	restricted := `["inference,metadata,model-config:x-infer-key=k1", "model-repository,trace,logging,statistics,shared-memory:admin-key=k2"]`
	grpcAddr := freeAddr(t)
	_, base := cpuZooDaemon(t, "GPULETD_GRPC_LISTEN="+grpcAddr, "GPULETD_AUTH_RESTRICTED_APIS="+restricted)

	body := mlpJSON(1)
	for _, c := range []struct {
		method, path string
		body         []byte
		header       map[string]string
		want         int
	}{
		{"POST", "/v2/models/mlp/infer", body, nil, http.StatusForbidden},
		{"POST", "/v2/models/mlp/infer", body, map[string]string{"x-infer-key": "wrong"}, http.StatusForbidden},
		{"POST", "/v2/models/mlp/infer", body, map[string]string{"admin-key": "k2"}, http.StatusForbidden},
		{"POST", "/v2/models/mlp/infer", body, map[string]string{"X-Infer-Key": "k1"}, http.StatusOK},
		{"GET", "/v2/models/mlp", nil, nil, http.StatusForbidden},
		{"GET", "/v2/models/mlp/config", nil, map[string]string{"x-infer-key": "k1"}, http.StatusOK},
		{"POST", "/v2/repository/index", []byte(`{}`), map[string]string{"x-infer-key": "k1"}, http.StatusForbidden},
		{"POST", "/v2/repository/index", []byte(`{}`), map[string]string{"admin-key": "k2"}, http.StatusOK},
		{"GET", "/v2/models/stats", nil, nil, http.StatusForbidden},
		{"GET", "/v2/health/ready", nil, nil, http.StatusOK},
		{"GET", "/v2/models/mlp/ready", nil, nil, http.StatusOK},
		{"GET", "/api/v1/status", nil, nil, http.StatusOK},
		{"GET", "/metrics", nil, nil, http.StatusOK},
	} {
		r := do(t, c.method, base+c.path, c.body, c.header)
		require.Equal(t, c.want, r.code, "%s %s with %v: %s", c.method, c.path, c.header, r.body)
		if c.want == http.StatusForbidden {
			require.Contains(t, string(r.body), "is restricted, expecting header '")
		}
	}

	c, ctx := inferenceClient(t, grpcAddr, time.Minute)
	_, err := c.ModelMetadata(ctx, &pb.ModelMetadataRequest{Name: "mlp"})
	require.Equal(t, codes.PermissionDenied, grpcstatus.Code(err), "%v", err)
	_, err = c.ModelMetadata(metadata.AppendToOutgoingContext(ctx, "x-infer-key", "k1"), &pb.ModelMetadataRequest{Name: "mlp"})
	require.NoError(t, err)
	_, err = c.ServerLive(ctx, &pb.ServerLiveRequest{})
	require.NoError(t, err, "health is not restricted here")

	// The commands read the restriction from the same configuration.
	t.Setenv("GPULETD_AUTH_RESTRICTED_APIS", restricted)
	for _, args := range [][]string{
		{"infer", "mlp"}, {"infer", "mlp", "--grpc", grpcAddr}, {"models", "list"}, {"trace"},
		{"load", "--model", "mlp", "--rate", "20", "--duration", "1s", "--min-attainment", "0.01"},
		{"load", "--model", "mlp", "--rate", "20", "--duration", "1s", "--min-attainment", "0.01", "--grpc", grpcAddr},
	} {
		code, out, stderr := runCLI(t, append(args, "--url", base)...)
		require.Equal(t, 0, code, "%v:\n%s%s", args, out, stderr)
	}
	t.Setenv("GPULETD_AUTH_RESTRICTED_APIS", "[]")
	code, _, stderr := runCLI(t, "infer", "mlp", "--url", base)
	require.NotEqual(t, 0, code)
	require.Contains(t, stderr, "is restricted, expecting header 'x-infer-key'")
	// A daemon elsewhere, its configuration not this machine's: the key
	// given as perf_analyzer's -H gives it.
	for _, args := range [][]string{
		{"infer", "mlp", "-H", "x-infer-key:k1"}, {"infer", "mlp", "--grpc", grpcAddr, "--header", "X-Infer-Key: k1"},
		{"load", "--model", "mlp", "--rate", "20", "--duration", "1s", "--min-attainment", "0.01", "--grpc", grpcAddr, "-H", "x-infer-key:k1"},
	} {
		code, out, stderr := runCLI(t, append(args, "--url", base)...)
		require.Equal(t, 0, code, "%v:\n%s%s", args, out, stderr)
	}
	code, _, stderr = runCLI(t, "infer", "mlp", "--url", base, "-H", "x-infer-key=k1")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, `--header "x-infer-key=k1": give NAME:VALUE`)
}
