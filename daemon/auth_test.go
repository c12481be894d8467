package daemon

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/gorilla/mux"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"

	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
)

// exposedNode is a node whose listeners are not loopback, with an admin
// token: calls that change the daemon need it there.
func exposedNode(t *testing.T) *node {
	t.Helper()
	n, _ := twoModelNode(t, nil)
	cfg := *n.conf()
	cfg.Listen = "0.0.0.0:8700"
	cfg.GRPCListen = "0.0.0.0:8701"
	cfg.Auth.AdminToken = "secret"
	n.cfg.Store(&cfg)
	n.log = zap.NewNop()
	n.metrics = newMetrics(n)
	return n
}

// readOnlyPOSTs are the REST calls that take a body but change nothing of
// the daemon's: inference, the repository index, a plan preview. Every
// other POST needs the admin token on a listener that is not loopback.
var readOnlyPOSTs = map[string]bool{
	"/v2/models/{model}/infer":                              true,
	"/v2/models/{model}/versions/{version}/infer":           true,
	"/v2/models/{model}/generate":                           true,
	"/v2/models/{model}/versions/{version}/generate":        true,
	"/v2/models/{model}/generate_stream":                    true,
	"/v2/models/{model}/versions/{version}/generate_stream": true,
	"/v2/repository/index":                                  true,
	"/v2/repository/{repository}/index":                     true, // refused whatever it carries
	"/api/v1/plan/preview":                                  true,
}

// guardedGETs are the reads that need the admin token off loopback: the
// backup hands out everything the daemon stores.
var guardedGETs = map[string]bool{"/api/v1/backup": true}

// guardedRoute says whether a route needs the admin token off loopback.
func guardedRoute(tpl string, methods []string) bool {
	return slices.Contains(methods, http.MethodPost) && !readOnlyPOSTs[tpl] || slices.Contains(methods, http.MethodDelete) || guardedGETs[tpl]
}

// mutatingGRPC are the gRPC calls that need the admin token off loopback:
// the REST ones' twins, and LogSettings and TraceSetting whole (a read
// comes through the same call).
var mutatingGRPC = map[string]bool{
	"RepositoryModelLoad": true, "RepositoryModelUnload": true,
	"SystemSharedMemoryRegister": true, "SystemSharedMemoryUnregister": true,
	"CudaSharedMemoryRegister": true, "CudaSharedMemoryUnregister": true,
	"LogSettings": true, "TraceSetting": true,
}

// Every REST route that changes the daemon refuses a request without the
// right token, found by walking the router so that a new route cannot be
// left unguarded unnoticed.
func TestMutatingRoutesNeedTheToken(t *testing.T) {
	n := exposedNode(t)
	r := n.routes(nil)
	guarded := 0
	require.NoError(t, r.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tpl, err := route.GetPathTemplate()
		require.NoError(t, err)
		methods, err := route.GetMethods()
		if err != nil || !guardedRoute(tpl, methods) {
			return nil
		}
		guarded++
		path := strings.NewReplacer("{model}", "a", "{version}", "1", "{name}", "r", "{repository}", "team").Replace(tpl)
		for _, auth := range []string{"", "Bearer wrong", "secret", "Bearer secret2"} {
			req := httptest.NewRequest(methods[0], path, strings.NewReader(`{}`))
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			w := httptest.NewRecorder()
			r.ServeHTTP(w, req)
			require.Equal(t, http.StatusUnauthorized, w.Code, "%s %s with %q", methods[0], path, auth)
			require.Equal(t, `Bearer realm="gpuletd"`, w.Header().Get("WWW-Authenticate"))
			require.Contains(t, w.Body.String(), "auth.admin_token")
		}
		return nil
	}))
	require.Equal(t, 18, guarded, "the routes that change the daemon: trace settings (2), logging, load, unload (and the two that name a repository, refused), system and CUDA shared memory (3 each), register, reorganize, a quarantine's lift; the load check (it may write the files it carries); and the backup")
}

// With the token, a mutating REST call reaches its handler; on a loopback
// listener it needs none.
func TestMutatingRouteWithTheToken(t *testing.T) {
	n := exposedNode(t)
	call := func(auth string) int {
		req := httptest.NewRequest(http.MethodPost, "/v2/repository/models/nosuch/unload", strings.NewReader(`{"parameters": {"bogus": 1}}`))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		w := httptest.NewRecorder()
		n.routes(nil).ServeHTTP(w, req)
		return w.Code
	}
	require.Equal(t, http.StatusUnauthorized, call(""))
	require.Equal(t, http.StatusBadRequest, call("Bearer secret"), "the handler refuses the parameter")
	cfg := *n.conf()
	cfg.Listen = "127.0.0.1:8700"
	n.cfg.Store(&cfg)
	require.Equal(t, http.StatusBadRequest, call(""), "loopback: no token asked")
}

// The gRPC calls that change the daemon are the REST ones' twins and are
// guarded alike; every other call of the service is not.
func TestMutatingGRPCCallsNeedTheToken(t *testing.T) {
	n := exposedNode(t)
	call := func(method, token string) error {
		ctx := context.Background()
		if token != "" {
			ctx = metadata.NewIncomingContext(ctx, metadata.Pairs("authorization", "Bearer "+token))
		}
		info := &grpc.UnaryServerInfo{FullMethod: "/" + pb.GRPCInferenceService_ServiceDesc.ServiceName + "/" + method}
		_, err := n.grpcGuard(ctx, nil, info, func(context.Context, any) (any, error) { return nil, nil })
		return err
	}
	for _, m := range pb.GRPCInferenceService_ServiceDesc.Methods {
		t.Run(m.MethodName, func(t *testing.T) {
			if !mutatingGRPC[m.MethodName] {
				require.NoError(t, call(m.MethodName, ""))
				return
			}
			for _, token := range []string{"", "wrong"} {
				err := call(m.MethodName, token)
				require.Equal(t, codes.Unauthenticated, grpcstatus.Code(err), "token %q", token)
			}
			require.NoError(t, call(m.MethodName, "secret"))
		})
	}
}

// Off loopback with no admin token configured, an admin call is refused
// with what to set, over REST and gRPC alike; a configured one that is not
// sent, sent wrong or sent without its Bearer scheme is refused as before.
func TestAdminCallsWithoutAConfiguredToken(t *testing.T) {
	n := exposedNode(t)
	rest := func(auth string) (int, string) {
		req := httptest.NewRequest(http.MethodPost, "/v2/repository/models/nosuch/unload", strings.NewReader(`{}`))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		w := httptest.NewRecorder()
		n.routes(nil).ServeHTTP(w, req)
		return w.Code, w.Body.String()
	}
	grpcCall := func(auth string) error {
		ctx := context.Background()
		if auth != "" {
			ctx = metadata.NewIncomingContext(ctx, metadata.Pairs("authorization", auth))
		}
		info := &grpc.UnaryServerInfo{FullMethod: pb.GRPCInferenceService_RepositoryModelUnload_FullMethodName}
		_, err := n.grpcGuard(ctx, nil, info, func(context.Context, any) (any, error) { return nil, nil })
		return err
	}
	for _, auth := range []string{"", "secret", "Bearer wrong"} {
		code, body := rest(auth)
		require.Equal(t, http.StatusUnauthorized, code, auth)
		require.Contains(t, body, "send Authorization: Bearer \\u003cauth.admin_token\\u003e", auth)
		require.NotContains(t, body, "none is set", auth)
		require.Equal(t, codes.Unauthenticated, grpcstatus.Code(grpcCall(auth)), "gRPC %q", auth)
	}
	require.NoError(t, grpcCall("Bearer secret"))

	cfg := *n.conf()
	cfg.Auth.AdminToken = ""
	n.cfg.Store(&cfg)
	for _, auth := range []string{"", "Bearer anything"} {
		code, body := rest(auth)
		require.Equal(t, http.StatusUnauthorized, code)
		require.Contains(t, body, "none is set: set auth.admin_token (GPULETD_AUTH_ADMIN_TOKEN)")
		err := grpcCall(auth)
		require.Equal(t, codes.Unauthenticated, grpcstatus.Code(err))
		require.Contains(t, grpcstatus.Convert(err).Message(), "none is set")
	}
}
