package main

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpulet/gpuletd/daemon"
	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor/onnxrt"
)

// newModelsCheckCmd checks a model repository offline, as serve would read
// it, without a daemon.
func newModelsCheckCmd(g *globalFlags) *cobra.Command {
	var (
		asJSON bool
		ccs    []string
	)
	cmd := &cobra.Command{
		Use:   "check [DIR...]",
		Short: "Check model repositories as serve would read them, without a daemon",
		Long: `Read the model repositories (each DIR, else the configured model_repository
and extra_model_repositories) as gpuletd serve reads them, without starting
anything: every folder either serves —
its versions, SLO and where it came from, largest batch, inputs and outputs
(read from the model files), and the configuration fields that take no effect
— or is broken, with why. Each model file is also loaded in ONNX Runtime,
which serve leaves to the executors, so a file the runtime cannot load is
found here before a server finds it. A pipeline lists its steps.
Exits 1 when a folder cannot be served, so it fits a deployment's checks
before the files are copied to a server. On the server, gpuletd models load
MODEL --dry-run asks the running daemon too: whether its GPUs and latency
profiles can serve the folder at the SLO it gives, and where it would go.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := g.loadConfig()
			if err != nil {
				return err
			}
			dirs := l.Config.ModelRepositories()
			if len(args) > 0 {
				dirs = args
			}
			lib, err := onnxrt.FindLibrary(l.Config.ONNXRuntime.Library)
			if err == nil {
				err = onnxrt.Init(lib)
			}
			if err != nil {
				return fmt.Errorf("check model repository: ONNX Runtime reads the model files: %w", err)
			}
			if cmd.Flags().Changed("compute-capability") {
				if ccs, err = computeCapabilities(ccs); err != nil {
					return err
				}
			} else {
				ccs = daemon.CapabilitiesHere(l.Config)
			}
			ix, err := daemon.ScanRepository(dirs, l.Config, "", ccs)
			if err != nil {
				return err
			}
			r := checkReport(ix, l.Config.StartupModels, int64(l.Config.Limits.MaxRequestBody))
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				if err := enc.Encode(r); err != nil {
					return err
				}
			} else if err := writeCheck(cmd.OutOrStdout(), r); err != nil {
				return err
			}
			if len(r.Broken) > 0 {
				return &exitError{code: 1, msg: fmt.Sprintf("gpuletd models check: %d of %d folder(s) in %s cannot be served", len(r.Broken), r.Folders, r.Where())}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().StringSliceVar(&ccs, "compute-capability", nil, `read the folders as on NVIDIA GPUs of these compute capabilities ("9.0"; "" for none), for config.pbtxt's cc_model_filenames; by default this machine's GPUs that serve would use`)
	return cmd
}

// computeCapabilities checks --compute-capability's values, leaving out
// empty ones, and sorts them as serve has them.
func computeCapabilities(given []string) ([]string, error) {
	var out []string
	for _, cc := range given {
		switch {
		case cc == "" || slices.Contains(out, cc):
		case !repository.IsComputeCapability(cc):
			return nil, fmt.Errorf("--compute-capability %q: give major.minor, as NVIDIA lists them (\"8.0\" for an A100, \"9.0\" for an H100)", cc)
		default:
			out = append(out, cc)
		}
	}
	slices.Sort(out)
	return out, nil
}

// repoCheck is what `gpuletd models check` found: the repository judged as
// serve would (the folder counts, what cannot be served, startup_models),
// and each servable.
type repoCheck struct {
	*daemon.ModelsReport
	// Models are the servables, by name (a folder's older versions served
	// beside its newest are entries of their own).
	Models []checkedModel `json:"models"`
}

// checkedModel is one servable of the repository.
type checkedModel struct {
	Name     string `json:"name"`
	Folder   string `json:"folder"`
	Version  int    `json:"version"`
	Platform string `json:"platform,omitempty"`
	// File is the model file served, in the folder ("1/model.onnx"); none
	// for a pipeline.
	File         string   `json:"file,omitempty"`
	SLO          string   `json:"slo"`
	SLOSource    string   `json:"slo_source"`
	MaxBatchSize int      `json:"max_batch_size"`
	Steps        []string `json:"steps,omitempty"`
	// Beside marks the steps that run at once with the one before them.
	Beside  []bool                  `json:"beside,omitempty"`
	Inputs  []repository.TensorSpec `json:"inputs"`
	Outputs []repository.TensorSpec `json:"outputs"`
	// ProfileShapes are the dims the dynamic inputs are profiled at
	// (profile_shapes, or a config.pbtxt's model_warmup).
	ProfileShapes map[string][]int64 `json:"profile_shapes,omitempty"`
	Notes         []string           `json:"notes,omitempty"`
	// Sequences is a stateful model's sequence batching: the inputs gpuletd
	// fills (left out of Inputs), how many sequences may be live and how
	// long one may idle.
	Sequences *checkedSequences `json:"sequences,omitempty"`
	// OpLibraries are the custom operator libraries ONNX Runtime loads
	// before it opens the model (model_operations), and GraphOptimization
	// the graph optimizations it runs when not all ("basic", "extended").
	OpLibraries       []string `json:"op_libraries,omitempty"`
	GraphOptimization string   `json:"graph_optimization,omitempty"`
	// PriorityLevels and DefaultPriority are the model's priority levels
	// (dynamic_batching), 0 when it has none.
	PriorityLevels  int `json:"priority_levels,omitempty"`
	DefaultPriority int `json:"default_priority_level,omitempty"`
	// QueuePolicies are its config.pbtxt's queue policies that ask
	// something.
	QueuePolicies []repository.QueuePolicyStatus `json:"queue_policies,omitempty"`
}

// checkedSequences is a stateful model's sequence batching in a check.
type checkedSequences struct {
	Controls []string `json:"controls,omitempty"`
	States   []string `json:"states,omitempty"`
	MaxLive  int      `json:"max_live"`
	Idle     string   `json:"idle"`
}

func checkReport(ix *repository.Index, startup []string, maxRequestBody int64) repoCheck {
	r := repoCheck{ModelsReport: daemon.RepositoryReport(ix, startup, maxRequestBody)}
	for _, name := range ix.Names() {
		m := ix.Models[name]
		if _, broken := r.Broken[m.Family]; broken && m.Config.Ensemble != nil {
			continue // a pipeline whose step cannot be served: listed as broken alone
		}
		c := checkedModel{Name: m.Name, Folder: m.Family, Version: m.Version, Platform: m.Platform,
			SLO: m.Config.SLO.D().String(), SLOSource: m.SLOSource, MaxBatchSize: m.Config.MaxBatchSize,
			Inputs: repository.RequestTensors(m.Inputs), Outputs: repository.RequestTensors(m.Outputs), ProfileShapes: m.Config.ProfileShapes, Notes: m.Notes}
		c.OpLibraries, c.GraphOptimization = m.OpLibraries, m.Config.GraphLevel.Limit()
		if rel, err := filepath.Rel(m.Dir, m.File); err == nil && m.File != "" {
			c.File = filepath.ToSlash(rel)
		}
		if m.Config.PriorityLevels > 1 {
			c.PriorityLevels, c.DefaultPriority = m.Config.PriorityLevels, m.Config.DefaultPriority
		}
		c.QueuePolicies = repository.QueuePolicies(m.Config)
		if s := m.Config.Sequence; s != nil {
			c.Sequences = &checkedSequences{MaxLive: s.MaxSequences, Idle: s.Idle.String()}
			for _, ctl := range s.Controls {
				c.Sequences.Controls = append(c.Sequences.Controls, ctl.Input)
			}
			for _, st := range s.States {
				c.Sequences.States = append(c.Sequences.States, st.Input)
			}
		}
		if e := m.Config.Ensemble; e != nil {
			branches := e.Branches()
			for _, s := range e.Steps {
				c.Steps = append(c.Steps, s.StepKey())
				if branches {
					c.Beside = append(c.Beside, s.Beside)
				}
			}
		}
		r.Models = append(r.Models, c)
	}
	return r
}

// writeCheck prints the servables as a table, then their notes and
// warnings, then the broken folders.
func writeCheck(w io.Writer, r repoCheck) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "MODEL\tVERSION\tSLO\tMAX BATCH\tINPUTS\tOUTPUTS")
	for _, m := range r.Models {
		batch := fmt.Sprint(m.MaxBatchSize)
		if m.MaxBatchSize == 0 {
			batch = "- (no batch dimension)"
		}
		ins, outs := tensorsText(m.Inputs, m.ProfileShapes), tensorsText(m.Outputs, nil)
		if len(m.Steps) > 0 {
			ins, outs = "pipeline: "+chainText(m.Steps, m.Beside), ""
		}
		fmt.Fprintf(tw, "%s\t%d\t%s (%s)\t%s\t%s\t%s\n", m.Name, m.Version, m.SLO, m.SLOSource, batch, ins, outs)
	}
	if len(r.Models) == 0 {
		fmt.Fprintln(tw, "(none)")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, m := range r.Models {
		if s := m.Sequences; s != nil {
			fills := strings.Join(append(slices.Clone(s.Controls), s.States...), ", ")
			fmt.Fprintf(w, "%s: stateful (sequence_batching): requests give sequence_id; gpuletd fills %s; at most %d sequences live, each ended after %s idle\n",
				m.Name, orDash(fills), s.MaxLive, s.Idle)
		}
		if t := runtimeText(m.OpLibraries, m.GraphOptimization); t != "" {
			fmt.Fprintf(w, "%s: onnxruntime: %s\n", m.Name, t)
		}
		if m.PriorityLevels > 1 {
			fmt.Fprintf(w, "%s: priority: %s\n", m.Name, priorityText(m.PriorityLevels, m.DefaultPriority))
		}
		if q := queuePolicyText(m.QueuePolicies); q != "" {
			fmt.Fprintf(w, "%s: queue policy: %s\n", m.Name, q)
		}
		for _, n := range m.Notes {
			fmt.Fprintf(w, "%s: %s\n", m.Name, n)
		}
	}
	for _, name := range r.WarningNames() {
		fmt.Fprintf(w, "%s: warning: %s\n", name, r.Warnings[name])
	}
	for _, name := range r.BrokenNames() {
		fmt.Fprintf(w, "%s: BROKEN: %s\n", name, r.Broken[name])
	}
	writeStartupPlan(func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }, r.ModelsReport)
	fmt.Fprintln(w, r.Summary())
	return nil
}

// writeStartupPlan says, a line each, what startup_models leaves out of the
// repository and which of its names have no folder there, and which folders
// model_config_name picks a custom configuration of, or that it picks none.
func writeStartupPlan(line func(format string, args ...any), m *daemon.ModelsReport) {
	if len(m.NotLoaded) > 0 {
		line("not served at start (startup_models): %s", strings.Join(m.NotLoaded, ", "))
	}
	for _, name := range m.StartupUnknown {
		line("warning: startup_models names %s, which has no folder there", name)
	}
	if m.ConfigNameNote != "" {
		line("%s", m.ConfigNameNote)
	}
	if m.ConfigNameWarning != "" {
		line("warning: %s", m.ConfigNameWarning)
	}
}

// tensorsText writes tensors as NAME DATATYPE[dims], comma-separated, and
// the dims an input is profiled at where profiled gives them.
func tensorsText(ts []repository.TensorSpec, profiled map[string][]int64) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = fmt.Sprintf("%s %s%v", t.Name, t.DataType, t.Dims)
		if dims, ok := profiled[t.Name]; ok {
			parts[i] += fmt.Sprintf(" profiled at %v", dims)
		}
	}
	return strings.Join(parts, ", ")
}
