package daemon

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/profiler/store"
)

// A model whose smallest request does not fit limits.max_request_body is
// served (placed, warm) and yet every REST or gRPC request to it is refused
// as too large, and an input that alone is above the limit cannot even be
// read out of shared memory (which is bounded by the same limit per input):
// such a model is not ready. Nothing else says so until the first request
// fails, so the status, `gpuletd models show`, the page, `gpuletd models
// check` and doctor carry a warning naming the numbers.

// bytesPerElementOfBytes is what one BYTES element takes at the least: its
// four-byte length.
const bytesPerElementOfBytes = 4

// smallestInputBytes is what each input of m takes in its smallest
// request: one row, every dynamic dimension 1, a BYTES element its length
// alone; math.MaxInt64 for dimensions no tensor may have
// (tensor.NumElements refuses them); 0 for one the daemon fills (a
// stateful model's control and state inputs).
func smallestInputBytes(m *repository.Model) []int64 {
	out := make([]int64, len(m.Inputs))
	for i, in := range m.Inputs {
		if in.Sequence != "" {
			continue // a stateful model's control or state: the daemon fills it
		}
		size := int64(in.DataType.Size())
		if in.DataType == tensor.Bytes {
			size = bytesPerElementOfBytes
		}
		shape := make([]int64, len(in.Dims))
		for j, d := range in.Dims {
			shape[j] = max(d, 1)
		}
		n, err := tensor.NumElements(shape)
		if err != nil {
			n, size = 1, math.MaxInt64
		}
		out[i] = n * size
	}
	return out
}

// everyRequestRefused says which input of m takes more than limit bytes
// alone in a request of one row: then no request to m can be read, over
// REST, gRPC or shared memory, and m is not ready wherever readiness is
// asked; "" when each input fits.
func everyRequestRefused(m *repository.Model, limit int64) string {
	for i, size := range smallestInputBytes(m) {
		if size > limit {
			return fmt.Sprintf("every request is refused: input %q alone takes %d bytes in a request of one row, above limits.max_request_body (%d bytes), which bounds a request body, a gRPC message and an input read from shared memory; raise the limit",
				m.Inputs[i].Name, size, limit)
		}
	}
	return ""
}

// RequestLimitWarning says why requests to m cannot fit a request body of
// limit bytes, or "" when its smallest request fits.
func RequestLimitWarning(m *repository.Model, limit int64) string {
	if w := everyRequestRefused(m, limit); w != "" {
		return w
	}
	var total int64
	for _, size := range smallestInputBytes(m) {
		total += size
	}
	if total > limit {
		return fmt.Sprintf("REST and gRPC requests are refused as too large: a request of one row carries %d bytes of tensor data, above limits.max_request_body (%d bytes); raise the limit, or send the inputs through shared memory",
			total, limit)
	}
	return ""
}

// modelWarnings are what keeps model (or pipeline) m from serving its
// requests where it is: its slow starts, a request limit it cannot fit, the
// hop to its executors, and misses on mostly idle gpu-lets, judged on its
// recent window w (the status's).
func (n *node) modelWarnings(m *repository.Model, w windowStats) []string {
	out := n.slowStarts.of(m.Name)
	if w := RequestLimitWarning(m, int64(n.conf().Limits.MaxRequestBody)); w != "" {
		out = append(out, w)
	}
	if w := n.stale.reason(m.Name); w != "" {
		out = append(out, w)
	}
	if w := n.crashWarning(m.Name); w != "" {
		out = append(out, w)
	}
	hop := ""
	if v, ok := n.counters.m.Load(m.Name); ok {
		if hop = hopWarning(m.Config.SLO.D(), &v.(*modelCounters).hop); hop != "" {
			out = append(out, hop)
		}
	}
	// The hop, where it warns, says why already.
	if hop == "" && missesOverRule(w) {
		if idle := idleMissWarning(m.Name, w, n.busyOf(m.Name, time.Now())); idle != "" {
			out = append(out, idle)
		}
	}
	return out
}

// warnIfTooLarge logs the warning of model m, and records it as an event,
// when its requests cannot fit limit.
func (c *catalog) warnIfTooLarge(m *repository.Model, limit int64) {
	w := RequestLimitWarning(m, limit)
	if w == "" {
		return
	}
	c.log.Warn("model requests cannot fit the request limit", zap.String("model", m.Name), zap.String("warning", w))
	if c.events != nil {
		c.events.add(EventRequestLimit, store.SeverityWarning, m.Name+": "+w,
			map[string]string{"model": m.Name, "max_request_body": strconv.FormatInt(limit, 10)})
	}
}

// warnRequestLimit logs the warning of every served model and pipeline
// whose requests cannot fit a new limit (a reload's).
func (c *catalog) warnRequestLimit(limit int64) {
	if c == nil {
		return
	}
	for _, m := range append(c.all(), c.allPipelines()...) {
		c.warnIfTooLarge(m, limit)
	}
}

// limitRefusal is everyRequestRefused for the model or pipeline name under
// the running limits.max_request_body; "" for a name the catalog lacks.
func (n *node) limitRefusal(name string) string {
	m, ok := n.catalog.get(name)
	if !ok {
		m, ok = n.catalog.pipeline(name)
	}
	if !ok {
		return ""
	}
	return everyRequestRefused(m, int64(n.conf().Limits.MaxRequestBody))
}
