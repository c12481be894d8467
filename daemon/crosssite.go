package daemon

import (
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/gpulet/gpuletd/daemon/config"
)

// sameSite refuses, with 403, requests a web page could send the daemon
// against its operator's will: a Host header that is not one of the
// daemon's names (DNS rebinding: a name the page's site controls that
// resolves to the daemon's address), and requests other than GET, HEAD and
// OPTIONS from a foreign web origin (cross-site request forgery). Pages of
// the allowed origins may send requests and read the answers (CORS, its
// preflight answered here). Clients that are not browsers send no Origin
// and are not affected.
func (n *node) sameSite(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := n.conf()
		if !hostAllowed(r.Host, c) {
			writeError(w, http.StatusForbidden, "host "+strconv.Quote(r.Host)+" is not a name of this daemon: use its address, or add the name to auth.allowed_hosts")
			return
		}
		origin := r.Header.Get("Origin")
		allowed := origin != "" && originAllowed(origin, r.Host, c.Auth.AllowedOrigins)
		if origin != "" {
			w.Header().Add("Vary", "Origin")
		}
		if allowed {
			// The origins that may use the daemon may read its answers too
			// (CORS), as Ollama's allowed origins may.
			w.Header().Set("Access-Control-Allow-Origin", origin)
			w.Header().Set("Access-Control-Expose-Headers", corsExposed)
		}
		if r.Method == http.MethodOptions && origin != "" && r.Header.Get("Access-Control-Request-Method") != "" {
			preflight(w, r, allowed)
			return
		}
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
		default:
			if origin != "" && !allowed {
				refuseOrigin(w, origin)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// corsExposed are the answer headers a page of an allowed origin may read
// besides the plain ones: the binary tensor extension's header length, why
// a request failed, and when to retry.
const corsExposed = "Inference-Header-Content-Length, Gpuletd-Failure-Reason, Retry-After, Content-Encoding"

// preflight answers a browser's question whether a page may send a request
// (CORS): for an allowed origin, the methods and the headers asked for, for
// ten minutes; for another, 403 saying how to allow it.
func preflight(w http.ResponseWriter, r *http.Request, allowed bool) {
	if !allowed {
		refuseOrigin(w, r.Header.Get("Origin"))
		return
	}
	w.Header().Set("Access-Control-Allow-Methods", "GET, HEAD, POST, PUT, DELETE")
	if hs := r.Header.Get("Access-Control-Request-Headers"); hs != "" {
		w.Header().Set("Access-Control-Allow-Headers", hs)
	}
	w.Header().Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
}

// refuseOrigin answers a request, or its preflight, from a web origin that
// may not use the daemon.
func refuseOrigin(w http.ResponseWriter, origin string) {
	writeError(w, http.StatusForbidden, "requests from web origin "+strconv.Quote(origin)+" may not change or use the daemon: add it to auth.allowed_origins")
}

// hostName is the machine's host name, looked up once.
var hostName = sync.OnceValue(func() string {
	h, _ := os.Hostname()
	return strings.ToLower(h)
})

// hostOnly is host without its port and brackets, lower case.
func hostOnly(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return strings.ToLower(strings.Trim(host, "[]"))
}

// hostAllowed says whether a request's Host names this daemon: an IP
// address (rebinding needs a name), localhost, the listener's host, the
// machine's host name or an allowed host.
func hostAllowed(host string, c *config.Config) bool {
	h := hostOnly(host)
	switch {
	case h == "":
		return true // HTTP/1.0 without Host
	case net.ParseIP(h) != nil, isLocalhost(h):
		return true
	case h == hostOnly(c.Listen), c.Metrics.Listen != "" && h == hostOnly(c.Metrics.Listen), h == hostName():
		return true
	}
	return slices.ContainsFunc(c.Auth.AllowedHosts, func(a string) bool { return a == "*" || strings.EqualFold(a, h) })
}

func isLocalhost(h string) bool { return h == "localhost" || strings.HasSuffix(h, ".localhost") }

// originAllowed says whether a web origin may send the daemon requests
// that are not GET or HEAD: the daemon's own origin (the admin page), a
// loopback one (a local tool) or an allowed one.
func originAllowed(origin, host string, allowed []string) bool {
	if slices.ContainsFunc(allowed, func(a string) bool { return a == "*" || strings.EqualFold(strings.TrimSuffix(a, "/"), origin) }) {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false // "null" (a sandboxed page or a file) or garbage
	}
	if strings.EqualFold(u.Host, host) {
		return true
	}
	h := hostOnly(u.Host)
	if isLocalhost(h) {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
