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

func TestCORS(t *testing.T) {
	tests := []struct {
		name, method, origin, requestMethod string
		allowedOrigins                      []string
		code                                int
		allowOrigin                         string // "" none
		preflight, reached                  bool
	}{
		{name: "no origin", method: "POST", code: 200, reached: true},
		{name: "a local tool reads", method: "GET", origin: "http://localhost:3000", code: 200, allowOrigin: "http://localhost:3000", reached: true},
		{name: "an allowed origin posts", method: "POST", origin: "https://dash.lab", allowedOrigins: []string{"https://dash.lab"}, code: 200, allowOrigin: "https://dash.lab", reached: true},
		{name: "a foreign origin's read is not shared", method: "GET", origin: "http://evil.example", code: 200, reached: true},
		{name: "preflight of an allowed origin", method: "OPTIONS", origin: "https://dash.lab", requestMethod: "POST", allowedOrigins: []string{"*"}, code: 204, allowOrigin: "https://dash.lab", preflight: true},
		{name: "preflight of a foreign origin", method: "OPTIONS", origin: "http://evil.example", requestMethod: "POST", code: 403},
		{name: "OPTIONS that is no preflight", method: "OPTIONS", origin: "http://localhost:3000", code: 200, allowOrigin: "http://localhost:3000", reached: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := config.Default()
			c.Listen = "127.0.0.1:8700"
			c.Auth.AllowedOrigins = tc.allowedOrigins
			n := &node{}
			n.cfg.Store(&c)
			reached := false
			h := n.sameSite(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { reached = true; w.WriteHeader(200) }))
			req := httptest.NewRequest(tc.method, "http://127.0.0.1:8700/v2/models/m/infer", nil)
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			if tc.requestMethod != "" {
				req.Header.Set("Access-Control-Request-Method", tc.requestMethod)
				req.Header.Set("Access-Control-Request-Headers", "content-type, inference-header-content-length")
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			require.Equal(t, tc.code, rec.Code, rec.Body.String())
			require.Equal(t, tc.reached, reached, "the request reaches the API")
			require.Equal(t, tc.allowOrigin, rec.Header().Get("Access-Control-Allow-Origin"))
			if tc.origin != "" {
				require.Equal(t, "Origin", rec.Header().Get("Vary"), "caches keep answers per origin")
			} else {
				require.Empty(t, rec.Header().Get("Vary"))
			}
			if tc.allowOrigin != "" {
				require.Contains(t, rec.Header().Get("Access-Control-Expose-Headers"), "Inference-Header-Content-Length")
			}
			if tc.preflight {
				require.Equal(t, "content-type, inference-header-content-length", rec.Header().Get("Access-Control-Allow-Headers"))
				require.Contains(t, rec.Header().Get("Access-Control-Allow-Methods"), "POST")
				require.Equal(t, "600", rec.Header().Get("Access-Control-Max-Age"))
			}
			if tc.code == 403 {
				require.Contains(t, rec.Body.String(), "auth.allowed_origins")
			}
		})
	}
}
