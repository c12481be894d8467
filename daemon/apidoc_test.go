package daemon

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/gorilla/mux"
	"github.com/stretchr/testify/require"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
)

// TestAPIDocListsEveryEndpoint keeps docs/API.md whole: every REST route
// the daemon serves has its "`METHOD /path`" row there, with "**token**"
// exactly where the route needs the admin token off loopback, and every gRPC
// method its row too, marked alike.
func TestAPIDocListsEveryEndpoint(t *testing.T) {
	raw, err := os.ReadFile("../docs/API.md")
	require.NoError(t, err)
	rows := map[string]string{} // "`GET /v2`" → the rest of its table row
	for _, line := range strings.Split(string(raw), "\n") {
		cells := strings.Split(line, " | ")
		if len(cells) >= 2 && strings.HasPrefix(cells[0], "| `") {
			rows[strings.TrimPrefix(cells[0], "| ")] = strings.Join(cells[1:], " | ")
		}
	}
	n := exposedNode(t)
	seen := 0
	require.NoError(t, n.routes(http.NotFoundHandler()).Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tpl, err := route.GetPathTemplate()
		require.NoError(t, err)
		methods, err := route.GetMethods()
		if err != nil {
			if tpl == "/api/v1" {
				return nil // the admin API's subrouter, not an endpoint
			}
			methods = []string{http.MethodGet}
		}
		for _, m := range methods {
			key := "`" + m + " " + tpl + "`"
			row, ok := rows[key]
			require.True(t, ok, "docs/API.md has no row for %s", key)
			guarded := guardedRoute(tpl, []string{m})
			require.Equal(t, guarded, strings.Contains(row, "**token**"), "%s: marked **token** exactly when it needs the token", key)
			seen++
		}
		return nil
	}))
	require.Len(t, rows, seen+len(pb.GRPCInferenceService_ServiceDesc.Methods)+len(pb.GRPCInferenceService_ServiceDesc.Streams)+2,
		"docs/API.md lists no endpoint the daemon does not serve")
	for _, m := range pb.GRPCInferenceService_ServiceDesc.Methods {
		row, ok := rows["`"+m.MethodName+"`"]
		require.True(t, ok, "docs/API.md has no row for gRPC %s", m.MethodName)
		require.Equal(t, mutatingGRPC[m.MethodName], strings.Contains(row, "**token**"), "gRPC %s: marked **token** exactly when it needs the token", m.MethodName)
	}
	for _, s := range pb.GRPCInferenceService_ServiceDesc.Streams {
		_, ok := rows["`"+s.StreamName+"`"]
		require.True(t, ok, "docs/API.md has no row for gRPC %s", s.StreamName)
	}
	_, ok := rows["`"+healthpb.Health_ServiceDesc.ServiceName+"`"]
	require.True(t, ok, "the health service")
}
