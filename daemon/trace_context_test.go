package daemon

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/metadata"
)

const (
	callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerSpan  = "00f067aa0ba902b7"
)

// A traceparent is read as W3C Trace Context has it; one that is missing,
// given twice or malformed is as none.
func TestParseTraceContext(t *testing.T) {
	valid := "00-" + callerTrace + "-" + callerSpan + "-01"
	for _, tc := range []struct {
		name   string
		parent []string
		state  []string
		want   traceContext
	}{
		{"sampled", []string{valid}, nil, traceContext{trace: callerTrace, span: callerSpan, sampled: true}},
		{"not sampled", []string{"00-" + callerTrace + "-" + callerSpan + "-00"}, nil, traceContext{trace: callerTrace, span: callerSpan}},
		{"other flags beside sampled", []string{"00-" + callerTrace + "-" + callerSpan + "-03"}, nil, traceContext{trace: callerTrace, span: callerSpan, sampled: true}},
		{"tracestate, over two headers", []string{valid}, []string{"rojo=00f067aa0ba902b7", " congo=t61rcWkgMzE"},
			traceContext{trace: callerTrace, span: callerSpan, sampled: true, state: "rojo=00f067aa0ba902b7, congo=t61rcWkgMzE"}},
		{"a tracestate too long is dropped", []string{valid}, []string{"k=" + strings.Repeat("v", 600)}, traceContext{trace: callerTrace, span: callerSpan, sampled: true}},
		{"a later version, with more fields", []string{"01-" + callerTrace + "-" + callerSpan + "-01-what-comes-next"}, nil, traceContext{trace: callerTrace, span: callerSpan, sampled: true}},
		{"none", nil, nil, traceContext{}},
		{"twice", []string{valid, valid}, nil, traceContext{}},
		{"version ff", []string{"ff-" + callerTrace + "-" + callerSpan + "-01"}, nil, traceContext{}},
		{"version 00 with more after the flags", []string{valid + "-x"}, nil, traceContext{}},
		{"a later version run on without a dash", []string{"01-" + callerTrace + "-" + callerSpan + "-01x"}, nil, traceContext{}},
		{"uppercase", []string{"00-" + strings.ToUpper(callerTrace) + "-" + callerSpan + "-01"}, nil, traceContext{}},
		{"zero trace id", []string{"00-" + strings.Repeat("0", 32) + "-" + callerSpan + "-01"}, nil, traceContext{}},
		{"zero span id", []string{"00-" + callerTrace + "-" + strings.Repeat("0", 16) + "-01"}, nil, traceContext{}},
		{"short", []string{"00-" + callerTrace[1:] + "-" + callerSpan + "-01"}, nil, traceContext{}},
		{"not hex", []string{"00-" + callerTrace + "-" + "00f067aa0ba902bz" + "-01"}, nil, traceContext{}},
		{"dashes misplaced", []string{"00_" + callerTrace + "-" + callerSpan + "-01"}, nil, traceContext{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, parseTraceContext(tc.parent, tc.state))
		})
	}

	h := http.Header{}
	h.Set("Traceparent", valid)
	h.Set("Tracestate", "rojo=1")
	require.Equal(t, traceContext{trace: callerTrace, span: callerSpan, sampled: true, state: "rojo=1"}, traceContextOfHeader(h))
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs("traceparent", valid))
	require.Equal(t, traceContext{trace: callerTrace, span: callerSpan, sampled: true}, traceContextOfCall(ctx))
	require.False(t, traceContextOfCall(context.Background()).valid())
}

// With traces going to a collector, a request that brings a sampled trace
// context is traced whatever trace_rate and trace_count say (rate 0 takes
// only those), in the caller's trace under its span; one whose context is
// not sampled is picked by the rate as any other, and joins the caller's
// trace when it is; the context is not read while the level is OFF; and a
// pipeline's step requests stay in the caller's trace.
func TestABroughtTraceContextIsJoined(t *testing.T) {
	col := newCollector(t)
	var said traceErrors
	tr := newTracer(t.TempDir(), said.add)
	tr.exportTo(newOTelExporter(otelTo(col.srv.URL), said.add))
	reads := 0
	bring := func(c traceContext) func() traceContext {
		return func() traceContext { reads++; return c }
	}
	sampled := traceContext{trace: callerTrace, span: callerSpan, sampled: true, state: "rojo=1"}
	unsampled := traceContext{trace: "0af7651916cd43dd8448eb211c80319c", span: "b7ad6b7169203331"}
	t0 := time.Unix(1_700_000_000, 0)

	require.Nil(t, tr.sample("m", "m", 1, t0, bring(sampled)), "level OFF: nothing is traced")
	require.Zero(t, reads, "and no header is read")

	_, err := tr.update("", map[string][]string{traceLevel: {traceTimestamps}, traceRate: {"0"}})
	require.NoError(t, err, "rate 0: only the requests that bring a sampled context")
	require.Nil(t, tr.sample("m", "m", 1, t0, nil))
	require.Nil(t, tr.sample("m", "m", 1, t0, bring(unsampled)))
	joined := tr.sample("m", "m", 1, t0, bring(sampled))
	require.NotNil(t, joined)
	step := tr.child(joined, t0)
	step.entry.Model, step.entry.Version = "a", 1
	tr.done(step, t0.Add(time.Millisecond), "")
	tr.done(joined, t0.Add(2*time.Millisecond), "")

	_, err = tr.update("", map[string][]string{traceRate: {"2"}, traceCount: {"1"}})
	require.NoError(t, err)
	require.Nil(t, tr.sample("m", "m", 1, t0, bring(unsampled)), "the first of two")
	picked := tr.sample("m", "m", 1, t0, bring(unsampled)) // the second: the count's one trace
	require.NotNil(t, picked)
	tr.done(picked, t0.Add(time.Millisecond), "")
	require.Nil(t, tr.sample("m", "m", 1, t0, nil), "the count is spent")
	forced := tr.sample("m", "m", 1, t0, bring(sampled))
	require.NotNil(t, forced, "a sampled context is traced past the count")
	tr.done(forced, t0.Add(time.Millisecond), "")
	s := traceSettingsOf(t, tr, "")
	require.Equal(t, []string{"0"}, s[traceCount], "which it does not spend")
	tr.close()
	require.Empty(t, said.all())

	got := col.spans()
	require.Len(t, got["InferRequest"], 3)
	byTrace := map[string][]otlpSpan{}
	for _, spans := range got {
		for _, sp := range spans {
			byTrace[sp.TraceID] = append(byTrace[sp.TraceID], sp)
		}
	}
	require.Len(t, byTrace, 2, "the callers' two traces, no trace of the daemon's own: %v", byTrace)
	for _, root := range got["InferRequest"] {
		if root.TraceID == unsampled.trace {
			require.Equal(t, unsampled.span, root.ParentSpanID, "picked by the rate, it still joins its caller's trace")
			continue
		}
		require.Equal(t, callerTrace, root.TraceID)
		require.Equal(t, callerSpan, root.ParentSpanID, "the request span hangs from the caller's")
		require.Equal(t, "rojo=1", root.TraceState)
	}
	a := got["a"]
	require.Len(t, a, 1)
	require.Equal(t, callerTrace, a[0].TraceID, "a step request stays in the caller's trace")
	require.Equal(t, "rojo=1", a[0].TraceState)
	for _, m := range got["m"] {
		require.NotEqual(t, callerSpan, m.ParentSpanID, "the model span hangs from the request span")
	}
}

// Trace files (trace.mode triton) take no trace context: rate 0 is refused
// there, and a brought context is not read.
func TestTraceFilesTakeNoTraceContext(t *testing.T) {
	tr := newTestTracer(t, t.TempDir())
	_, err := tr.update("", map[string][]string{traceLevel: {traceTimestamps}, traceRate: {"0"}})
	require.ErrorContains(t, err, `trace_rate "0": give a whole number from 1`)
	_, err = tr.update("", map[string][]string{traceLevel: {traceTimestamps}, traceRate: {"2"}})
	require.NoError(t, err)
	read := false
	require.Nil(t, tr.sample("m", "m", 1, time.Now(), func() traceContext {
		read = true
		return traceContext{trace: callerTrace, span: callerSpan, sampled: true}
	}))
	require.False(t, read)
}

// Whatever a client sends as traceparent and tracestate, reading it does
// not fail, and a context read has ids of the lengths OTLP takes, not all
// zero, in lowercase hex, and a tracestate within its bound.
func FuzzParseTraceContext(f *testing.F) {
	f.Add("00-"+callerTrace+"-"+callerSpan+"-01", "rojo=1")
	f.Add("01-"+callerTrace+"-"+callerSpan+"-00-x", "")
	f.Add("ff-"+callerTrace+"-"+callerSpan+"-01", "a=1,b=2")
	f.Add(" 00-"+callerTrace+"-"+callerSpan+"-01 ", strings.Repeat("k=v,", 200))
	f.Fuzz(func(t *testing.T, parent, state string) {
		c := parseTraceContext([]string{parent}, []string{state})
		if !c.valid() {
			require.Equal(t, traceContext{}, c)
			return
		}
		require.Len(t, c.trace, 32)
		require.Len(t, c.span, 16)
		require.True(t, lowerHex(c.trace) && lowerHex(c.span))
		require.False(t, allZero(c.trace) || allZero(c.span))
		require.LessOrEqual(t, len(c.state), maxTraceState)
	})
}
