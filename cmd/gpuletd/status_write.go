package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/internal/bytefmt"
)

// uptime writes how long a daemon has run to the minute, or to the second
// in its first minute: 45s, 12m, 3h12m, 4d3h.
func uptime(d time.Duration) string {
	switch {
	case d < time.Minute:
		return d.Round(time.Second).String()
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
	return fmt.Sprintf("%dd%dh", int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour))
}

// writeStatus prints the status as a header and three tables.
func writeStatus(w io.Writer, base string, s *adminStatus) error {
	state := "not ready"
	if s.Ready {
		state = "ready"
	}
	if s.Started != nil && !s.Started.IsZero() {
		state += fmt.Sprintf(", up %s (since %s)", uptime(time.Since(*s.Started)), s.Started.Local().Format(time.DateTime))
	}
	fmt.Fprintf(w, "gpuletd %s at %s: %s\n", s.Version, base, state)
	switch {
	case s.GRPCListen == nil:
	case *s.GRPCListen == "":
		fmt.Fprintln(w, "gRPC off (grpc_listen is empty)")
	default:
		fmt.Fprintf(w, "gRPC on %s (inference.GRPCInferenceService, grpc.health.v1.Health)\n", *s.GRPCListen)
	}
	if s.MetricsListen != "" {
		fmt.Fprintf(w, "metrics also on %s (/metrics alone)\n", s.MetricsListen)
	}
	if s.ModelConfigName != "" {
		fmt.Fprintf(w, "model configurations: configs/%s.pbtxt where a folder has one (model_config_name)\n", s.ModelConfigName)
	}
	fmt.Fprintf(w, "policy %s, placement %s, %s, %s\n", s.Policy, s.Algorithm,
		counted(s.Reorganizations, "reorganization"), counted(s.Restarts, "executor restart"))
	if old := olderPolicies(s); len(old) > 0 {
		fmt.Fprintf(w, "  still on an earlier policy (the reload could not switch them: see the events): %s\n", strings.Join(old, ", "))
	}
	if line := s.Connections.words(); line != "" {
		writeWrappedLine(w, line)
	}
	if line := s.RequestBytes.words(); line != "" {
		writeWrappedLine(w, line)
	}
	if p := s.RecentProblems; p != nil && p.Warnings+p.Errors > 0 {
		var what []string
		if p.Warnings > 0 {
			what = append(what, counted(p.Warnings, "warning"))
		}
		if p.Errors > 0 {
			what = append(what, counted(p.Errors, "error"))
		}
		window := p.Window // 1h0m0s, as Go writes durations: 1h
		if strings.HasSuffix(window, "m0s") {
			window = strings.TrimSuffix(window, "0s")
		}
		if strings.HasSuffix(window, "h0m") {
			window = strings.TrimSuffix(window, "0m")
		}
		words := "last " + window
		if window == "1h" {
			words = "last hour"
		}
		fmt.Fprintf(w, "%s: %s; gpuletd events --severity warning --since %s\n", words, strings.Join(what, ", "), window)
	}
	switch {
	case s.PlanAt != nil:
		fmt.Fprintf(w, "plan of %s (%s)\n", s.PlanAt.Local().Format("2006-01-02 15:04:05"), orDash(s.PlanReason))
		if s.Plan != nil && s.Plan.Spread {
			writeWrappedLine(w, spreadWords)
		}
		if s.Capacity != nil {
			fmt.Fprintln(w, s.Capacity.words(s.Plan != nil && s.Plan.Spread))
		}
		if p := s.RequestPath; p != nil {
			writeWrappedLine(w, p.words())
		}
	default:
		fmt.Fprintln(w, "no plan yet")
	}
	switch e := s.Engine; {
	case e.Reason != "":
		fmt.Fprintf(w, "serving on the CPU: %s\n  fix: %s\n", e.Reason, e.Fix)
	case e.UsingGPUs:
		fmt.Fprintf(w, "%d NVIDIA GPU(s), execution provider %s\n", e.GPUs, e.Provider)
		if e.Asked != "" {
			fmt.Fprintf(w, "  not %s as configured: %s\n", e.Asked, e.ProviderNote)
			if e.ProviderFix != "" {
				fmt.Fprintf(w, "  fix: %s\n", e.ProviderFix)
			}
		}
	}
	if s.Store.Reason != "" {
		fmt.Fprintf(w, "READ-ONLY: %s\n", s.Store.Reason)
	}
	if c := s.Cache; c != nil {
		fmt.Fprintf(w, "response cache: %s of %s, %s\n", bytefmt.Size(c.Bytes), config.ByteSize(c.Budget), counted(c.Entries, "answer"))
	}
	if m := s.Memory; m != nil {
		writeWrappedLine(w, m.words())
	}
	if c := s.CPUMemory; c != nil {
		writeWrappedLine(w, c.words())
	}
	if t := s.TLS; t != nil {
		clients := ""
		if t.ClientCertificates {
			clients = ", client certificates required"
		}
		fmt.Fprintf(w, "TLS: %s, valid until %s%s\n", t.Subject, t.NotAfter.UTC().Format(time.DateOnly), clients)
	}
	if len(s.NotReadyFor) > 0 {
		fmt.Fprintf(w, "not ready (strict_readiness) while these cannot be served: %s\n", strings.Join(s.NotReadyFor, ", "))
	}
	if len(s.NotLoaded) > 0 {
		fmt.Fprintf(w, "in the repository, not loaded (startup_models; gpuletd models load NAME): %s\n", strings.Join(s.NotLoaded, ", "))
	}
	if len(s.Unloaded) > 0 {
		fmt.Fprintf(w, "unloaded (gpuletd models load NAME): %s\n", strings.Join(s.Unloaded, ", "))
	}
	if p := s.Profiling; p != nil {
		fmt.Fprintln(w, p.words())
	}
	for _, b := range s.ProfiledBeside {
		fmt.Fprintln(w, b.words())
	}
	if len(s.WaitingFor) > 0 {
		fmt.Fprintf(w, "waiting for: %s\n", strings.Join(s.WaitingFor, ", "))
	}

	fmt.Fprintln(w)
	tw := newTable(w)
	fmt.Fprintln(tw, "DEVICE\tKIND\tTYPE\tBACKEND\tHEALTH\tMEMORY\tNAME")
	for _, d := range s.Devices {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", d.ID, d.Kind, d.Type, orDash(d.Backend), orDash(d.Health), d.memoryText(s.CPUMemory), clip(d.Name, 28))
		if d.MIG != nil {
			for _, in := range d.MIG.Instances {
				use := "free"
				if in.Leased > 0 {
					use = fmt.Sprintf("%d%% leased", in.Leased)
				}
				if in.MPSPipeDir != "" {
					use += ", MPS inside"
				}
				fmt.Fprintf(tw, "  %s\t\t\t%s\t%s\t\t%s\n", in.Profile, "mig instance", use, in.UUID)
			}
		}
	}
	if len(s.Devices) == 0 {
		fmt.Fprintln(tw, "(none)")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, d := range s.Devices {
		if line := d.cpuLimitText(); line != "" {
			fmt.Fprintln(w, line)
		}
		if line := d.loadText(); line != "" {
			fmt.Fprintln(w, line)
		}
		if d.HealthDetail != "" {
			writeWrappedLine(w, fmt.Sprintf("%s %s: %s", d.ID, d.Health, d.HealthDetail))
		}
	}

	fmt.Fprintln(w)
	tw = newTable(w)
	fmt.Fprintln(tw, "GPU-LET\tSIZE\tSTATE\tBUSY\tMEMORY\tMODEL\tBATCH\tPLANNED\tMEAN BATCH")
	for _, g := range s.Gpulets {
		state := g.State
		if g.Restarts > 0 {
			state = fmt.Sprintf("%s (%s)", g.State, counted(int64(g.Restarts), "restart"))
		}
		lead := fmt.Sprintf("%s\t%d%%\t%s\t%s\t%s", g.ID, g.Size, state, percent(g.BusyRatio), g.memoryText())
		if len(g.Models) == 0 {
			fmt.Fprintf(tw, "%s\t-\t\t\t\n", lead)
		}
		for i, m := range g.Models {
			if i > 0 {
				lead = "\t\t\t\t"
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", lead, m.Name, m.Batch, perSecond(m.Rate), meanBatch(m.Requests, m.MeanBatch))
		}
	}
	if len(s.Gpulets) == 0 {
		fmt.Fprintln(tw, "(none)")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, g := range s.Gpulets {
		if g.NextTry != nil {
			fmt.Fprintf(w, "%s: its executor died; tried again at %s (gpuletd events --kind executor_restart says why)\n", g.ID, g.NextTry.Local().Format(time.TimeOnly))
		}
		if g.Stalled != nil {
			writeWrappedLine(w, fmt.Sprintf("%s: its executor has sent nothing since %s, with requests waiting (stopped, starved or stuck): its models' requests go to their other gpu-lets, and its health checks restart it if it stays silent",
				g.ID, g.Stalled.Local().Format("15:04:05.000")))
		}
		for _, m := range g.Models {
			if m.Failed > 0 {
				writeWrappedLine(w, fmt.Sprintf("%s on %s: %s", m.Name, g.ID, failedWords(m.Failed, m.Received)))
			}
			if m.SlowBatches {
				writeWrappedLine(w, fmt.Sprintf("%s on %s: %s", m.Name, g.ID, slowBatchWords(m.BatchTimeFactor)))
			}
		}
	}

	fmt.Fprintln(w)
	return writeServables(w, s)
}

// writeServables prints the models table, then the pipelines' where there
// are any.
func writeServables(w io.Writer, s *adminStatus) error {
	if err := writeModels(w, s.Models); err != nil {
		return err
	}
	if len(s.Pipelines) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	return writePipelines(w, s.Pipelines)
}
