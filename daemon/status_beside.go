package daemon

import (
	"context"
	"time"
)

// besideProfile is a profile run another process measures now on this
// node's devices: `gpuletd profile` run beside the daemon, whose
// executors slow the serving gpu-lets while it runs (and they it).
type besideProfile struct {
	By string `json:"by"`
	// Models are the served models of the file measured; empty for a
	// file the daemon serves under no name.
	Models     []string  `json:"models"`
	SHA256     string    `json:"sha256"`
	DeviceType string    `json:"device_type"`
	Since      time.Time `json:"since"`
}

// besideTimeout bounds the look at the database a status takes for them.
const besideTimeout = 200 * time.Millisecond

// profiledBeside lists the profile runs other processes measure now; none
// when the database does not say in time.
func (n *node) profiledBeside(ctx context.Context) []besideProfile {
	if n.st == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, besideTimeout)
	defer cancel()
	runs, err := n.st.RunsOfOthers(ctx)
	if err != nil || len(runs) == 0 {
		return nil
	}
	served := n.catalog.all()
	out := make([]besideProfile, 0, len(runs))
	for _, r := range runs {
		p := besideProfile{By: r.By, Models: []string{}, SHA256: r.ModelSHA, DeviceType: r.DeviceType, Since: r.StartedAt}
		for _, m := range served {
			if m.SHA256 == r.ModelSHA {
				p.Models = append(p.Models, m.Name)
			}
		}
		out = append(out, p)
	}
	return out
}
