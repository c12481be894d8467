package loadgen

import (
	"io"
	"net/http"
	"strconv"
)

// Echo is a bare net/http handler to compare a server against: it reads
// the whole request body and answers 200 with a fixed body, the same bytes
// for every request (such as a real server's answer to the same payload).
type Echo struct {
	// Body is the answer.
	Body []byte
	// Header is copied into every answer (Content-Type, the binary
	// extension's Inference-Header-Content-Length).
	Header http.Header
}

// ServeHTTP reads the request and answers Body.
func (e *Echo) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if _, err := io.Copy(io.Discard, r.Body); err != nil {
		http.Error(w, "read request: "+err.Error(), http.StatusBadRequest)
		return
	}
	h := w.Header()
	for k, v := range e.Header {
		h[k] = v
	}
	h.Set("Content-Length", strconv.Itoa(len(e.Body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(e.Body)
}
