package daemon

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/mps"
	"github.com/gpulet/gpuletd/profiler/store"
)

// A model file replaced while the daemon serves it.
//
// Latency profiles are stored by the model file's sha256, so a file
// replaced in the repository and loaded again (new weights for a served
// model, the commonest update) has none of its own, and a model without a
// profile cannot be placed: the load would take a serving model out of
// service until its new file was measured (beside the serving gpu-lets,
// profile_live.go: seconds on a CPU, minutes on a GPU). Instead, a new
// file that is most likely the same network with other weights (the same
// inputs and outputs, and a file size within borrowSizeSlack of the old
// one's) is placed with the profile of the file it replaces, on every
// device type where it has none of its own, until it is measured: `gpuletd
// profile` stores its own, which then wins at the next plan. The
// executors' calibration follows whatever difference remains. The loan
// lives in memory only: a daemon started later measures the file, as any
// model without a profile.

// borrowSizeSlack is how far, relatively, a new file's size may be from the
// old one's for it to count as the same network with other weights: the
// weights dominate a model file, and retraining does not change their
// number (ResNet-18 and ResNet-50 take the same tensors but differ twofold).
const borrowSizeSlack = 0.1

// profileLoan says where a file's borrowed profile comes from.
type profileLoan struct {
	// From is the sha256 of the file whose profile is used.
	From string
}

// sameNetwork tells whether next, a new file for the model old served,
// most likely differs from it only in its weights.
func sameNetwork(old, next *repository.Model) bool {
	if old.Bytes <= 0 || next.Bytes <= 0 || old.Platform != next.Platform {
		return false
	}
	d := float64(next.Bytes-old.Bytes) / float64(old.Bytes)
	return d <= borrowSizeSlack && d >= -borrowSizeSlack &&
		reflect.DeepEqual(old.Inputs, next.Inputs) && reflect.DeepEqual(old.Outputs, next.Outputs)
}

// lend records that the file with sha256 to is planned with the profile of
// the file from (or of the file from itself borrows from).
func (b *profileBook) lend(from, to string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if l, ok := b.loans[from]; ok {
		from = l.From
	}
	if from != to {
		b.loans[to] = profileLoan{From: from}
	}
}

// loanOf returns the loan of the file with sha256 sha, if any.
func (b *profileBook) loanOf(sha string) (profileLoan, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	l, ok := b.loans[sha]
	return l, ok
}

// storedLatency is the stored profile of the file sha on device type dt,
// or, when it has none and borrows one, the profile it borrows; borrowed
// tells which.
func (b *profileBook) storedLatency(ctx context.Context, sha, dt string) (pts []store.LatencyPoint, borrowed bool, err error) {
	pts, err = b.st.Latency(ctx, sha, dt)
	if !errors.Is(err, store.ErrNotFound) {
		return pts, false, err
	}
	l, ok := b.loanOf(sha)
	if !ok {
		return nil, false, err
	}
	pts, err = b.st.Latency(ctx, l.From, dt)
	return pts, err == nil, err
}

// lendDevices are the measured devices, one per device type, on which
// next, loaded to replace old (nil: none), would be placed with old's
// profile: next is most likely the same network (sameNetwork), has no
// profile of its own there and old has one. None when it would not be lent.
func (n *node) lendDevices(ctx context.Context, old, next *repository.Model) []mps.Device {
	if old == nil || old.SHA256 == next.SHA256 || !sameNetwork(old, next) {
		return nil
	}
	var out []mps.Device
	seen := map[string]bool{}
	for _, d := range n.devices.Inventory().Devices {
		if d.Kind == mps.KindEmulated || seen[d.Type] {
			continue
		}
		seen[d.Type] = true
		if _, err := n.st.Latency(ctx, next.SHA256, d.Type); !errors.Is(err, store.ErrNotFound) {
			continue // its own, or a store error the plan reports
		}
		if _, _, err := n.book.storedLatency(ctx, old.SHA256, d.Type); err != nil {
			continue
		}
		out = append(out, d)
	}
	return out
}

// lendProfile lets next, loaded to replace old (the model's newest file
// until now), use old's profile on the measured devices where next has none
// of its own (lendDevices); it says so in an event per device type, with
// the command that measures next. It returns the device types lent.
func (n *node) lendProfile(ctx context.Context, old, next *repository.Model) []string {
	var lent []string
	for _, d := range n.lendDevices(ctx, old, next) {
		n.book.lend(old.SHA256, next.SHA256)
		lent = append(lent, d.Type)
		n.events.add(EventProfileJob, store.SeverityWarning,
			fmt.Sprintf("%s's new file (sha256 %.12s) has no latency profile on %s yet: it is placed with the profile of the file it replaces (sha256 %.12s), the same inputs and outputs and about the same size, until measured with `%s`",
				next.Name, next.SHA256, d.Type, old.SHA256, measureCommand(next, d)),
			map[string]string{"model": next.Name, "device": d.ID})
	}
	return lent
}

// measureCommand is the command that measures m's own profile on d (a
// missing, unfinished or borrowed one).
func measureCommand(m *repository.Model, d mps.Device) string {
	return fmt.Sprintf("gpuletd profile %s --device %s", m.Name, d.ID)
}
