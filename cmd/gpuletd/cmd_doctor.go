package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpulet/gpuletd/daemon"
	"github.com/gpulet/gpuletd/internal/bytefmt"
)

func newDoctorCmd(g *globalFlags) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the driver, GPUs, MPS, ONNX Runtime, its GPU providers and CUDA libraries",
		Long: `Check what gpuletd needs to serve on this machine: the NVIDIA driver and NVML,
each GPU (name, UUID, memory, compute mode, MIG mode and instances), the MPS
control program and daemons, ONNX Runtime and whether its CUDA and TensorRT
providers load and run a model (each in a child process), the CUDA libraries
found or missing with how to get them, the devices serve would use with the
current configuration, the model repository as serve would read it, the
database in state_dir as serve would open it (not read while a daemon holds
it), and, as warnings, the configuration's warnings and the folders and
addresses serve needs (run as root: the state folder for the service's
gpuletd user too). Exits 1 when those devices cannot serve, or serve would
refuse the database.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := g.loadConfig()
			if err != nil {
				return err
			}
			if note := g.unreadInstalledNote(); note != "" {
				cmd.PrintErrln(note)
			}
			r := daemon.Doctor(cmd.Context(), daemon.DoctorOptions{Config: l.Config, ConfigWarnings: l.Warnings})
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(r); err != nil {
					return err
				}
			} else if err := writeDoctor(out, &r); err != nil {
				return err
			}
			switch {
			case r.TLS != nil && r.TLS.Error != "":
				return &exitError{code: 1, msg: "gpuletd doctor: serve would not start: " + r.TLS.Error}
			case r.Database != nil && r.Database.Problem != "":
				return &exitError{code: 1, msg: "gpuletd doctor: serve would not start: database " + r.Database.Path + ": " + r.Database.Problem}
			case !r.OK:
				return &exitError{code: 1, msg: "gpuletd doctor: the configured devices cannot serve: " + r.Serve.Error}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

// writeDoctor prints the report as a two-column table.
func writeDoctor(w io.Writer, r *daemon.Report) error {
	tw := newTable(w)
	row := func(k, format string, args ...any) { fmt.Fprintf(tw, "%s\t%s\n", k, fmt.Sprintf(format, args...)) }
	fix := func(f string) {
		if f != "" {
			row("", "fix: %s", f)
		}
	}
	for _, w := range r.ConfigWarnings {
		row("configuration", "warning: %s", w)
	}
	if d := r.Driver; d.Loaded {
		row("NVIDIA driver", "%s (NVML %s, CUDA %s)", orDash(d.Version), orDash(d.NVML), orDash(d.CUDA))
	} else {
		row("NVIDIA driver", "not found: %s", d.Error)
		fix(r.DriverFix)
	}
	for _, gpu := range r.Driver.GPUs {
		mig := "MIG off"
		if gpu.MIG != nil && gpu.MIG.Enabled {
			var insts []string
			for _, in := range gpu.MIG.Instances {
				insts = append(insts, in.Profile+" "+in.UUID)
			}
			mig = fmt.Sprintf("MIG on, %d instance(s)", len(insts))
			if len(insts) > 0 {
				mig += ": " + strings.Join(insts, ", ")
			}
		}
		row(gpu.ID, "%s %s, %.0f GiB, compute mode %s, %s, health %s", gpu.Name, gpu.UUID,
			float64(gpu.MemoryTotal)/(1<<30), orDash(gpu.ComputeMode), mig, gpu.Health)
		if gpu.HealthDetail != "" {
			row("", "%s: %s", gpu.Health, gpu.HealthDetail)
		}
	}
	if len(r.Driver.GPUs) == 0 {
		row("GPUs", "none")
	}
	if r.MPS.Path != "" {
		row("MPS control", "%s, %d control daemon(s) running", r.MPS.Path, len(r.MPS.Daemons))
	} else {
		row("MPS control", "%s not found", r.MPS.ControlBinary)
		fix(r.MPS.Fix)
	}
	if o := r.ONNXRuntime; o.Error == "" {
		row("ONNX Runtime", "%s at %s", o.Version, o.Library)
	} else {
		row("ONNX Runtime", "does not load: %s", o.Error)
	}
	for _, p := range r.Providers {
		switch {
		case p.Loads:
			row("provider "+p.Name, "loads and runs a model (%s)", p.Library)
		case p.FallsBackTo != "" && p.MissingLibrary != "":
			row("provider "+p.Name, "does not load (%s not found): %s serves alone instead", p.MissingLibrary, p.FallsBackTo)
		case p.FallsBackTo != "":
			row("provider "+p.Name, "does not load: %s serves alone instead: %s", p.FallsBackTo, p.Error)
		case !p.Installed:
			row("provider "+p.Name, "not installed (%s)", p.Library)
		case p.MissingLibrary != "":
			row("provider "+p.Name, "does not load: %s not found", p.MissingLibrary)
		default:
			row("provider "+p.Name, "does not load: %s", p.Error)
		}
		fix(p.Fix)
	}
	// Missing libraries with the same fix are listed together.
	var fixes []string
	missing := map[string][]string{}
	for _, l := range r.CUDALibraries {
		if l.Found() {
			row(l.Name, "%s", l.Path)
			continue
		}
		if _, ok := missing[l.Fix]; !ok {
			fixes = append(fixes, l.Fix)
		}
		missing[l.Fix] = append(missing[l.Fix], l.Name+" ("+l.For+")")
	}
	for _, f := range fixes {
		row("missing", "%s", strings.Join(missing[f], ", "))
		fix(f)
	}
	if t := r.TLS; t != nil {
		if t.Error != "" {
			row("TLS", "%s", t.Error)
		} else {
			row("TLS", "%s, %s, valid until %s", t.CertFile, t.Subject, t.NotAfter.UTC().Format(time.DateOnly))
			if t.Warning != "" {
				row("", "warning: %s", t.Warning)
			}
		}
		fix(t.Fix)
	}
	if t := r.Trace; t != nil {
		if t.OK {
			row("traces", "exported to %s (the collector takes them)", t.URL)
		} else {
			row("traces", "exported to %s, which does not take them: %s", t.URL, t.Error)
			fix(t.Fix)
		}
	}
	for _, f := range r.Folders {
		switch {
		case f.Problem != "":
			row(f.Field, "%s: warning for %s: %s", f.Path, f.For, f.Problem)
		case f.Serving != "":
			row(f.Field, "%s: %s serves there (a second serve needs another address)", f.Path, f.Serving)
		case f.Field == "listen" || f.Field == "grpc_listen" || f.Field == "metrics.listen":
			row(f.Field, "%s: free", f.Path)
		default:
			row(f.Field, "%s: %s may use it", f.Path, f.For)
		}
	}
	if db := r.Database; db != nil {
		switch {
		case db.Missing:
			row("database", "%s: none yet (serve makes it)", db.Path)
		case db.InUse != nil:
			row("database", "%s: in use by a running gpuletd%s, not read (gpuletd backup copies it)", db.Path, *db.InUse)
		case db.Problem != "":
			row("database", "%s: serve would refuse it: %s", db.Path, db.Problem)
			fix(db.Fix)
		case db.Unread != "":
			row("database", "%s: warning: not read here: %s", db.Path, db.Unread)
		default:
			row("database", "%s: %s", db.Path, describeDatabase(*db.Summary))
			if db.MigratesTo > 0 {
				row("", "serve migrates it from schema %d to %d (an older gpuletd then refuses it: gpuletd backup first)", db.Summary.SchemaVersion, db.MigratesTo)
			}
			if db.LastRun != "" {
				row("last run", "%s", db.LastRun)
			}
		}
	}
	if m := r.Memory; m != nil && m.TotalBytes > 0 {
		limit := "no memory limit over this process (under systemd serve runs in the unit's cgroup: systemctl show gpuletd -p MemoryMax)"
		if m.LimitBytes > 0 {
			limit = fmt.Sprintf("memory limit %s (cgroup %s)", bytefmt.Size(m.LimitBytes), m.LimitOf)
		}
		row("memory", "host %s; %s", bytefmt.Size(m.TotalBytes), limit)
		if m.CPUModels > 0 {
			row("", "the database's CPU models: %s measured, %s together (one copy each)", counted(m.CPUModels, "model"), bytefmt.Size(m.CPUModelsBytes))
		}
		if n := m.CPUModelsWithExecutor; n > 0 {
			row("", "%d of them measured before gpuletd told an executor's own memory apart: each counts it (tens of MB) until `gpuletd profile MODEL --force` measures it again", n)
		}
		if m.Warning != "" {
			row("", "warning: %s", m.Warning)
		}
	}
	if m := r.Models; m != nil {
		if len(m.Broken) > 0 {
			row("models", "warning: %s", m.Summary())
			fix("gpuletd models check " + strings.Join(m.Paths, " ") + " says why")
		} else {
			row("models", "%s", m.Summary())
		}
		writeStartupPlan(func(format string, args ...any) { row("", format, args...) }, m)
		for _, name := range m.WarningNames() {
			row("", "warning: %s: %s", name, m.Warnings[name])
		}
	}
	var use []string
	var limits []string
	for _, d := range r.Serve.Use {
		use = append(use, fmt.Sprintf("%s (%s, %s)", d.ID, d.Kind, d.Type))
		if d.CPULimit > 0 {
			limits = append(limits, cpuLimitWords(d.ID, d.Cores, d.OnlineCores, d.CPULimit))
		}
	}
	if r.Serve.Error != "" {
		row("serve", "devices %s: cannot serve: %s", r.Serve.Devices, r.Serve.Error)
	} else {
		row("serve", "devices %s: would use %s", r.Serve.Devices, strings.Join(use, ", "))
		for _, l := range limits {
			row("", "%s", l)
		}
		if r.Serve.Note != "" {
			row("", "%s", r.Serve.Note)
		}
	}
	return tw.Flush()
}
