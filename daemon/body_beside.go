package daemon

import (
	"context"
	"sync"
	"time"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/kserve"
)

// What a request holds in memory beside its body: the inputs decoded from
// its JSON values or typed gRPC contents or copied out of shared memory,
// and its outputs until its answer is written. These have a budget of
// their own, as large as the bodies' (limits.max_inflight_bytes), so that
// a request waits for it holding its body while no request that holds room
// beside its body ever waits for a body's room: neither budget can be
// filled by requests that each wait on the other. Nothing is known of them
// before the request is decoded and run, and decoded it holds them; so
// once its body is read, before it is decoded, a request takes an
// estimate, from what its model's requests held beside each byte of body
// before, and once it has run takes at once what it holds past it. A body
// still arriving holds nothing beside it: a client that trickles a body
// with a large declared length keeps no one else waiting for more than it
// has sent.

// besideForm is how a request's tensors travel, which sets much of what
// it holds beside each byte of its body: JSON values decode to several
// times their text, binary data is the body's own.
type besideForm uint8

const (
	formJSON      besideForm = iota // a REST body of JSON alone
	formBinary                      // a REST body with binary data
	formGRPCRaw                     // a gRPC message with raw_input_contents
	formGRPCTyped                   // a gRPC message with typed contents
)

// besideKey is whose ratio one is: a model's requests of one form.
type besideKey struct {
	model string
	form  besideForm
}

// besideRatios learns, for each model and form of request, how many bytes
// its requests hold beside each byte of their body. The zero value is
// ready.
type besideRatios struct {
	mu sync.Mutex
	of map[besideKey]float64
}

// unknownBesideRatio is what a model's requests are taken to hold beside
// each byte of body before one of them has run: JSON text decodes to at
// most four times its length (a one-digit INT64 value and its comma, two
// bytes, become eight).
const unknownBesideRatio = 4

// besideForget is how far a smaller ratio moves the learned one towards
// it: a larger one replaces it at once, so a model whose requests vary
// keeps room for its larger ones.
const besideForget = 1.0 / 8

// ratio is what k's requests are taken to hold beside each body byte.
func (r *besideRatios) ratio(k besideKey) float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if v, ok := r.of[k]; ok {
		return v
	}
	return unknownBesideRatio
}

// learn books that a request of k whose body had body bytes held beside
// bytes beside it.
func (r *besideRatios) learn(k besideKey, body, beside int64) {
	if body <= 0 {
		return
	}
	obs := float64(beside) / float64(body)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.of == nil {
		r.of = map[besideKey]float64{}
	}
	v, ok := r.of[k]
	if !ok || obs >= v {
		r.of[k] = obs
		return
	}
	r.of[k] = v + (obs-v)*besideForget
}

// retain forgets the ratios of the models keep refuses.
func (r *besideRatios) retain(keep func(model string) bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k := range r.of {
		if !keep(k.model) {
			delete(r.of, k)
		}
	}
}

// besideEstimate is what a request of m in form whose body has size bytes
// is taken to hold beside it: never more than one holding may take, so
// that no request is refused for its estimate alone.
func (n *node) besideEstimate(m *repository.Model, form besideForm, size int64) int64 {
	if size <= 0 || n.besides == nil {
		return 0
	}
	est := int64(n.besideRatio.ratio(besideKey{m.Name, form}) * float64(size))
	return max(0, min(est, n.besides.MaxBody()))
}

// holdBeside takes est, the estimate of what a request of m will hold
// beside its body, waiting for room at most until its SLO has passed.
func (n *node) holdBeside(ctx context.Context, m *repository.Model, est int64, arrival time.Time) (func(), *inferError) {
	return n.hold(ctx, n.besides, m, est, arrival, n.overBesides)
}

// settleBeside books what a request req of m in form whose body had body
// bytes held beside it once it ran (its inputs' bytes not the body's own,
// its outputs and, for a pipeline, what its steps wrote beside them: res)
// and takes at once, past the budget if need be, what that is over est,
// the estimate it holds. The caller gives it back with the estimate once
// the answer is written. A request with inputs in shared memory teaches
// nothing: what it holds follows its regions, not its body.
func (n *node) settleBeside(m *repository.Model, form besideForm, body, est int64, req *kserve.Request, res *executed) (release func()) {
	beside := req.DecodedBytes + req.ShmBytes + res.interim
	for _, t := range res.outs {
		beside += int64(len(t.Data))
	}
	if req.ShmBytes == 0 {
		n.besideRatio.learn(besideKey{m.Name, form}, body, beside)
	}
	if n.besides == nil {
		return func() {}
	}
	return n.besides.Take(m.Name, beside-est)
}

// besideInUse is what requests in flight hold beside their bodies now.
func (n *node) besideInUse() int64 {
	if n.besides == nil {
		return 0
	}
	return n.besides.InUse()
}

// budgetRefused is how many requests found no room for their body or for
// what it holds beside it since the start.
func (n *node) budgetRefused() int64 {
	r := n.bodies.Refused()
	if n.besides != nil {
		r += n.besides.Refused()
	}
	return r
}

// heldByModel is what each model's requests in flight hold now, bodies
// and what they hold beside them (models holding nothing left out).
func (n *node) heldByModel() map[string]int64 {
	held := n.bodies.Owners()
	if n.besides != nil {
		for m, b := range n.besides.Owners() {
			held[m] += b
		}
	}
	return held
}
