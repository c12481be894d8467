package daemon

import (
	"bytes"
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/connlimit"
	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/kserve"
)

func TestBesideRatioLearnsFromAnswers(t *testing.T) {
	for _, tc := range []struct {
		name    string
		learned [][2]int64 // body, beside
		want    float64
	}{
		{"nothing answered yet: what JSON text decodes to at most", nil, unknownBesideRatio},
		{"the first answer replaces it", [][2]int64{{1000, 8000}}, 8},
		{"a larger one replaces it at once", [][2]int64{{1000, 2000}, {1000, 6000}}, 6},
		{"a smaller one moves it an eighth of the way", [][2]int64{{1000, 8000}, {1000, 0}}, 7},
		{"an empty body teaches nothing", [][2]int64{{0, 5000}}, unknownBesideRatio},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r besideRatios
			k := besideKey{"m", formJSON}
			for _, l := range tc.learned {
				r.learn(k, l[0], l[1])
			}
			require.InDelta(t, tc.want, r.ratio(k), 1e-9)
			require.InDelta(t, unknownBesideRatio, r.ratio(besideKey{"other", formJSON}), 1e-9, "each model learns its own")
			require.InDelta(t, unknownBesideRatio, r.ratio(besideKey{"m", formBinary}), 1e-9, "and each form of its requests")
		})
	}
}

// besideNode is a node with budgets of size bytes for bodies and for what
// requests hold beside them, and a model of it with a 5 s SLO.
func besideNode(size int64) (*node, *repository.Model) {
	n := &node{bodies: connlimit.NewBudget(size), besides: connlimit.NewBudget(size)}
	c := config.Default()
	n.cfg.Store(&c)
	m := &repository.Model{Name: "tokens"}
	m.Config.SLO = config.Duration(5 * time.Second)
	return n, m
}

// outputOf is an output of size bytes.
func outputOf(size int) []tensor.Tensor {
	return []tensor.Tensor{{Name: "y", DataType: tensor.Uint8, Shape: []int64{int64(size)}, Data: make([]byte, size)}}
}

// A request whose decoded inputs and outputs come to more than its
// estimate takes the rest at once, past the budget, and the next request's
// estimate waits until that answer is written; the next estimate is what
// it held.
func TestWhatARequestHoldsBesideItsBodyIsCounted(t *testing.T) {
	const mib = 1 << 20
	n, m := besideNode(mib)
	const body = 10 << 10
	est := n.besideEstimate(m, formJSON, body)
	require.EqualValues(t, unknownBesideRatio*body, est, "before any answer")
	held, ierr := n.holdBeside(context.Background(), m, est, time.Now())
	require.Nil(t, ierr)
	settled := n.settleBeside(m, formJSON, body, est, &kserve.Request{DecodedBytes: 80 << 10}, &executed{outs: outputOf(mib)})
	require.EqualValues(t, 80<<10+mib, n.besides.InUse(), "its decoded inputs and outputs, past the budget")
	require.EqualValues(t, 80<<10+mib, n.heldByModel()["tokens"])

	next := n.besideEstimate(m, formJSON, body)
	require.EqualValues(t, n.besides.MaxBody(), next, "what one request held beside its body, at most what one holding takes")
	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	m.Config.SLO = config.Duration(50 * time.Millisecond)
	_, ierr = n.holdBeside(short, m, 1, time.Now())
	require.NotNil(t, ierr, "a byte waits while the answer is unwritten")
	require.Equal(t, reasonMemoryBudget, ierr.reason)
	require.Contains(t, ierr.msg, "beside their bodies")
	require.EqualValues(t, 1, n.budgetRefused())

	settled()
	held()
	require.Zero(t, n.besideInUse(), "given back once written")
	// A request with its inputs in shared memory holds what its regions
	// hold, whatever its body: it is counted, and teaches nothing.
	n.settleBeside(m, formBinary, body, 0, &kserve.Request{}, &executed{outs: outputOf(body / 2)})()
	require.EqualValues(t, body/2, n.besideEstimate(m, formBinary, body))
	taken := n.settleBeside(m, formBinary, 300, 0, &kserve.Request{ShmBytes: 4 << 10}, &executed{})
	require.EqualValues(t, 4<<10, n.besideInUse())
	taken()
	require.EqualValues(t, body/2, n.besideEstimate(m, formBinary, body), "learned from the binary request alone")
	again, ierr := n.holdBeside(context.Background(), m, next, time.Now())
	require.Nil(t, ierr)
	again()
}

// Requests whose bodies fill the bodies' budget, each waiting for room
// beside its body while holding it, are all served in turn: a request with
// room beside its body never waits for a body's room, so the two budgets
// cannot be filled by requests that wait on each other. A body still
// arriving holds nothing beside it.
func TestRequestsWaitingForRoomBesideTheirBodiesAreServedInTurn(t *testing.T) {
	const mib = 1 << 20
	n, m := besideNode(mib)
	const body, beside = 40 << 10, 320 << 10 // 16 bodies fill the bodies' bulk; 2 fit beside
	n.besideRatio.learn(besideKey{m.Name, formJSON}, body, beside)

	type result struct {
		ierr     *inferError
		overfull bool
	}
	results := make(chan result, 16)
	var releases []func()
	for range 16 {
		req := httptest.NewRequest("POST", "/v2/models/tokens/infer", bytes.NewReader(make([]byte, body)))
		got, release, ierr := n.readBody(req, m, time.Now())
		require.Nil(t, ierr, "16 bodies of 40 KiB fit")
		require.Len(t, got, body)
		releases = append(releases, release)
	}
	require.Zero(t, n.besideInUse(), "bodies read hold nothing beside them yet")
	for _, release := range releases {
		go func() {
			// The body is given back before the result is sent, so that
			// the last result finds everything given back.
			est := n.besideEstimate(m, formJSON, body)
			held, ierr := n.holdBeside(context.Background(), m, est, time.Now())
			if ierr != nil {
				release()
				results <- result{ierr: ierr}
				return
			}
			overfull := n.besideInUse() > mib-mib/4 // large holdings fill three quarters at most
			time.Sleep(2 * time.Millisecond)        // run and write the answer
			n.settleBeside(m, formJSON, body, est, &kserve.Request{}, &executed{outs: outputOf(beside)})()
			held()
			release()
			results <- result{overfull: overfull}
		}()
	}
	for range 16 {
		r := <-results
		require.Nil(t, r.ierr, "every request is served: %s", r.ierr.message())
		require.False(t, r.overfull, "never more beside the bodies than the budget")
	}
	require.Zero(t, n.besideInUse())
	require.Zero(t, n.bodies.InUse())
}

// A pipeline request holds beside its body what its steps wrote until it
// is answered, not only its outputs: a step's output that the pipeline
// does not answer (an intermediate tensor, or an output not asked for)
// counts, an output answered as a step wrote it counts once.
func TestAPipelineHoldsWhatItsStepsWrote(t *testing.T) {
	cp := newCachePipeline(t)
	cp.p.Outputs = append(cp.p.Outputs, repository.TensorSpec{Name: "mid", DataType: tensor.FP32, Dims: []int64{250}})
	cp.a.Outputs = append(cp.a.Outputs, repository.TensorSpec{Name: "z", DataType: tensor.FP32, Dims: []int64{250}})
	cp.p.Config.Ensemble.Steps[0].Outputs["z"] = "mid"
	cp.n.sendStep = func(_ context.Context, _ []*repository.Model, _ *gpuletRun, ins []tensor.Tensor, _ []string, _ time.Time) (*executed, *repository.Model, *gpuletRun, *inferError) {
		y := tensor.Tensor{Name: "y", DataType: tensor.FP32, Shape: []int64{1, 2}, Data: ins[0].Data[:8]}
		z := tensor.Tensor{Name: "z", DataType: tensor.FP32, Shape: []int64{1, 250}, Data: make([]byte, 1000)}
		return &executed{outs: []tensor.Tensor{y, z}, batch: 1}, cp.a, &gpuletRun{}, nil
	}
	for _, tc := range []struct {
		name    string
		outputs []string
		interim int64
	}{
		{"both answered", nil, 0},
		{"the large one not asked for", []string{"out"}, 1000},
		{"the small one not asked for", []string{"mid"}, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := &kserve.Request{Inputs: []tensor.Tensor{fp32("in", []int64{1, 4}, make([]byte, 16)...)}}
			for _, o := range tc.outputs {
				req.Outputs = append(req.Outputs, kserve.OutputRequest{Name: o})
			}
			res, ierr := cp.n.execute(context.Background(), cp.p, req, time.Now())
			require.Nil(t, ierr)
			require.Equal(t, tc.interim, res.interim)
			n := &node{besides: connlimit.NewBudget(1 << 20)}
			n.settleBeside(cp.p, formBinary, 100, 0, req, res)()
			var outs int64
			for _, o := range res.outs {
				outs += int64(len(o.Data))
			}
			require.InDelta(t, float64(outs+tc.interim)/100, n.besideRatio.ratio(besideKey{"p", formBinary}), 1e-9, "learned beside each body byte")
		})
	}
}
