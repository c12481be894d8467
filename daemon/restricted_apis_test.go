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
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/gpulet/gpuletd/daemon/config"
	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
)

// Every route of the inference API (/v2) and every call of the inference
// service is in a group, found by walking the router and the service so
// that a new one cannot be left out; each group has routes and calls.
func TestEveryInferenceRouteHasAGroup(t *testing.T) {
	n := exposedNode(t)
	restGroups, grpcGroups := map[string]bool{}, map[string]bool{}
	routes := map[string]bool{}
	require.NoError(t, n.routes(nil).Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tpl, err := route.GetPathTemplate()
		require.NoError(t, err)
		if !strings.HasPrefix(tpl, "/v2") {
			return nil
		}
		routes[tpl] = true
		api, ok := httpAPIGroups[tpl]
		require.True(t, ok, "%s is in no group", tpl)
		restGroups[api] = true
		return nil
	}))
	for tpl := range httpAPIGroups {
		require.True(t, routes[tpl], "%s is no route", tpl)
	}
	desc := pb.GRPCInferenceService_ServiceDesc
	names := []string{}
	for _, m := range desc.Methods {
		names = append(names, m.MethodName)
	}
	for _, s := range desc.Streams {
		names = append(names, s.StreamName)
	}
	require.Len(t, grpcAPIGroups, len(names))
	for _, name := range names {
		api, ok := grpcAPIGroups["/"+desc.ServiceName+"/"+name]
		require.True(t, ok, "%s is in no group", name)
		grpcGroups[api] = true
	}
	for _, api := range config.RestrictableAPIs {
		require.True(t, restGroups[api], "no route in %s", api)
		require.True(t, grpcGroups[api], "no call in %s", api)
	}
	require.Len(t, restGroups, len(config.RestrictableAPIs))
	require.Len(t, grpcGroups, len(config.RestrictableAPIs))
}

// restrictedNode is a node on loopback whose inference and metadata need
// x-infer-key: k1 and whose repository calls need admin-key: k2.
func restrictedNode(t *testing.T) *node {
	t.Helper()
	n := exposedNode(t)
	cfg := *n.conf()
	cfg.Listen, cfg.GRPCListen = "127.0.0.1:8700", "127.0.0.1:8701"
	cfg.Auth.RestrictedAPIs = []string{"inference,metadata:X-Infer-Key=k1", "model-repository:admin-key=k2"}
	n.cfg.Store(&cfg)
	n.traces = newTestTracer(t, t.TempDir()) // the trace routes answer
	return n
}

// A request to a restricted group needs its header with the value, on
// loopback too, over every route of the group; the others need nothing;
// a reload that lifts the restriction lifts it at once.
func TestRestrictedRoutesNeedTheirHeader(t *testing.T) {
	n := restrictedNode(t)
	r := n.routes(nil)
	call := func(method, path string, header map[string]string) (int, string) {
		req := httptest.NewRequest(method, path, strings.NewReader(`{}`))
		for k, v := range header {
			req.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		return w.Code, w.Body.String()
	}
	restricted := 0
	require.NoError(t, r.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tpl, _ := route.GetPathTemplate()
		methods, err := route.GetMethods()
		if err != nil || !strings.HasPrefix(tpl, "/v2") {
			return nil
		}
		path := strings.NewReplacer("{model}", "nosuch", "{version}", "1", "{name}", "r", "{repository}", "team").Replace(tpl)
		for _, m := range methods {
			header, want := "", ""
			switch httpAPIGroups[tpl] {
			case "inference", "metadata":
				header, want = "X-Infer-Key", "k1"
			case "model-repository":
				header, want = "admin-key", "k2"
			default:
				code, _ := call(m, path, nil)
				require.NotEqual(t, http.StatusForbidden, code, "%s %s is not restricted", m, path)
				continue
			}
			restricted++
			for _, got := range []map[string]string{nil, {header: "wrong"}, {"Authorization": "Bearer " + want}} {
				code, body := call(m, path, got)
				require.Equal(t, http.StatusForbidden, code, "%s %s with %v", m, path, got)
				require.Contains(t, body, "is restricted, expecting header '"+header+"'")
				require.NotContains(t, body, want, "the value is not said")
			}
			code, _ := call(m, path, map[string]string{strings.ToLower(header): want})
			require.NotEqual(t, http.StatusForbidden, code, "%s %s with its header", m, path)
		}
		return nil
	}))
	require.Equal(t, 15, restricted, "the routes of the three groups: metadata (3), inference (2, and 4 of the generate extension), the repository (3, and 3 that name one)")

	cfg := *n.conf()
	cfg.Auth.RestrictedAPIs = []string{}
	n.cfg.Store(&cfg)
	code, _ := call(http.MethodGet, "/v2", nil)
	require.Equal(t, http.StatusOK, code, "a reload that lifts the restriction")
}

// Off loopback a restricted admin call needs its header, whose value then
// stands for the admin token, over REST and gRPC; a restriction whose value
// is empty does not.
func TestARestrictedGroupsKeyAuthorizesItsAdminCalls(t *testing.T) {
	n := restrictedNode(t)
	cfg := *n.conf()
	cfg.Listen = "0.0.0.0:8700"
	n.cfg.Store(&cfg)
	call := func(header map[string]string) int {
		req := httptest.NewRequest(http.MethodPost, "/v2/repository/models/nosuch/unload", strings.NewReader(`{"parameters": {"bogus": 1}}`))
		for k, v := range header {
			req.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		n.routes(nil).ServeHTTP(w, req)
		return w.Code
	}
	require.Equal(t, http.StatusForbidden, call(map[string]string{"Authorization": "Bearer secret"}))
	require.Equal(t, http.StatusBadRequest, call(map[string]string{"admin-key": "k2"}), "the key stands for the token: the handler refuses the parameter")
	require.Equal(t, http.StatusBadRequest, call(map[string]string{"admin-key": "k2", "Authorization": "Bearer secret"}))
	require.Equal(t, http.StatusUnauthorized, func() int {
		req := httptest.NewRequest(http.MethodPost, "/api/v1/reorganize", nil)
		req.Header.Set("admin-key", "k2")
		w := httptest.NewRecorder()
		n.routes(nil).ServeHTTP(w, req)
		return w.Code
	}(), "gpuletd's own admin calls are in no group: the token is asked")

	cfg.GRPCListen = "0.0.0.0:8701"
	n.cfg.Store(&cfg)
	grpcCall := func(md metadata.MD) error {
		ctx := metadata.NewIncomingContext(context.Background(), md)
		_, err := n.grpcGuard(ctx, nil, &grpc.UnaryServerInfo{FullMethod: pb.GRPCInferenceService_RepositoryModelUnload_FullMethodName},
			func(context.Context, any) (any, error) { return nil, nil })
		return err
	}
	require.Equal(t, codes.PermissionDenied, grpcstatus.Code(grpcCall(metadata.Pairs("authorization", "Bearer secret"))))
	require.NoError(t, grpcCall(metadata.Pairs("admin-key", "k2")))
	require.Equal(t, codes.PermissionDenied, grpcstatus.Code(grpcCall(metadata.Pairs("admin-key", "k3"))))

	empty := cfg // another configuration, as a reload stores
	empty.Auth.RestrictedAPIs = []string{"model-repository:admin-key="}
	n.cfg.Store(&empty)
	require.Equal(t, http.StatusUnauthorized, call(map[string]string{"admin-key": ""}), "an empty value is no key")
	require.Equal(t, codes.Unauthenticated, grpcstatus.Code(grpcCall(metadata.Pairs("admin-key", ""))))
}

// streamWith is a server stream whose context is ctx.
type streamWith struct {
	grpc.ServerStream
	ctx context.Context
}

func (s streamWith) Context() context.Context { return s.ctx }

// The gRPC calls of a restricted group need its metadata with the value,
// unary calls and the stream alike; the others need nothing.
func TestRestrictedGRPCCallsNeedTheirMetadata(t *testing.T) {
	n := restrictedNode(t)
	desc := pb.GRPCInferenceService_ServiceDesc
	call := func(method string, stream bool, md metadata.MD) error {
		ctx := context.Background()
		if md != nil {
			ctx = metadata.NewIncomingContext(ctx, md)
		}
		full := "/" + desc.ServiceName + "/" + method
		if stream {
			return n.grpcStreamRestricted(nil, streamWith{ctx: ctx}, &grpc.StreamServerInfo{FullMethod: full}, func(any, grpc.ServerStream) error { return nil })
		}
		_, err := n.grpcGuard(ctx, nil, &grpc.UnaryServerInfo{FullMethod: full}, func(context.Context, any) (any, error) { return nil, nil })
		return err
	}
	var methods []string
	streams := map[string]bool{}
	for _, m := range desc.Methods {
		methods = append(methods, m.MethodName)
	}
	for _, s := range desc.Streams {
		methods, streams[s.StreamName] = append(methods, s.StreamName), true
	}
	restricted := 0
	for _, m := range methods {
		key, want := "", ""
		switch grpcAPIGroups["/"+desc.ServiceName+"/"+m] {
		case "inference", "metadata":
			key, want = "x-infer-key", "k1"
		case "model-repository":
			key, want = "admin-key", "k2"
		default:
			require.NoError(t, call(m, streams[m], nil), m)
			continue
		}
		restricted++
		for _, md := range []metadata.MD{nil, metadata.Pairs(key, "wrong"), metadata.Pairs(key, want, key, want)} {
			err := call(m, streams[m], md)
			require.Equal(t, codes.PermissionDenied, grpcstatus.Code(err), "%s with %v", m, md)
			require.Contains(t, grpcstatus.Convert(err).Message(), "expecting header '")
		}
		require.NoError(t, call(m, streams[m], metadata.Pairs(key, want)), m)
	}
	require.Equal(t, 7, restricted, "ServerMetadata, ModelMetadata, ModelInfer, ModelStreamInfer and the three repository calls")
	require.True(t, slices.Contains(methods, "ModelStreamInfer"))
}
