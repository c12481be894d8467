package daemon

import (
	"context"
	"fmt"
	"slices"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/gpulet"
)

// A load that would take a serving model out of service.
//
// A load replaces what a model serves with what its folder (or the
// request) holds now. A configuration this node can never serve, an SLO
// no batch meets on any of its gpu-lets or a copy larger than any
// gpu-let's memory, reads as valid: the load went through, and the model
// that served a moment before was left unservable until its folder was
// mended. Triton keeps the version it serves when a load of a model fails;
// so does gpuletd here: such a load fails as a folder that does not read
// does (400, a warning event, the folder's reason in the repository
// index), and the model serves on as it was loaded before.

// replacementCheck is what a load of name checks the versions it read with
// before they replace those served (catalog.load's check): nil when name
// serves nothing now. A new model, or one not served already, is loaded
// and says why it is not served, as before.
func (n *node) replacementCheck(ctx context.Context, name string) func([]*repository.Model) error {
	old, ok := n.catalog.get(name)
	if !ok || old.Config.Ensemble != nil || !n.modelReady(name) {
		return nil
	}
	return n.servableCheck(ctx)
}

// servableCheck fails versions of which one, not a pipeline, fits no
// gpu-let of the node even alone (ErrInvalidModel, with why).
func (n *node) servableCheck(ctx context.Context) func([]*repository.Model) error {
	return func(ms []*repository.Model) error {
		for _, m := range ms {
			if m.Config.Ensemble != nil {
				continue
			}
			if why := n.unplaceableAlone(ctx, m); why != "" {
				return fmt.Errorf("%w: %s as it reads now cannot be served on this node: %s", repository.ErrInvalidModel, m.Name, why)
			}
		}
		return nil
	}
}

// unplaceableAlone says why no gpu-let of the node could take m even with
// the node to itself; "" when one could, or when m has no latency profile
// to tell by (a new file: it is measured and then placed or refused, as a
// new model is).
func (n *node) unplaceableAlone(ctx context.Context, m *repository.Model) string {
	in, _ := n.planInputOf(ctx, []*repository.Model{m}, map[string]float64{m.Name: 1})
	if len(in.Demands) == 0 || len(in.GPUs) == 0 {
		return ""
	}
	algo := n.algorithm()
	p, err := gpulet.Run(ctx, algo, in, n.plannerOptions(algo))
	if err != nil || !slices.Contains(p.Unplaceable, m.Name) {
		return ""
	}
	return p.Reasons[m.Name]
}
