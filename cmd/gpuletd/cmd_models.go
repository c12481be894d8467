package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpulet/gpuletd/daemon"
	"github.com/gpulet/gpuletd/internal/bytefmt"
	"github.com/gpulet/gpuletd/kserve"
	"github.com/gpulet/gpuletd/modelzoo"
	"github.com/gpulet/gpuletd/profiler/store"
	"github.com/gpulet/gpuletd/sim/loadgen"
	"github.com/spf13/cobra"
)

func newModelsCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "models",
		Short: "Make a demo model repository; list, show, load and unload a daemon's models",
	}
	cmd.AddCommand(newModelsSynthCmd(), newModelsCheckCmd(g), newModelsListCmd(g), newModelsShowCmd(g), newModelsLoadCmd(g), newModelsUnloadCmd(g), newModelsUnquarantineCmd(g))
	return commandGroup(cmd)
}

func newModelsListCmd(g *globalFlags) *cobra.Command {
	var (
		url    string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the models a running daemon serves",
		Long: `List a running daemon's models (GET /api/v1/models): measured and assigned
rate, SLO, recent SLO attainment and p50/p99 latency, and the gpu-lets each
is placed on; then its pipelines, their steps and why one cannot run (--json
gives the models alone, as /api/v1/models does).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, err := g.daemonOf(cmd, url)
			if err != nil {
				return err
			}
			if asJSON {
				var raw json.RawMessage
				if err := adminGet(cmd.Context(), d, "/api/v1/models", &raw); err != nil {
					return err
				}
				return printRaw(cmd.OutOrStdout(), raw)
			}
			var s adminStatus // its models are /api/v1/models
			if err := adminGet(cmd.Context(), d, "/api/v1/status", &s); err != nil {
				return err
			}
			return writeServables(cmd.OutOrStdout(), &s)
		},
	}
	addDaemonFlags(cmd, &url, &asJSON)
	return cmd
}

func newModelsShowCmd(g *globalFlags) *cobra.Command {
	var (
		url    string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "show MODEL",
		Short: "Show one model of a running daemon",
		Long: `Show one model of a running daemon (GET /api/v1/models/MODEL and its
profile): file, SLO, inputs and outputs, rates, recent latency, placement and
the device types it has latency profiles for; for a pipeline (an ensemble), its
steps, SLO, rate, the accuracy it serves at, recent latency and its inputs and
outputs.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: g.completeModelArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := g.daemonOf(cmd, url)
			if err != nil {
				return err
			}
			path := "/api/v1/models/" + neturl.PathEscape(args[0])
			events := func() error {
				// As kubectl describe ends: what happened to it lately.
				var evs []daemon.EventDoc
				q := neturl.Values{"model": {args[0]}, "limit": {strconv.Itoa(recentModelEvents)}}
				evErr := adminGet(cmd.Context(), d, "/api/v1/events?"+q.Encode(), &evs)
				return writeRecentEvents(cmd.OutOrStdout(), args[0], evs, evErr, time.Local)
			}
			var raw json.RawMessage
			if err := adminFetch(cmd.Context(), d, path, &raw); err != nil {
				var he *loadgen.HTTPError
				if errors.As(err, &he) && he.Code == http.StatusServiceUnavailable && !asJSON {
					// A model that cannot be served: its events after
					// why (a skipped repository entry's problem, its
					// executor's failures).
					_ = events()
				}
				return d.fail(err)
			}
			if asJSON {
				return printRaw(cmd.OutOrStdout(), raw)
			}
			var doc adminModelShow
			if err := json.Unmarshal(raw, &doc); err != nil {
				return fmt.Errorf("decode model: %w", err)
			}
			if doc.Pipeline != nil {
				if err := writePipelineShow(cmd.OutOrStdout(), &doc); err != nil {
					return err
				}
			} else {
				var prof adminProfiles // best effort: the table says when it is missing
				if err := adminGet(cmd.Context(), d, path+"/profile", &prof); err != nil {
					prof.Error = err.Error()
				}
				doc.batches = batchesOf(cmd.Context(), d, doc.Model)
				if err := writeModelShow(cmd.OutOrStdout(), &doc, &prof); err != nil {
					return err
				}
			}
			return events()
		},
	}
	addDaemonFlags(cmd, &url, &asJSON)
	return cmd
}

// adminModelShow is GET /api/v1/models/{m}.
type adminModelShow struct {
	Model   adminModel    `json:"model"`
	Inputs  []adminTensor `json:"inputs"`
	Outputs []adminTensor `json:"outputs"`
	File    string        `json:"file"`
	SHA256  string        `json:"sha256"`
	Bytes   int64         `json:"bytes"`
	// ExternalData are the files beside File the model keeps tensors in.
	ExternalData []string `json:"external_data"`
	Profile      string   `json:"profile"` // the reference curve on emulated GPUs; empty without them
	// Pipeline is set, in place of Model, for a pipeline (an ensemble).
	Pipeline *adminPipeline `json:"pipeline"`
	// batches are the model's batches by size since it was loaded, from
	// the statistics extension (batch_stats); nil when they could not be
	// read.
	batches []kserve.BatchStatistics
}

// adminTensor is one input or output.
type adminTensor struct {
	Name     string  `json:"name"`
	DataType string  `json:"datatype"`
	Shape    []int64 `json:"shape"`
}

// adminProfiles is GET /api/v1/models/{m}/profile, shortened.
type adminProfiles struct {
	Profiles []struct {
		DeviceType string            `json:"device_type"`
		Points     []json.RawMessage `json:"points"`
		KneeSize   int               `json:"knee_size"`
		// MemoryMB is what the planner counts for one copy; MemorySource
		// where it comes from ("" from a daemon that does not say).
		MemoryMB     float64 `json:"memory_mb"`
		MemorySource string  `json:"memory_source"`
		Unfinished   *struct {
			Status  string `json:"status"`
			Message string `json:"message"`
			Fix     string `json:"fix"`
		} `json:"unfinished"`
		Borrowed *struct {
			FromSHA256 string `json:"from_sha256"`
			Fix        string `json:"fix"`
		} `json:"borrowed"`
		InputsAt string `json:"inputs_at"`
	} `json:"profiles"`
	Error string `json:"-"`
}

// writeTensorTable prints, after a blank line, a model's or pipeline's
// inputs and outputs.
func writeTensorTable(w io.Writer, d *adminModelShow) error {
	fmt.Fprintln(w)
	tw := newTable(w)
	fmt.Fprintln(tw, "TENSOR\tNAME\tDATATYPE\tSHAPE")
	for _, t := range d.Inputs {
		fmt.Fprintf(tw, "input\t%s\t%s\t%v\n", t.Name, t.DataType, t.Shape)
	}
	for _, t := range d.Outputs {
		fmt.Fprintf(tw, "output\t%s\t%s\t%v\n", t.Name, t.DataType, t.Shape)
	}
	return tw.Flush()
}

// writePipelineShow prints one pipeline: a key-value block and its
// tensors.
func writePipelineShow(w io.Writer, d *adminModelShow) error {
	p := d.Pipeline
	tw := newTable(w)
	ready := "yes"
	if !p.Ready {
		ready = "no: " + orDash(p.Reason)
	}
	fmt.Fprintf(tw, "pipeline\t%s\n", p.Name)
	fmt.Fprintf(tw, "steps\t%s\n", p.stepsText())
	fmt.Fprintf(tw, "slo\t%s\n", sloText(p.SLOMS))
	writeWrappedRow(tw, "ready", ready)
	fmt.Fprintf(tw, "rate\t%s\n", perSecond(p.Rate))
	fmt.Fprintf(tw, "accuracy\t%s\n", p.accuracyText())
	if mix := p.mixText(); mix != "" {
		fmt.Fprintf(tw, "variants\t%s\n", mix)
	}
	if r := p.Recent; r.Requests > 0 {
		fmt.Fprintf(tw, "recent\t%d requests, %s within the SLO\n", r.Requests, percent(r.Attainment))
		fmt.Fprintf(tw, "latency\tp50 %s, p99 %s\n", millis(r.P50MS), millis(r.P99MS))
	} else {
		fmt.Fprintf(tw, "recent\tno requests\n")
	}
	writeCacheRow(tw, p.Cache)
	for _, warning := range p.Warnings {
		if p.Ready || warning != p.Reason { // the ready row says it
			writeWrappedRow(tw, "warning", warning)
		}
	}
	for _, note := range p.ConfigNotes {
		writeWrappedRow(tw, "note", note)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return writeTensorTable(w, d)
}

// writeCacheRow prints the cache row of a model or pipeline that enables
// the response cache (c nil: none).
func writeCacheRow(w io.Writer, c *adminCache) {
	switch {
	case c == nil:
	case c.Off != "":
		fmt.Fprintf(w, "cache\t%s\n", c.text())
	default:
		fmt.Fprintf(w, "cache\t%s (response cache)\n", c.text())
	}
}

// writeModelShow prints one model: a key-value block, its tensors and its
// profiles.
func writeModelShow(w io.Writer, d *adminModelShow, prof *adminProfiles) error {
	m := d.Model
	tw := newTable(w)
	ready := "no"
	if m.Ready {
		ready = "yes"
	} else if m.Reason != "" {
		ready = "no: " + m.Reason
	}
	fmt.Fprintf(tw, "model\t%s (version %d)\n", m.Name, m.Version)
	fmt.Fprintf(tw, "file\t%s\n", orDash(d.File))
	if len(d.ExternalData) > 0 {
		fmt.Fprintf(tw, "external data\t%s (weights kept beside the file)\n", strings.Join(d.ExternalData, ", "))
	}
	if d.Bytes > 0 {
		fmt.Fprintf(tw, "size\t%s\n", bytefmt.Size(d.Bytes))
	}
	if m.Runtime != nil && d.SHA256 != "" { // the digest profiles key on, not the file's own
		fmt.Fprintf(tw, "sha256\t%s (of the file with how ONNX Runtime opens it, below)\n", d.SHA256)
	} else {
		fmt.Fprintf(tw, "sha256\t%s\n", orDash(d.SHA256))
	}
	if d.Profile != "" { // only on a node with emulated GPUs
		fmt.Fprintf(tw, "emulated as\t%s\n", d.Profile)
	}
	fmt.Fprintf(tw, "slo\t%s (from %s)\n", millis(m.SLOMS), orDash(m.SLOFrom))
	fmt.Fprintf(tw, "config\t%s\n", orDash(strings.Join(m.ConfigFiles, ", ")))
	fmt.Fprintf(tw, "max batch\t%d\n", m.MaxBatchSize)
	if m.MaxQueue > 0 {
		fmt.Fprintf(tw, "max queue\t%d requests in each gpu-let\n", m.MaxQueue)
	}
	if m.PriorityLevels > 1 {
		writeWrappedRow(tw, "priority", priorityText(m.PriorityLevels, m.DefaultPriority))
	}
	if q := queuePolicyText(m.QueuePolicies); q != "" {
		writeWrappedRow(tw, "queue policy", q)
	}
	if m.Sequences != nil {
		writeWrappedRow(tw, "sequences", m.Sequences.text())
	}
	if r := m.Runtime; r != nil {
		writeWrappedRow(tw, "onnxruntime", runtimeText(r.OpLibraries, r.GraphOptimization))
	}
	writeWrappedRow(tw, "ready", ready)
	fmt.Fprintf(tw, "placed on\t%s\n", orDash(strings.Join(m.Placed, ", ")))
	fmt.Fprintf(tw, "rate\t%s measured, %s assigned\n", perSecond(m.Rate), perSecond(m.AssignedRate))
	if m.ExtraHeadroom > 0 {
		writeWrappedRow(tw, "headroom", extraHeadroomText(m.ExtraHeadroom))
	}
	if t := m.requestsText(time.Now()); t != "" {
		writeWrappedRow(tw, "requests", t)
	}
	if m.Unscheduled > 0 {
		fmt.Fprintf(tw, "unscheduled\t%s has no gpu-let\n", perSecond(m.Unscheduled))
	}
	if r := m.Recent; r.Requests > 0 {
		fmt.Fprintf(tw, "recent\t%d requests, %s within the SLO, mean batch %.1f\n", r.Requests, percent(r.Attainment), r.MeanBatch)
		fmt.Fprintf(tw, "latency\tp50 %s, p99 %s\n", millis(r.P50MS), millis(r.P99MS))
	} else {
		fmt.Fprintf(tw, "recent\tno requests\n")
	}
	if t := batchesText(d.batches); t != "" {
		writeWrappedRow(tw, "batches", t)
	}
	writeCacheRow(tw, m.Cache)
	for _, warning := range m.Warnings {
		if m.Ready || warning != m.Reason { // the ready row says it
			writeWrappedRow(tw, "warning", warning)
		}
	}
	for _, note := range m.ConfigNotes {
		writeWrappedRow(tw, "note", note)
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	if err := writeTensorTable(w, d); err != nil {
		return err
	}

	fmt.Fprintln(w)
	if prof.Error != "" {
		fmt.Fprintf(w, "profiles: unknown (%s)\n", prof.Error)
		return nil
	}
	tw = newTable(w)
	fmt.Fprintln(tw, "PROFILED ON\tPOINTS\tKNEE\tMEMORY")
	for _, p := range prof.Profiles {
		knee := "-"
		if p.KneeSize > 0 {
			knee = fmt.Sprintf("%d%%", p.KneeSize)
		}
		mem := "-"
		if p.MemorySource != "" {
			mem = fmt.Sprintf("%.0f MB (%s)", p.MemoryMB, p.MemorySource)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", p.DeviceType, len(p.Points), knee, mem)
	}
	if len(prof.Profiles) == 0 {
		fmt.Fprintln(tw, "(no device type yet)")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, p := range prof.Profiles {
		if u := p.Unfinished; u != nil {
			fmt.Fprintf(w, "%s: the last profile run is %s (%s); `%s` completes the profile\n", p.DeviceType, u.Status, u.Message, u.Fix)
		}
		if b := p.Borrowed; b != nil {
			fmt.Fprintf(w, "%s: placed with the profile of the file this one replaced (sha256 %.12s) until `%s` measures its own\n", p.DeviceType, b.FromSHA256, b.Fix)
		}
		if p.InputsAt != "" {
			fmt.Fprintf(w, "%s: inputs measured at %s (profile_shapes)\n", p.DeviceType, p.InputsAt)
		}
	}
	return nil
}

// recentModelEvents is how many of a model's events models show prints.
const recentModelEvents = 5

// writeRecentEvents ends models show with the newest of the model's
// events (evs, or why they could not be read: err), in loc.
func writeRecentEvents(w io.Writer, model string, evs []daemon.EventDoc, err error, loc *time.Location) error {
	fmt.Fprintln(w)
	if err != nil {
		_, err = fmt.Fprintf(w, "events: unknown (%v)\n", err)
		return err
	}
	fmt.Fprintf(w, "EVENTS (the newest; all: gpuletd events --model %s)\n", model)
	out := eventPrinter{w: w, loc: loc, filter: store.EventFilter{Model: model}}
	if !slices.ContainsFunc(evs, out.picks) {
		_, err = fmt.Fprintln(w, "(none recorded)")
		return err
	}
	return out.print(evs) // its own only: a daemon before the filter lists others too
}

func newModelsSynthCmd() *cobra.Command {
	var (
		models   []string
		seed     uint64
		force    bool
		triton   bool
		external bool
		pipeline string
		crowd    bool
	)
	cmd := &cobra.Command{
		Use:   "synth DIR",
		Short: "Write a demo model repository of ONNX graphs with seeded random weights",
		Long: fmt.Sprintf(`Write a model repository into DIR: <model>/config.yaml and <model>/1/model.onnx
for each model. The graphs are real ONNX models (LeNet-5, ResNet-18-style,
VGG-style, MLP) with random weights drawn from --seed: the same seed writes
byte-identical files. They are not pretrained. With --triton each model gets
the config.pbtxt Triton would have instead (no SLO: serve it with default_slo
or GPULETD_DEFAULT_SLO set). With --external-data each model keeps its
weights in model.onnx.data beside model.onnx (ONNX's external data, as
exporters write large models).

--pipeline SLO writes the example pipeline instead: a Triton ensemble %q
with end-to-end SLO SLO whose detector-like model %q finds %d objects in
each input and whose classifier-like model %q scores every one of them,
with a cheaper variant %q (declared accuracy %.2f, not measured) that
gpuletd serves some objects with when the full pipeline cannot keep up.
With --crowd it writes %q instead, whose detector-like model %q finds one
object in every 16 values of its input (as many as the input holds: fan-outs
of thousands of rows), each scored by %q.

--models picks which models to write: of the demo set (all of it by default),
%s; and small models whose tensors take other forms (several
inputs, scalars, no batching, FP16, BF16, INT64, strings), %s; and %q, a
stateful model (Triton's sequence batching, always a config.pbtxt): the
running sum of a sequence's requests.`, modelzoo.PipelineName, modelzoo.DetectorModel, modelzoo.PipelineObjects, modelzoo.ClassifierModel, modelzoo.LiteClassifierModel, modelzoo.LiteAccuracy,
			modelzoo.CrowdPipelineName, modelzoo.CrowdModel, modelzoo.ClassifierModel,
			strings.Join(modelzoo.DemoModels(), ", "), strings.Join(modelzoo.FormModels(), ", "), modelzoo.SequenceModel),
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if pipeline != "" && external {
				return fmt.Errorf("synth pipeline: --external-data writes the demo models only; leave it out with --pipeline")
			}
			if crowd && pipeline == "" {
				return fmt.Errorf("synth: --crowd picks which pipeline --pipeline writes; give --pipeline SLO too")
			}
			if pipeline != "" {
				return synthPipeline(cmd, args[0], seed, pipeline, crowd, force, models)
			}
			var opts []modelzoo.WriteOption
			if force {
				opts = append(opts, modelzoo.WithOverwrite())
			}
			if triton {
				opts = append(opts, modelzoo.AsTriton())
			}
			if external {
				opts = append(opts, modelzoo.WithExternalData())
			}
			if err := modelzoo.WriteRepository(args[0], models, seed, opts...); err != nil {
				if errors.Is(err, modelzoo.ErrRepositoryNotEmpty) {
					return fmt.Errorf("%s is not empty: choose an empty directory or pass --force", args[0])
				}
				return err
			}
			names := models
			if len(names) == 0 {
				names = modelzoo.DemoModels()
			}
			cmd.Printf("wrote %d models to %s: %v\n", len(names), args[0], names)
			if slices.Contains(names, modelzoo.CustomOpModel) {
				cmd.Printf("%s: its config.pbtxt names %s, its operator's library, which is not written: it serves once that file is there (docs/BENCHMARKS.md, \"A model with a custom operator\", builds one)\n",
					modelzoo.CustomOpModel, modelzoo.CustomOpLibrary)
			}
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&models, "models", nil, "models to write (default: the demo set)")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "seed of the random weights")
	cmd.Flags().BoolVar(&force, "force", false, "write into a directory that is not empty")
	cmd.Flags().BoolVar(&triton, "triton", false, "write Triton's config.pbtxt (without an SLO) instead of config.yaml")
	cmd.Flags().BoolVar(&external, "external-data", false, "keep each model's weights in model.onnx.data beside its model.onnx (ONNX's external data)")
	cmd.Flags().StringVar(&pipeline, "pipeline", "", "write the example pipeline (a Triton ensemble) with this end-to-end SLO, e.g. 50ms")
	cmd.Flags().BoolVar(&crowd, "crowd", false, "with --pipeline: write the pipeline whose detector finds as many objects as its input holds")
	return cmd
}

// synthPipeline writes modelzoo's example pipeline with its models and the
// classifier's cheaper variant into dir.
func synthPipeline(cmd *cobra.Command, dir string, seed uint64, slo string, crowd, force bool, models []string) error {
	if len(models) > 0 {
		return fmt.Errorf("synth pipeline: --models and --pipeline write different repositories; pass one")
	}
	if d, err := time.ParseDuration(slo); err != nil || d <= 0 {
		return fmt.Errorf("synth pipeline: --pipeline takes the end-to-end SLO as a duration such as 50ms, not %q", slo)
	}
	if !force {
		if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
			return fmt.Errorf("%s is not empty: choose an empty directory or pass --force", dir)
		}
	}
	if crowd {
		if err := modelzoo.WriteCrowdPipeline(dir, seed, slo); err != nil {
			return err
		}
		cmd.Printf("wrote pipeline %s (SLO %s) to %s: %s -> %s\n"+
			"its models carry Triton's config.pbtxt without an SLO: serve them with default_slo or GPULETD_DEFAULT_SLO set\n",
			modelzoo.CrowdPipelineName, slo, dir, modelzoo.CrowdModel, modelzoo.ClassifierModel)
		return nil
	}
	if err := modelzoo.WritePipeline(dir, seed, slo, true); err != nil {
		return err
	}
	cmd.Printf("wrote pipeline %s (SLO %s) to %s: %s -> %s, variant %s\n"+
		"its models carry Triton's config.pbtxt without an SLO: serve them with default_slo or GPULETD_DEFAULT_SLO set\n",
		modelzoo.PipelineName, slo, dir, modelzoo.DetectorModel, modelzoo.ClassifierModel, modelzoo.LiteClassifierModel)
	return nil
}
