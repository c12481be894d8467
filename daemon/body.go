package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/gpulet/gpuletd/daemon/connlimit"
	"github.com/gpulet/gpuletd/daemon/repository"
)

// readBody reads an inference request's body within limits.max_request_body
// and the budget of bytes in flight, waiting for room at most until the
// model's SLO has passed. A compressed body (Content-Encoding gzip or
// deflate) is decompressed as it is read, and the limit and the budget hold
// its decompressed bytes (and, while it is read, the decompressor's
// buffers). release gives the bytes back once the answer is written.
func (n *node) readBody(r *http.Request, m *repository.Model, arrival time.Time) (body []byte, release func(), ierr *inferError) {
	limits := n.conf().Limits
	ctx := &lazyDeadline{Context: r.Context(), deadline: arrival.Add(m.Config.SLO.D())}
	defer ctx.stop()
	size := r.ContentLength
	if size > int64(limits.MaxRequestBody) {
		return nil, func() {}, tooLarge(int64(limits.MaxRequestBody))
	}
	src, size, err := decodedBody(r.Header.Get("Content-Encoding"), http.MaxBytesReader(nil, r.Body, int64(limits.MaxRequestBody)), size, int64(limits.MaxRequestBody))
	if err != nil {
		return nil, func() {}, &inferError{code: http.StatusUnsupportedMediaType, reason: reasonBadRequest, msg: err.Error()}
	}
	release = func() {}
	if _, compressed := src.(*decompressingReader); compressed {
		// The decompressor's buffers are in use while the body is read.
		var held func()
		if held, err = n.bodies.Hold(ctx, m.Name, decompressorBytes); err == nil {
			defer held()
		}
	}
	if err == nil {
		body, release, err = n.bodies.ReadAll(ctx, m.Name, src, size, int64(limits.MaxRequestBody))
	}
	if err == nil {
		return body, release, nil
	}
	var tooBig *http.MaxBytesError
	var netErr net.Error
	switch {
	case errors.As(err, &tooBig):
		return nil, release, tooLarge(tooBig.Limit)
	case errors.Is(err, connlimit.ErrOverBudget):
		return nil, release, n.overBudget(m)
	case errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return nil, release, &inferError{code: http.StatusRequestTimeout, reason: reasonBodyTimeout,
			msg: fmt.Sprintf("request not received within limits.body_timeout (%s)", limits.BodyTimeout)}
	}
	return nil, release, &inferError{code: http.StatusBadRequest, reason: reasonBadRequest, msg: fmt.Sprintf("read request body: %v", err)}
}

func tooLarge(limit int64) *inferError {
	return &inferError{code: http.StatusRequestEntityTooLarge, reason: reasonTooLarge,
		msg: fmt.Sprintf("request body is over the limit of %d bytes (limits.max_request_body)", limit)}
}

// holdMessage takes a received message's bytes in the budget of request
// bytes in flight, waiting for room at most until the model's SLO has
// passed, as readBody does for a REST body. Nothing to hold holds nothing.
func (n *node) holdMessage(ctx context.Context, m *repository.Model, size int64, arrival time.Time) (func(), *inferError) {
	return n.hold(ctx, n.bodies, m, size, arrival, n.overBudget)
}

// hold takes size bytes of b (nil: no budget) for a request of m, waiting
// for room at most until its SLO has passed; refuse says why there was
// none.
func (n *node) hold(ctx context.Context, b *connlimit.Budget, m *repository.Model, size int64, arrival time.Time,
	refuse func(*repository.Model) *inferError) (func(), *inferError) {
	if size <= 0 || b == nil {
		return func() {}, nil
	}
	wait := &lazyDeadline{Context: ctx, deadline: arrival.Add(m.Config.SLO.D())}
	defer wait.stop()
	release, err := b.Hold(wait, m.Name, size)
	if errors.Is(err, connlimit.ErrOverBudget) {
		return release, refuse(m)
	}
	return release, nil
}

// overBudget is the refusal of a request of m whose bytes found no room in
// the budget of bytes in flight before its SLO passed.
func (n *node) overBudget(m *repository.Model) *inferError {
	return budgetRefusal(m, n.bodies, "request bytes in flight hold limits.max_inflight_bytes")
}

// overBesides is overBudget for what requests hold beside their bodies.
func (n *node) overBesides(m *repository.Model) *inferError {
	return budgetRefusal(m, n.besides, "what requests in flight hold beside their bodies (decoded inputs, outputs) fills its budget, as large as limits.max_inflight_bytes")
}

// budgetRefusal says that b, full as full says, had no room for a request
// of m. It says what m's own requests hold of it, since one model's may
// fill three quarters of a budget at most.
func budgetRefusal(m *repository.Model, b *connlimit.Budget, full string) *inferError {
	return &inferError{code: http.StatusServiceUnavailable, reason: reasonMemoryBudget,
		msg: fmt.Sprintf("%s: %s (%d bytes, %d of them this model's requests); retry shortly", m.Name, full, b.Max(), b.Holds(m.Name))}
}

// maxParamsBody bounds the body of an API request that carries only
// parameters (repository index and unload, log settings).
const maxParamsBody = 64 << 10

// errBodyTooLarge is an API request's body above its bound.
var errBodyTooLarge = errors.New("body too large")

// readJSONBody reads an API request's body of at most limit bytes as JSON
// into v. An empty body leaves v as it is and is not present; one above
// limit is errBodyTooLarge.
func readJSONBody(r *http.Request, limit int64, v any) (present bool, err error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	switch {
	case err != nil:
		return false, fmt.Errorf("read body: %w", err)
	case int64(len(body)) > limit:
		return false, fmt.Errorf("%w: above %d bytes", errBodyTooLarge, limit)
	case len(bytes.TrimSpace(body)) == 0:
		return false, nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		return true, fmt.Errorf("not JSON: %w", err)
	}
	return true, nil
}
