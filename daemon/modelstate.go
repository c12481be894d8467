package daemon

import (
	"cmp"
	"fmt"
	"maps"
	"sort"
	"sync"
)

// modelNotes holds one line of text per model of the repository. The node
// keeps three: why models are not served (a profile that failed, a plan
// that could not place them, a gpu-let that did not start; cleared when the
// model serves; broken repository entries are not there, the catalog's last
// scan holds them), how far the models on their way at start have come
// (profileMissing), and how far those measured beside the serving gpu-lets
// have (measureLive): the last two are on their way, waiting, not
// unservable.
type modelNotes struct {
	mu  sync.Mutex
	why map[string]string
}

func (u *modelNotes) set(name, reason string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.why == nil {
		u.why = map[string]string{}
	}
	u.why[name] = reason
}

func (u *modelNotes) clear(name string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.why, name)
}

func (u *modelNotes) reason(name string) string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.why[name]
}

// reset forgets every model's line.
func (u *modelNotes) reset() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.why = nil
}

func (u *modelNotes) all() map[string]string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return maps.Clone(u.why)
}

// notServedReason says why a model is not served: its repository entry is
// broken, or it failed on the way to a gpu-let; "" when nothing is known
// (it may be on its way).
func (n *node) notServedReason(name string) string {
	if p, ok := n.catalog.pipeline(name); ok {
		return n.pipelineNotServed(p)
	}
	if err := n.catalog.broken(name); err != nil {
		return "the model repository entry is broken: " + err.Error()
	}
	return n.unserved.reason(name)
}

// waitingReason is what a model that is on its way to a gpu-let says.
const waitingReason = "waiting for a gpu-let: the model is being profiled or placed"

// notReadyReason is what a model that does not serve says: why it cannot,
// or that it is on its way, and at start how far it has come.
func (n *node) notReadyReason(name string) string {
	if why := n.limitRefusal(name); why != "" {
		return why
	}
	if why := n.notServedReason(name); why != "" {
		return why
	}
	back, _ := n.comingBack(name, n.router.models())
	if where := cmp.Or(n.liveNotes.reason(name), back, n.progress.reason(name)); where != "" {
		return "waiting for a gpu-let: " + where
	}
	return waitingReason
}

// comingBack says why a model that served is not served for a while: the
// executor of a gpu-let routed to it died and is being started again
// (restarting), or a re-plan moves it and its new gpu-let starts once old
// ones have drained (the memory or cores they held); "" for any other
// model. routed is the router's models at one moment.
func (n *node) comingBack(name string, routed map[string][]*gpuletRun) (why string, restarting bool) {
	if n.readyIn(name, routed) {
		return "", false
	}
	for _, g := range routed[name] {
		if g.down.Load() && !g.draining.Load() {
			return "its executor on " + g.id + " died and is being started again (gpuletd events --kind executor_restart says why)", true
		}
	}
	for _, g := range routed[name] {
		if since := g.stalledSince(); !since.IsZero() && !g.draining.Load() {
			return fmt.Sprintf("its executor on %s has sent nothing since %s (stopped, starved or stuck); its health checks restart it if it stays silent", g.id, since.Format("15:04:05.000")), true
		}
	}
	if m := n.moving.Load(); m != nil && (*m)[name] {
		return "a re-plan moves it, and its new gpu-let starts once old ones have drained (the memory or cores they held)", false
	}
	return "", false
}

// readiness is the server's readiness: the first plan is applied (or its
// routes are being published: then a model not routed yet is waiting, so
// that the server is ready once the last model is, never after a client
// saw every model ready), the daemon is not stopping, and every model of
// the repository either serves or has a reason it cannot — with
// strict_readiness, serves. waiting lists the models still on their way,
// also before the first plan (while the models are profiled at start),
// and those on their way back (comingBack) when no model serves;
// with strict_readiness, unservable lists the models, pipelines and
// repository entries that cannot be served (nil without it: nothing then
// waits on them, and a load balancer's polls do not pay for the list).
func (n *node) readiness() (ready bool, waiting, unservable []string) {
	if n.stopping.Load() {
		return false, nil, nil
	}
	routed := n.router.models()
	strict := n.conf().StrictReadiness
	var back []string // models on their way back
	serves := false
	for _, m := range n.catalog.all() {
		// A model loaded while the node serves and measured beside the
		// serving gpu-lets does not take the node out of a load
		// balancer's rotation for the minute or two that takes, unless
		// strict_readiness asks that every model serve; nor, while other
		// models serve, does one on its way back: its executor died and
		// is being started again, or a re-plan moves it (seconds on a
		// GPU).
		switch state := n.modelState(m.Name, routed); {
		case state == stateReady:
			serves = true
		case state != stateWaiting:
		case strict:
			waiting = append(waiting, m.Name)
		default:
			if why, _ := n.comingBack(m.Name, routed); why != "" {
				back = append(back, m.Name)
			} else if n.liveNotes.reason(m.Name) == "" {
				waiting = append(waiting, m.Name)
			}
		}
	}
	if !serves {
		waiting = append(waiting, back...)
	}
	sort.Strings(waiting)
	if strict {
		for name, state := range n.repositoryStates() {
			if state == stateUnservable {
				unservable = append(unservable, name)
			}
		}
		sort.Strings(unservable)
	}
	ready = (n.ready.Load() || len(routed) > 0) && len(waiting) == 0 && len(unservable) == 0
	return ready, waiting, unservable
}

// clearUnserved forgets why a model folder's versions (family, or a
// version key) were not served, at a load that reads them anew.
func (n *node) clearUnserved(family string) {
	n.unserved.clear(family)
	for _, m := range n.catalog.all() {
		if m.Family == family {
			n.unserved.clear(m.Name)
		}
	}
}

// markServing clears the reasons of the models that serve now.
func (n *node) markServing() {
	routed := n.router.models()
	for name := range n.unserved.all() {
		if n.readyIn(name, routed) {
			n.unserved.clear(name)
		}
	}
}

// Model states as gpuletd_model_state reports them.
const (
	stateReady      = "ready"      // a gpu-let serves it
	stateWaiting    = "waiting"    // on its way: being profiled or placed
	stateUnservable = "unservable" // it cannot be served, for a reason said elsewhere
)

// modelStates lists the states; gpuletd_model_state has a series for each
// per model.
var modelStates = []string{stateReady, stateWaiting, stateUnservable}

// modelState is the state of one model or pipeline of the repository;
// routed is the router's models at one moment.
func (n *node) modelState(name string, routed map[string][]*gpuletRun) string {
	switch {
	case n.limitRefusal(name) != "":
		return stateUnservable
	case n.readyIn(name, routed):
		return stateReady
	case n.notServedReason(name) != "":
		return stateUnservable
	}
	return stateWaiting
}

// repositoryStates is the state of every model, pipeline and broken entry
// of the repository, by name.
func (n *node) repositoryStates() map[string]string {
	out := map[string]string{}
	routed := n.router.models()
	for _, m := range n.catalog.all() {
		out[m.Name] = n.modelState(m.Name, routed)
	}
	for _, p := range n.catalog.allPipelines() {
		out[p.Name] = n.modelState(p.Name, routed)
	}
	for _, name := range n.catalog.brokenNames() {
		out[name] = stateUnservable
	}
	return out
}
