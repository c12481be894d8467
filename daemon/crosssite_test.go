package daemon

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/daemon/config"
)

func TestSameSite(t *testing.T) {
	tests := []struct {
		name           string
		method, host   string
		origin         string
		allowedHosts   []string
		allowedOrigins []string
		want           int
	}{
		{name: "loopback address", method: "POST", host: "127.0.0.1:8700", want: 200},
		{name: "other loopback address", method: "POST", host: "127.0.0.2:8700", want: 200},
		{name: "ipv6 loopback", method: "GET", host: "[::1]:8700", want: 200},
		{name: "localhost", method: "GET", host: "localhost:8700", want: 200},
		{name: "any IP address", method: "GET", host: "10.1.2.3:8700", want: 200},
		{name: "the machine's host name", method: "GET", host: hostName() + ":8700", want: 200},
		{name: "rebinding name", method: "GET", host: "evil.example:8700", want: 403},
		{name: "rebinding name on a mutating call", method: "POST", host: "evil.example", origin: "http://evil.example", want: 403},
		{name: "allowed host", method: "GET", host: "gpu-box.lab:8700", allowedHosts: []string{"GPU-box.lab"}, want: 200},
		{name: "any host allowed", method: "GET", host: "gpu-box.lab:8700", allowedHosts: []string{"*"}, want: 200},
		{name: "foreign origin on a loopback address", method: "POST", host: "127.0.0.1:8700", origin: "http://evil.example", want: 403},
		{name: "foreign origin may read", method: "GET", host: "127.0.0.1:8700", origin: "http://evil.example", want: 200},
		{name: "null origin", method: "POST", host: "127.0.0.1:8700", origin: "null", want: 403},
		{name: "the admin page's own origin", method: "POST", host: "127.0.0.1:8700", origin: "http://127.0.0.1:8700", want: 200},
		{name: "a local tool's origin", method: "POST", host: "127.0.0.1:8700", origin: "http://localhost:3000", want: 200},
		{name: "allowed origin", method: "DELETE", host: "127.0.0.1:8700", origin: "https://dash.lab", allowedOrigins: []string{"https://dash.lab/"}, want: 200},
		{name: "not quite the allowed origin", method: "POST", host: "127.0.0.1:8700", origin: "https://dash.lab.evil.example", allowedOrigins: []string{"https://dash.lab"}, want: 403},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := config.Default()
			c.Listen = "127.0.0.1:8700"
			c.Auth.AllowedHosts, c.Auth.AllowedOrigins = tc.allowedHosts, tc.allowedOrigins
			n := &node{}
			n.cfg.Store(&c)
			h := n.sameSite(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) }))
			req := httptest.NewRequest(tc.method, "http://x/api/v1/reorganize", nil)
			req.Host = tc.host
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			require.Equal(t, tc.want, rec.Code, rec.Body.String())
			if tc.want == 403 {
				require.Contains(t, rec.Body.String(), "auth.allowed_")
			}
		})
	}
}
