package daemon

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/gpulet/gpuletd/internal/bytefmt"
	"go.uber.org/zap"
)

// statusEvery is how often the line systemd shows is brought up to date.
const statusEvery = 5 * time.Second

// startExtension is how much longer systemd is asked to wait for READY=1 at
// every statusEvery while the daemon starts (EXTEND_TIMEOUT_USEC): six
// ticks, so that a tick late on a loaded machine does not end the start.
const startExtension = 6 * statusEvery

// reportStatus keeps systemd's STATUS= line (the "Status:" of systemctl
// status gpuletd) saying what the daemon does: what it waits for while it
// starts (profiling can take minutes before READY=1), then how many models
// serve where, at what rate and within their SLOs, and what is wrong. It
// sends a line only when it changed, and does nothing without
// NOTIFY_SOCKET. Until the daemon is ready it also extends systemd's start
// timeout (TimeoutStartSec=, 90 s unless set): a first start that profiles
// models on a GPU may take minutes, and systemd would kill it as hung. It
// returns when ctx ends.
func (n *node) reportStatus(ctx context.Context, log *zap.Logger) {
	if os.Getenv("NOTIFY_SOCKET") == "" {
		return
	}
	t := time.NewTicker(statusEvery)
	defer t.Stop()
	last := ""
	for {
		if line := n.status().Summary; line != last {
			notify(log, "STATUS="+line)
			last = line
		}
		if !n.ready.Load() {
			notify(log, fmt.Sprintf("EXTEND_TIMEOUT_USEC=%d", startExtension.Microseconds()))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// statusLine says s in one line: readiness and what it waits for, the
// models and gpu-lets that serve, the rate and the share of recent
// requests within their SLOs, and what an operator should look at (a
// node near its planned capacity, models that cannot be served, a
// database that cannot be written, executor restarts).
func statusLine(s status) string {
	var serving, unservable, back int
	var rate float64
	var requests, within float64
	waiting := map[string]bool{}
	for _, name := range s.WaitingFor {
		waiting[name] = true
	}
	for _, m := range s.Models {
		switch {
		case m.Ready:
			serving++
		case m.State == stateUnservable:
			unservable++
		case m.State == stateWaiting && !waiting[m.Name]:
			back++ // waiting without holding the node's readiness
		}
		rate += m.Rate
		requests += float64(m.Window.Requests)
		within += m.Window.Attainment * float64(m.Window.Requests)
	}
	devices := map[string]bool{}
	for _, g := range s.Gpulets {
		devices[g.Device] = true
	}
	var parts []string
	switch {
	case len(s.WaitingFor) > 0 && s.Profiling != nil:
		p := s.Profiling
		which := fmt.Sprintf("%d of %d", p.Profile, p.Of)
		if p.Beside {
			which = "beside the serving gpu-lets"
		}
		parts = append(parts, fmt.Sprintf("profiling %s on %s (%s); waiting for %s; %d of %d models serve",
			p.Model, p.Device, which, names(s.WaitingFor, 3), serving, len(s.Models)))
	case len(s.WaitingFor) > 0:
		parts = append(parts, fmt.Sprintf("waiting for %s (profiling or placing); %d of %d models serve",
			names(s.WaitingFor, 3), serving, len(s.Models)))
	case len(s.NotReadyFor) > 0:
		parts = append(parts, fmt.Sprintf("not ready (strict_readiness) while %s cannot be served", names(s.NotReadyFor, 3)))
	case !s.Ready:
		parts = append(parts, "not ready")
	default:
		parts = append(parts, fmt.Sprintf("ready: %s on %s of %s", plural(serving, "model"), plural(len(s.Gpulets), "gpu-let"), plural(len(devices), "device")))
	}
	if rate > 0 || requests > 0 {
		line := fmt.Sprintf("%.0f req/s", rate)
		if requests > 0 {
			line += fmt.Sprintf(", %.1f%% of recent requests within SLO", 100*within/requests)
		}
		parts = append(parts, line)
	}
	if c := s.Capacity; c != nil && !c.AtLeast && c.Ratio < nearCapacity {
		if c.Ratio < 1 {
			parts = append(parts, fmt.Sprintf("over its planned capacity: the GPUs place %.2f× the load planned for", c.Ratio))
		} else {
			parts = append(parts, fmt.Sprintf("near its planned capacity: the GPUs place %.2f× the load planned for", c.Ratio))
		}
	}
	if m := s.Memory; m != nil && m.NearLimit {
		parts = append(parts, fmt.Sprintf("memory at %.0f%% of its %s limit", 100*float64(m.WorkingSetBytes)/float64(m.LimitBytes), bytefmt.Size(m.LimitBytes)))
	}
	if unservable > 0 {
		parts = append(parts, plural(unservable, "model")+" cannot be served (gpuletd status says why)")
	}
	if back > 0 {
		parts = append(parts, plural(back, "model")+" waiting for a gpu-let while the others serve (gpuletd status says why)")
	}
	if !s.Store.Writable {
		parts = append(parts, "database read-only")
	}
	if s.Restarts > 0 {
		parts = append(parts, plural(int(s.Restarts), "executor restart"))
	}
	if p := s.RecentProblems; p.Warnings+p.Errors > 0 {
		var counts []string
		if p.Warnings > 0 {
			counts = append(counts, plural(p.Warnings, "warning"))
		}
		if p.Errors > 0 {
			counts = append(counts, plural(p.Errors, "error"))
		}
		parts = append(parts, strings.Join(counts, ", ")+" in the last hour (gpuletd events)")
	}
	return strings.Join(parts, "; ")
}

// nearCapacity is the planned capacity under which the status line says
// the node is near it (the alert GpuletdNearCapacity's threshold).
const nearCapacity = 1.25

// names lists at most most names, then how many more.
func names(all []string, most int) string {
	if len(all) <= most {
		return strings.Join(all, ", ")
	}
	return strings.Join(all[:most], ", ") + fmt.Sprintf(" and %d more", len(all)-most)
}

// plural is "1 thing" or "n things".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
