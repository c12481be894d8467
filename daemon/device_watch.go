package daemon

import (
	"fmt"
	"slices"

	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/mps"
	"github.com/gpulet/gpuletd/profiler/store"
)

// Re-plan reasons of a device whose health changed while the daemon ran.
const (
	planDeviceFailed = "device failed"
	planDeviceBack   = "device back"
)

// deviceWatch follows the devices' health from one surge check to the
// next: a device that fails while the daemon runs (a GPU lost, fallen off
// the bus; its MPS control daemon gone) and one that serves again are each
// said once, and a plan that places gpu-lets on a failed device, or that
// was made without one now back, is planned again. Before, a GPU that
// failed kept its place in the plan in force until a period found the
// rates unserved, its gpu-lets restarting in vain meanwhile. The plan loop
// alone uses it.
type deviceWatch struct {
	seen   bool
	failed map[string]string // failed devices: their detail
}

// deviceChange is a device whose health changed: failed (with why) or
// back.
type deviceChange struct {
	device string
	failed bool
	why    string
}

// observe takes the devices' health now and returns what changed since
// the last call (nothing at the first: the start says what it found).
func (w *deviceWatch) observe(devs []mps.Device) []deviceChange {
	now := map[string]string{}
	for _, d := range devs {
		if d.Health == mps.HealthFailed {
			now[d.ID] = d.HealthDetail
		}
	}
	var out []deviceChange
	if w.seen {
		for _, d := range devs {
			why, failed := now[d.ID]
			if _, was := w.failed[d.ID]; failed != was {
				out = append(out, deviceChange{device: d.ID, failed: failed, why: why})
			}
		}
	}
	w.seen, w.failed = true, now
	return out
}

// replanFor says why changes call for a new plan, given the plan in force
// (nil: none); "" when they do not: no device the plan places gpu-lets on
// failed, and none came back.
func replanFor(changes []deviceChange, plan *gpulet.Plan) string {
	back := false
	for _, c := range changes {
		if !c.failed {
			back = true
			continue
		}
		if plan != nil && slices.ContainsFunc(plan.GPUs, func(g gpulet.GPUPlan) bool { return g.ID == c.device && len(g.GPULets) > 0 }) {
			return planDeviceFailed
		}
	}
	if back {
		return planDeviceBack
	}
	return ""
}

// words is the change said in an event.
func (c deviceChange) words() string {
	if c.failed {
		return fmt.Sprintf("%s failed: %s; the models placed on it are planned onto the other devices", c.device, c.why)
	}
	return fmt.Sprintf("%s serves again; planned with the others", c.device)
}

// deviceCheck reads the devices' health (the plan loop's surge check),
// says each change in an event and returns why the node re-plans for them
// ("": it need not).
func (n *node) deviceCheck() string {
	changes := n.devWatch.observe(n.devices.Inventory().Devices)
	for _, c := range changes {
		sev := store.SeverityInfo
		if c.failed {
			sev = store.SeverityError
			n.log.Error("device failed", zap.String("device", c.device), zap.String("why", c.why))
		} else {
			n.log.Info("device serves again", zap.String("device", c.device))
		}
		n.events.add(EventDevices, sev, c.words(), map[string]string{"device": c.device})
	}
	var plan *gpulet.Plan
	if cur := n.current.Load(); cur != nil {
		plan = cur.plan
	}
	return replanFor(changes, plan)
}
