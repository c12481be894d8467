package daemon

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/mux"
	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/connlimit"
	"github.com/gpulet/gpuletd/kserve"
	"go.uber.org/zap"
)

// handler builds the daemon's HTTP API: KServe v2 under /v2, the admin API
// under /api/v1, Prometheus metrics at /metrics and the admin page at /,
// behind the access log and the check of the request's host and origin.
func (n *node) handler(web http.Handler) http.Handler {
	return connlimit.Guard(accessLog(n.accessLogger(), n.sameSite(headAsGet(n.routes(web)))), isCheck)
}

// isCheck says whether a request is a health check or a scrape, which a
// connection over limits.max_connections may still make (connlimit): the
// server's and a model's liveness and readiness, the metrics and the status.
func isCheck(method, path string) bool {
	if method != http.MethodGet && method != http.MethodHead {
		return false
	}
	switch path {
	case "/v2/health/live", "/v2/health/ready", "/metrics", "/api/v1/status":
		return true
	default:
		model, ok := strings.CutPrefix(path, "/v2/models/")
		return ok && len(model) > len("/ready") && strings.HasSuffix(model, "/ready")
	}
}

// headAsGet answers HEAD wherever GET is answered, as HTTP asks and
// net/http's own router does: health checkers and monitors often send HEAD
// (the routes name GET alone, which answered HEAD 405). The handler runs as
// for GET; the server sends the status and headers without the body, since
// the request it answers is still a HEAD.
func headAsGet(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			r = r.Clone(r.Context())
			r.Method = http.MethodGet
		}
		h.ServeHTTP(w, r)
	})
}

// routes is every endpoint of the HTTP API (docs/API.md lists them).
func (n *node) routes(web http.Handler) *mux.Router {
	r := mux.NewRouter()
	r.HandleFunc("/v2/health/live", n.handleLive).Methods(http.MethodGet)
	r.HandleFunc("/v2/health/ready", n.handleReady).Methods(http.MethodGet)
	r.HandleFunc("/v2", n.handleServerMetadata).Methods(http.MethodGet)
	r.HandleFunc("/v2/models/stats", n.handleModelStats).Methods(http.MethodGet)
	for _, prefix := range []string{"/v2/models/{model}", "/v2/models/{model}/versions/{version}"} {
		r.HandleFunc(prefix, n.handleModelMetadata).Methods(http.MethodGet)
		r.HandleFunc(prefix+"/ready", n.handleModelReady).Methods(http.MethodGet)
		r.HandleFunc(prefix+"/infer", n.handleInfer).Methods(http.MethodPost)
		r.HandleFunc(prefix+"/generate", func(w http.ResponseWriter, r *http.Request) { n.handleGenerate(w, r, false) }).Methods(http.MethodPost)
		r.HandleFunc(prefix+"/generate_stream", func(w http.ResponseWriter, r *http.Request) { n.handleGenerate(w, r, true) }).Methods(http.MethodPost)
		r.HandleFunc(prefix+"/config", n.handleModelConfig).Methods(http.MethodGet)
		r.HandleFunc(prefix+"/stats", n.handleModelStats).Methods(http.MethodGet)
	}
	for _, path := range []string{"/v2/trace/setting", "/v2/models/{model}/trace/setting"} {
		r.HandleFunc(path, n.handleTraceSettings).Methods(http.MethodGet)
		r.Handle(path, n.adminOnly(http.HandlerFunc(n.handleTraceSettings))).Methods(http.MethodPost)
	}
	r.HandleFunc("/v2/logging", n.handleLogSettings).Methods(http.MethodGet)
	r.Handle("/v2/logging", n.adminOnly(http.HandlerFunc(n.handleLogSettings))).Methods(http.MethodPost)
	r.HandleFunc("/v2/repository/index", n.handleRepoIndex).Methods(http.MethodPost)
	r.Handle("/v2/repository/models/{model}/load", n.adminOnly(http.HandlerFunc(n.handleRepoLoad))).Methods(http.MethodPost)
	r.Handle("/v2/repository/models/{model}/unload", n.adminOnly(http.HandlerFunc(n.handleRepoUnload))).Methods(http.MethodPost)
	// The protocol's forms that name a repository, refused as Triton
	// refuses them (the load and unload still need the token first).
	r.HandleFunc("/v2/repository/{repository}/index", handleNamedRepository).Methods(http.MethodPost)
	r.Handle("/v2/repository/{repository}/models/{model}/load", n.adminOnly(http.HandlerFunc(handleNamedRepository))).Methods(http.MethodPost)
	r.Handle("/v2/repository/{repository}/models/{model}/unload", n.adminOnly(http.HandlerFunc(handleNamedRepository))).Methods(http.MethodPost)
	n.shmRoutes(r)
	n.cudaShmRoutes(r)
	n.adminRoutes(r.PathPrefix("/api/v1").Subrouter())
	r.Handle("/metrics", n.metricsHTTP())
	if web != nil {
		// Only the page and its assets: other paths keep the API's 404 and
		// 405 answers.
		r.Handle("/", web)
		r.Handle("/index.html", web)
		r.PathPrefix("/assets/").Handler(web)
	}
	n.restrictRoutes(r)
	r.NotFoundHandler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		writeError(w, http.StatusNotFound, "no such endpoint: "+req.Method+" "+req.URL.Path)
	})
	r.MethodNotAllowedHandler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		writeError(w, http.StatusMethodNotAllowed, "method "+req.Method+" is not allowed on "+req.URL.Path)
	})
	return r
}

// writeJSON answers with a JSON document.
func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers {"error": msg}.
func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}

// writeInferError answers a refused request as every protocol does: its
// code and message, and when a retry may cure it the wait it should take
// (gRPC's RetryInfo, grpcError).
func writeInferError(w http.ResponseWriter, e *inferError) {
	if e.retryable() {
		w.Header().Set("Retry-After", retryAfter)
	}
	if e.reason != "" {
		w.Header().Set(kserve.HeaderFailureReason, e.reason)
	}
	if e.code == http.StatusUnsupportedMediaType {
		w.Header().Set("Accept-Encoding", acceptedCodings)
	}
	writeError(w, e.code, e.msg)
}

// errAuth is the answer to an admin call without the right token.
var errAuth = errors.New("this call changes the daemon or hands out its database: send Authorization: Bearer <auth.admin_token>")

// errNoToken is the answer to an admin call off loopback where no token is
// configured: no request can make it until one is.
var errNoToken = errors.New("this call changes the daemon or hands out its database, which a listener off loopback allows only with the admin token, and none is set: set auth.admin_token (GPULETD_AUTH_ADMIN_TOKEN) and send Authorization: Bearer <auth.admin_token>")

// bearer is the token of an Authorization value ("Bearer <token>"), ""
// for another scheme or none.
func bearer(v string) string {
	if t, ok := strings.CutPrefix(v, "Bearer "); ok {
		return t
	}
	return ""
}

// authRefusal is why an admin call with the bearer token got (empty for
// none) is refused off loopback where token is configured; nil when it
// may pass.
func authRefusal(token, got string) error {
	switch {
	case token == "":
		return errNoToken
	case got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1:
		return errAuth
	}
	return nil
}

// adminOnly guards calls that change the daemon, and the backup, which
// hands out all it stores: on a listener that is not loopback they need the
// admin bearer token (and are refused when none is configured), or the key
// of their group where auth.restricted_apis restricts it (keyedBy).
func (n *node) adminOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !n.conf().IsLoopback() && !n.keyedBy(r) {
			if err := authRefusal(n.conf().Auth.AdminToken, bearer(r.Header.Get("Authorization"))); err != nil {
				w.Header().Set("WWW-Authenticate", `Bearer realm="gpuletd"`)
				writeError(w, http.StatusUnauthorized, err.Error())
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

func (n *node) handleLive(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]bool{"live": true})
}

func (n *node) handleReady(w http.ResponseWriter, _ *http.Request) {
	if ready, waiting, unservable := n.readiness(); !ready {
		body := map[string]any{"ready": false}
		if len(waiting) > 0 {
			body["waiting_for"] = waiting
		}
		if len(unservable) > 0 {
			body["unservable"] = unservable // their reasons: GET /v2/models/<m>/ready, gpuletd status
		}
		writeJSON(w, http.StatusServiceUnavailable, body)
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"ready": true})
}

// httpServer is an HTTP server of the node's for h, with the client
// limits every listener of its holds to (limits.body_timeout for a
// request, limits.idle_timeout for a kept-alive connection), its errors
// logged to errLog; with the node's certificate when it has one.
func (n *node) httpServer(h http.Handler, limits config.Limits, errLog *zap.Logger) *http.Server {
	srv := &http.Server{
		Handler:           h,
		ConnContext:       connlimit.ConnContext,
		ReadHeaderTimeout: min(10*time.Second, limits.BodyTimeout.D()),
		ReadTimeout:       limits.BodyTimeout.D(),
		IdleTimeout:       limits.IdleTimeout.D(),
		ErrorLog:          zap.NewStdLog(errLog),
	}
	if n.tls != nil {
		srv.TLSConfig = n.tls.config()
	}
	return srv
}

// serveHTTP serves srv on ln until it is shut down: over TLS when it has a
// certificate, in plain HTTP otherwise.
func serveHTTP(srv *http.Server, ln net.Listener) error {
	if srv.TLSConfig == nil {
		return srv.Serve(ln)
	}
	return srv.ServeTLS(ln, "", "")
}
