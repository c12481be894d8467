package daemon

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/connlimit"
	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/profiler/store"
)

// TestRequestLimitWarning: a model whose smallest request (one row, each
// dynamic dimension 1, a BYTES element its length) is above the request
// limit is warned of, and how: an input alone above it cannot come through
// shared memory either.
func TestRequestLimitWarning(t *testing.T) {
	in := func(name string, dt tensor.DataType, dims ...int64) repository.TensorSpec {
		return repository.TensorSpec{Name: name, DataType: dt, Dims: dims}
	}
	for _, tc := range []struct {
		name   string
		inputs []repository.TensorSpec
		limit  int64
		want   string
	}{
		{"fits", []repository.TensorSpec{in("x", tensor.FP32, -1, 3, 224, 224)}, 602112, ""},
		{"a dynamic dimension counts one", []repository.TensorSpec{in("x", tensor.FP32, -1, -1, 1000)}, 4000, ""},
		{"one input above the limit", []repository.TensorSpec{in("image", tensor.FP32, -1, 3, 224, 224)}, 65536,
			`every request is refused: input "image" alone takes 602112 bytes in a request of one row, above limits.max_request_body (65536 bytes), which bounds a request body, a gRPC message and an input read from shared memory; raise the limit`},
		{"a stateful model's state is the daemon's", []repository.TensorSpec{in("x", tensor.FP32, 4), {Name: "ACC", DataType: tensor.FP32, Dims: []int64{1 << 20}, Sequence: repository.RoleState}}, 4096, ""},
		{"inputs above the limit together", []repository.TensorSpec{in("a", tensor.FP16, 600), in("b", tensor.Int64, 100)}, 1500,
			"REST and gRPC requests are refused as too large: a request of one row carries 2000 bytes of tensor data, above limits.max_request_body (1500 bytes); raise the limit, or send the inputs through shared memory"},
		{"dimensions whose product overflows", []repository.TensorSpec{in("huge", tensor.FP32, 1<<40, 1<<40)}, 64 << 20,
			`every request is refused: input "huge" alone takes 9223372036854775807 bytes in a request of one row, above limits.max_request_body (67108864 bytes), which bounds a request body, a gRPC message and an input read from shared memory; raise the limit`},
		{"a BYTES element takes its length", []repository.TensorSpec{in("text", tensor.Bytes, -1, 300)}, 1024,
			`every request is refused: input "text" alone takes 1200 bytes in a request of one row, above limits.max_request_body (1024 bytes), which bounds a request body, a gRPC message and an input read from shared memory; raise the limit`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &repository.Model{Name: "m", Inputs: tc.inputs}
			require.Equal(t, tc.want, RequestLimitWarning(m, tc.limit))
		})
	}
}

// TestModelWarningsFollowTheLimit: the status's warnings on a model say
// what the limit in force makes of it, so a reload that raises the limit
// clears the warning; a slow start is listed beside it.
func TestModelWarningsFollowTheLimit(t *testing.T) {
	n := &node{}
	cfg := config.Default()
	cfg.Limits.MaxRequestBody = 2 << 10
	n.cfg.Store(&cfg)
	m := &repository.Model{Name: "lenet5", Inputs: []repository.TensorSpec{{Name: "input", DataType: tensor.FP32, Dims: []int64{-1, 1, 28, 28}}}}
	n.slowStarts.reported = map[string]slowStart{"x": {model: "lenet5", gpulet: "gpu0-20-1", slo: 5 * time.Millisecond}}
	got := n.modelWarnings(m, windowStats{})
	require.Len(t, got, 2)
	require.Contains(t, got[0], "refused, ℓ(1) > SLO on gpu0-20-1")
	require.Contains(t, got[1], `input "input" alone takes 3136 bytes`)

	raised := cfg
	raised.Limits.MaxRequestBody = 64 << 20
	n.cfg.Store(&raised)
	require.Len(t, n.modelWarnings(m, windowStats{}), 1)
}

// TestReloadWarnsOfModelsTheNewLimitShutsOut: a reload that lowers
// limits.max_request_body below a served model's smallest request logs the
// model's warning and records it as an event, as its load did; a limit
// that fits says nothing.
func TestReloadWarnsOfModelsTheNewLimitShutsOut(t *testing.T) {
	core, logs := observer.New(zap.WarnLevel)
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "g.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	cur := config.Default()
	cur.GRPCListen = ""
	n := &node{sup: &supervisor{}, reloaded: make(chan struct{}, 1), bodies: connlimit.NewBudget(int64(cur.Limits.MaxInflightBytes)),
		catalog: newCatalog([]string{t.TempDir()}, testRepositoryOptions(0), st, newEvents(st, zap.NewNop()), zap.New(core))}
	n.cfg.Store(&cur)
	n.catalog.models["lenet5"] = &repository.Model{Name: "lenet5", Inputs: []repository.TensorSpec{{Name: "input", DataType: tensor.FP32, Dims: []int64{-1, 1, 28, 28}}}}

	next := cur
	next.Limits.MaxRequestBody = 16 << 20
	applied, _ := n.reload(&next)
	require.Equal(t, []string{"limits.max_request_body"}, applied)
	require.Zero(t, logs.Len(), "3136 bytes fit 16 MiB")

	lower := next
	lower.Limits.MaxRequestBody = 2 << 10
	n.reload(&lower)
	require.Equal(t, 1, logs.Len())
	e := logs.All()[0]
	require.Equal(t, "model requests cannot fit the request limit", e.Message)
	require.Equal(t, "lenet5", e.ContextMap()["model"])
	require.Contains(t, e.ContextMap()["warning"], `input "input" alone takes 3136 bytes`)
	evs, err := st.Events(context.Background(), 0, 10)
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.Equal(t, EventRequestLimit, evs[0].Kind)
	require.Equal(t, store.SeverityWarning, evs[0].Severity)
	require.Equal(t, map[string]string{"model": "lenet5", "max_request_body": "2048"}, evs[0].Attrs)
	require.True(t, strings.HasPrefix(evs[0].Message, `lenet5: every request is refused: input "input" alone takes 3136 bytes`), evs[0].Message)
}

// TestAModelNoRequestCanReachIsNotReady: a model placed and routed whose
// one input alone is above limits.max_request_body answers no request, so
// it is not ready (the model ready endpoints, the status, the state
// metric) and says why; a model whose request fits only through shared
// memory stays ready; a reload that raises the limit makes it ready again
// with nothing re-placed.
func TestAModelNoRequestCanReachIsNotReady(t *testing.T) {
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "g.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	cfg := config.Default()
	cfg.Limits.MaxRequestBody = 3 << 10
	n := &node{router: newRouter(), catalog: newCatalog([]string{t.TempDir()}, testRepositoryOptions(0), st, newEvents(st, zap.NewNop()), zap.NewNop())}
	n.cfg.Store(&cfg)
	n.catalog.models["lenet5"] = &repository.Model{Name: "lenet5", Inputs: []repository.TensorSpec{{Name: "input", DataType: tensor.FP32, Dims: []int64{-1, 1, 28, 28}}}} // 3 136 bytes a row
	n.catalog.models["pair"] = &repository.Model{Name: "pair", Inputs: []repository.TensorSpec{
		{Name: "a", DataType: tensor.FP32, Dims: []int64{-1, 500}}, {Name: "b", DataType: tensor.FP32, Dims: []int64{-1, 500}}}} // 2 000 each, 4 000 together
	g := &gpuletRun{id: "gpu0-100-1"}
	n.router.install(map[string][]routeEntry{"lenet5": {{g: g, weight: 1}}, "pair": {{g: g, weight: 1}}})

	require.False(t, n.modelReady("lenet5"))
	require.Equal(t, stateUnservable, n.modelState("lenet5", n.router.models()))
	require.True(t, strings.HasPrefix(n.notReadyReason("lenet5"), `every request is refused: input "input" alone takes 3136 bytes`), n.notReadyReason("lenet5"))
	require.True(t, n.readyIn("lenet5", n.router.models()), "it is still routed: a reorganization waits for it as for any other")
	require.True(t, n.modelReady("pair"), "over the limit in a body, within it through shared memory")
	require.Equal(t, stateReady, n.modelState("pair", n.router.models()))

	raised := cfg
	raised.Limits.MaxRequestBody = 64 << 20
	n.cfg.Store(&raised)
	require.True(t, n.modelReady("lenet5"))
	require.Equal(t, stateReady, n.modelState("lenet5", n.router.models()))
}
