package gpulet

import (
	"fmt"
	"strings"
)

// whyNoShare explains why model m, placed nowhere though a device has the
// memory for it, was left out, when the cause is time: every device it
// could run on has its whole share cut into gpu-lets, and each of those
// would break an SLO if it shared its duty cycle with m, whatever the
// rates. With batches of one a gpu-let's cycle holds at least one batch of
// every member, and each member's requests may wait one cycle before
// their batch: a member whose SLO less its own batch is shorter than the
// cycle's batches (m's included) cannot take m in. "" when that is not
// what kept m out (a share left free, a gpu-let where batches of one
// would fit, a MIG GPU whose instances are laid out apart).
func (s *state) whyNoShare(m *model, rate float64) string {
	var parts []string
	for _, g := range s.gpus {
		typ := g.rt.typ
		if m.profs[typ] == nil {
			continue
		}
		if g.rt.mig != nil || g.rt.remainder(g.sizes()) > 0 {
			return ""
		}
		for _, l := range g.lets {
			if len(l.members) == 0 {
				return ""
			}
			why := blockedShare(m, typ, l)
			if why == "" {
				return ""
			}
			parts = append(parts, fmt.Sprintf("%s %d%% (%s): %s", g.rt.g.ID, l.size, memberNames(l), why))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("%.4g req/s left over: every share of %s is cut into gpu-lets, and none can take %s in within the SLOs: %s",
		rate, theDevices(len(s.gpus)), m.name, strings.Join(parts, "; "))
}

// blockedShare says which SLO a gpu-let l of device type typ would break
// with m added to its members, at batches of one; "" when none would (or
// m has no latency at l's size, which the planner reports otherwise).
func blockedShare(m *model, typ int, l letSpec) string {
	mt := m.tab(typ, l.size)
	if mt == nil {
		return ""
	}
	// busy is the cycle's batches of one; worst the model with the least
	// room for it: its cycle bound less its own batch.
	busy := mt.lat[1]
	worst, room := m, m.cycleMax(mt.lat[1])
	for _, mb := range l.members {
		t := mb.m.tab(typ, l.size)
		if t == nil {
			return ""
		}
		busy += t.lat[1]
		if r := mb.m.cycleMax(t.lat[1]); r < room {
			worst, room = mb.m, r
		}
	}
	if busy <= room*(1+relTol) {
		return ""
	}
	if worst == m {
		return fmt.Sprintf("%s's own SLO of %.3g ms leaves at most %.3g ms for a cycle of batches, and a batch of one of each model there and of its own takes %.3g ms",
			m.name, m.slo, max(room, 0), busy)
	}
	return fmt.Sprintf("%s (SLO %.3g ms) may wait at most %.3g ms for a cycle of batches, and a batch of one of each model there and of %s (%.3g ms) takes %.3g ms",
		worst.name, worst.slo, max(room, 0), m.name, mt.lat[1], busy)
}

// memberNames lists a gpu-let's models.
func memberNames(l letSpec) string {
	names := make([]string, len(l.members))
	for i, mb := range l.members {
		names[i] = mb.m.name
	}
	return strings.Join(names, ", ")
}
