package daemon

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// The requests a connection over limits.max_connections may still make:
// health checks and scrapes, never inference or changes.
func TestIsCheck(t *testing.T) {
	tests := []struct {
		method, path string
		want         bool
	}{
		{http.MethodGet, "/v2/health/live", true},
		{http.MethodHead, "/v2/health/ready", true},
		{http.MethodGet, "/metrics", true},
		{http.MethodGet, "/api/v1/status", true},
		{http.MethodGet, "/v2/models/resnet50/ready", true},
		{http.MethodGet, "/v2/models/resnet50/versions/2/ready", true},
		{http.MethodPost, "/v2/models/resnet50/infer", false},
		{http.MethodPost, "/v2/health/live", false},
		{http.MethodGet, "/v2/models/resnet50", false},
		{http.MethodGet, "/v2/models/ready", false},
		{http.MethodGet, "/api/v1/events/stream", false},
		{http.MethodPost, "/v2/repository/models/ready/load", false},
		{"", "", false},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, isCheck(tc.method, tc.path), "%s %s", tc.method, tc.path)
	}
}
