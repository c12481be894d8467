package daemon

import (
	"context"
	"net/http"
	"strings"

	"google.golang.org/grpc/metadata"
)

// A request may bring the trace it belongs to, as W3C Trace Context
// headers (gRPC metadata of the same names): traceparent, and tracestate
// beside it. With trace.mode opentelemetry its spans then join that trace
// under the caller's span, as Triton's do since its 24.01 release.

// The W3C Trace Context header names.
const (
	headerTraceParent = "traceparent"
	headerTraceState  = "tracestate"
)

// maxTraceState is the longest tracestate carried on: W3C Trace Context
// asks that at least 512 characters be propagated, and allows dropping a
// longer one.
const maxTraceState = 512

// traceContext is the trace a request brings: its trace id and its
// caller's span id (hex), whether the caller records it, and its
// tracestate. The zero value is none.
type traceContext struct {
	trace, span string
	sampled     bool
	state       string
}

// valid tells whether a context was brought.
func (c traceContext) valid() bool { return c.trace != "" }

// parseTraceContext reads traceparent (and tracestate, the values of
// each header given): version-traceid-parentid-flags, lowercase hex of 2,
// 32, 16 and 2 digits. The zero context when traceparent is missing, given
// more than once or malformed (an all-zero id, version ff, a version 00
// value with more after the flags), as W3C Trace Context says to treat
// such a header as absent. A later version's value is read by its first
// four fields.
func parseTraceContext(parent, state []string) traceContext {
	if len(parent) != 1 {
		return traceContext{}
	}
	v := strings.TrimSpace(parent[0])
	if len(v) < 55 || v[2] != '-' || v[35] != '-' || v[52] != '-' {
		return traceContext{}
	}
	version, trace, span, flags := v[:2], v[3:35], v[36:52], v[53:55]
	if !lowerHex(version) || version == "ff" || !lowerHex(trace) || !lowerHex(span) || !lowerHex(flags) ||
		allZero(trace) || allZero(span) {
		return traceContext{}
	}
	if len(v) > 55 && (version == "00" || v[55] != '-') {
		return traceContext{}
	}
	c := traceContext{trace: trace, span: span, sampled: hexDigit(flags[1])&1 == 1}
	if s := strings.TrimSpace(strings.Join(state, ",")); len(s) <= maxTraceState {
		c.state = s
	}
	return c
}

// traceContextOfHeader is the trace context of an HTTP request's headers.
func traceContextOfHeader(h http.Header) traceContext {
	return parseTraceContext(h.Values(headerTraceParent), h.Values(headerTraceState))
}

// traceContextOfCall is the trace context of a gRPC call's metadata.
func traceContextOfCall(ctx context.Context) traceContext {
	return parseTraceContext(metadata.ValueFromIncomingContext(ctx, headerTraceParent),
		metadata.ValueFromIncomingContext(ctx, headerTraceState))
}

func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func allZero(s string) bool { return strings.Trim(s, "0") == "" }

func hexDigit(c byte) byte {
	if c >= 'a' {
		return c - 'a' + 10
	}
	return c - '0'
}
