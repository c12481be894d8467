package daemon

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/profiler/store"
	"go.uber.org/zap"
)

// applyToExecutors brings the running executors to the configuration's
// scheduling policy and queue bound after a reload (executors started
// later take both from their arguments): each switches its policy in
// place, and each model whose queue bound changed is loaded again with the
// new one, which only retunes it (its queue, sessions and calibration
// carry over). A gpu-let that could not follow is named in an event; its
// status keeps its old policy until a re-plan replaces it. It runs on the
// planner's goroutine, so no re-plan changes the gpu-lets meanwhile.
func (n *node) applyToExecutors(ctx context.Context) {
	cfg := n.conf()
	policy, server := cfg.Scheduler.Policy, cfg.Limits.MaxQueuedPerModel
	bound := func(name string) int32 {
		if m, ok := n.catalog.get(name); ok {
			return queueBound(m, server)
		}
		return int32(server)
	}
	var failed []string
	for _, g := range n.sup.list() {
		gctx, cancel := context.WithTimeout(ctx, followTimeout)
		err := g.follow(gctx, policy, bound)
		cancel()
		if err != nil {
			n.log.Warn("apply the reloaded configuration", zap.String("gpulet", g.id), zap.Error(err))
			failed = append(failed, err.Error())
		}
	}
	if len(failed) > 0 {
		sort.Strings(failed)
		n.events.add(EventConfigReload, store.SeverityWarning,
			"the reloaded policy or queue bound did not reach every running executor: "+strings.Join(failed, "; "), nil)
	}
}

// followTimeout bounds bringing one gpu-let to a reloaded configuration: a
// wedged executor must not hold the planner's goroutine (its health check
// restarts it, with the new arguments).
const followTimeout = 30 * time.Second

// follow switches g's executor to policy and each of its models to its
// queue bound (bound, by model) where they differ. An executor being
// restarted takes both from its arguments.
func (g *gpuletRun) follow(ctx context.Context, policy string, bound func(model string) int32) error {
	c := g.client()
	if c == nil {
		return nil
	}
	g.mu.Lock()
	cur := g.policy
	var retune []*pb.LoadModelRequest
	for _, m := range g.models {
		if q := bound(m.Name); m.MaxQueue != q {
			next := proto.Clone(m).(*pb.LoadModelRequest)
			next.MaxQueue = q
			retune = append(retune, next)
		}
	}
	g.mu.Unlock()
	if cur != policy {
		if err := c.SetPolicy(ctx, policy); err != nil {
			return fmt.Errorf("%s stays on policy %s: %w", g.id, cur, err)
		}
		g.mu.Lock()
		g.policy = policy
		g.mu.Unlock()
	}
	sort.Slice(retune, func(i, j int) bool { return retune[i].Name < retune[j].Name })
	for _, m := range retune {
		if err := g.loadModel(ctx, m); err != nil {
			return fmt.Errorf("%s keeps its old queue bound: %w", m.Name, err)
		}
	}
	return nil
}
