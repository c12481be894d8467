package daemon

import (
	"context"
	"crypto/subtle"
	"fmt"
	"net/http"
	"strings"

	"github.com/gorilla/mux"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/gpulet/gpuletd/daemon/config"
	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
)

// Groups of the inference APIs restricted to requests that carry a header
// (auth.restricted_apis, Triton's --http-restricted-api and
// --grpc-restricted-protocol): on every listener, loopback too, before the
// admin token's check. gpuletd's own API (/api/v1), the metrics, the admin
// page and gRPC's health service are in no group.

// httpAPIGroups is the group of each route of the inference API, by its
// template (routes); TestEveryInferenceRouteHasAGroup keeps it whole.
var httpAPIGroups = func() map[string]string {
	g := map[string]string{
		"/v2/health/live":   "health",
		"/v2/health/ready":  "health",
		"/v2":               "metadata",
		"/v2/models/stats":  "statistics",
		"/v2/trace/setting": "trace",
		"/v2/logging":       "logging",

		"/v2/repository/index":                 "model-repository",
		"/v2/repository/models/{model}/load":   "model-repository",
		"/v2/repository/models/{model}/unload": "model-repository",

		"/v2/repository/{repository}/index":                 "model-repository",
		"/v2/repository/{repository}/models/{model}/load":   "model-repository",
		"/v2/repository/{repository}/models/{model}/unload": "model-repository",
	}
	for _, model := range []string{"/v2/models/{model}", "/v2/models/{model}/versions/{version}"} {
		g[model] = "metadata"
		g[model+"/ready"] = "health"
		g[model+"/infer"] = "inference"
		g[model+"/generate"] = "inference"
		g[model+"/generate_stream"] = "inference"
		g[model+"/config"] = "model-config"
		g[model+"/stats"] = "statistics"
	}
	g["/v2/models/{model}/trace/setting"] = "trace"
	for _, kind := range []string{"/v2/systemsharedmemory", "/v2/cudasharedmemory"} {
		for _, p := range []string{"/status", "/region/{name}/status", "/region/{name}/register", "/unregister", "/region/{name}/unregister"} {
			g[kind+p] = "shared-memory"
		}
	}
	return g
}()

// grpcAPIGroups is the group of each call of the inference service;
// TestEveryInferenceRouteHasAGroup keeps it whole.
var grpcAPIGroups = map[string]string{
	pb.GRPCInferenceService_ServerLive_FullMethodName:                   "health",
	pb.GRPCInferenceService_ServerReady_FullMethodName:                  "health",
	pb.GRPCInferenceService_ModelReady_FullMethodName:                   "health",
	pb.GRPCInferenceService_ServerMetadata_FullMethodName:               "metadata",
	pb.GRPCInferenceService_ModelMetadata_FullMethodName:                "metadata",
	pb.GRPCInferenceService_ModelInfer_FullMethodName:                   "inference",
	pb.GRPCInferenceService_ModelStreamInfer_FullMethodName:             "inference",
	pb.GRPCInferenceService_ModelConfig_FullMethodName:                  "model-config",
	pb.GRPCInferenceService_ModelStatistics_FullMethodName:              "statistics",
	pb.GRPCInferenceService_RepositoryIndex_FullMethodName:              "model-repository",
	pb.GRPCInferenceService_RepositoryModelLoad_FullMethodName:          "model-repository",
	pb.GRPCInferenceService_RepositoryModelUnload_FullMethodName:        "model-repository",
	pb.GRPCInferenceService_SystemSharedMemoryStatus_FullMethodName:     "shared-memory",
	pb.GRPCInferenceService_SystemSharedMemoryRegister_FullMethodName:   "shared-memory",
	pb.GRPCInferenceService_SystemSharedMemoryUnregister_FullMethodName: "shared-memory",
	pb.GRPCInferenceService_CudaSharedMemoryStatus_FullMethodName:       "shared-memory",
	pb.GRPCInferenceService_CudaSharedMemoryRegister_FullMethodName:     "shared-memory",
	pb.GRPCInferenceService_CudaSharedMemoryUnregister_FullMethodName:   "shared-memory",
	pb.GRPCInferenceService_TraceSetting_FullMethodName:                 "trace",
	pb.GRPCInferenceService_LogSettings_FullMethodName:                  "logging",
}

// restrictedAPIs is a configuration's auth.restricted_apis, read.
type restrictedAPIs struct {
	cfg *config.Config
	by  map[string]config.Restriction // by group
}

// restrictions are the groups the configuration in force restricts, and
// what each asks of a request.
func (n *node) restrictions() map[string]config.Restriction {
	cfg := n.conf()
	r := n.restricted.Load()
	if r == nil || r.cfg != cfg {
		r = &restrictedAPIs{cfg: cfg, by: cfg.Auth.Restrictions()}
		n.restricted.Store(r)
	}
	return r.by
}

// allowedBy says whether the values a request carries in the restriction's
// header hold its value (once, as Triton reads the header's value).
func allowedBy(rs config.Restriction, values []string) bool {
	return len(values) == 1 && subtle.ConstantTimeCompare([]byte(values[0]), []byte(rs.Value)) == 1
}

// restrictedMessage is the refusal of a request to a restricted group.
func restrictedMessage(api string, rs config.Restriction) string {
	return fmt.Sprintf("this API (%s) is restricted, expecting header '%s' with the value auth.restricted_apis gives it", api, rs.Header)
}

// restrictRoutes has every route of the inference API refuse 403 a
// request to its group, when the group is restricted, that does not carry
// the header's value. Each route's handler is wrapped once, here: a mux
// middleware would build its wrapper again for every request.
func (n *node) restrictRoutes(r *mux.Router) {
	_ = r.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tpl, err := route.GetPathTemplate()
		if api, ok := httpAPIGroups[tpl]; ok && err == nil && route.GetHandler() != nil {
			route.Handler(n.restrictTo(api, route.GetHandler()))
		}
		return nil
	})
}

// restrictTo refuses 403 a request to the group api, when it is
// restricted, that does not carry the header's value.
func (n *node) restrictTo(api string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if by := n.restrictions(); len(by) > 0 {
			if rs, ok := by[api]; ok && !allowedBy(rs, r.Header.Values(rs.Header)) {
				writeError(w, http.StatusForbidden, restrictedMessage(api, rs))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// grpcRestriction is the refusal of a call to a restricted group that
// does not carry the metadata's value; nil when it may go on, keyed when
// it carries a group's non-empty value (keyedBy).
func (n *node) grpcRestriction(ctx context.Context, method string) (keyed bool, err error) {
	by := n.restrictions()
	if len(by) == 0 {
		return false, nil
	}
	api := grpcAPIGroups[method]
	rs, ok := by[api]
	if !ok {
		return false, nil
	}
	if allowedBy(rs, metadata.ValueFromIncomingContext(ctx, strings.ToLower(rs.Header))) {
		return rs.Value != "", nil
	}
	return false, grpcstatus.Error(codes.PermissionDenied, restrictedMessage(api, rs))
}

// keyedBy says whether r carries the non-empty value of the restriction of
// its route's group: such a key authorizes the group's admin calls in the
// admin token's place (adminOnly), as it is all Triton asks of them.
func (n *node) keyedBy(r *http.Request) bool {
	by := n.restrictions()
	if len(by) == 0 {
		return false
	}
	route := mux.CurrentRoute(r)
	if route == nil {
		return false
	}
	tpl, _ := route.GetPathTemplate()
	rs, ok := by[httpAPIGroups[tpl]]
	return ok && rs.Value != "" && allowedBy(rs, r.Header.Values(rs.Header))
}

// grpcStreamRestricted is grpcRestriction for streams.
func (n *node) grpcStreamRestricted(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, next grpc.StreamHandler) error {
	if _, err := n.grpcRestriction(ss.Context(), info.FullMethod); err != nil {
		return err
	}
	return next(srv, ss)
}
