package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/sim/workload"
	"github.com/spf13/cobra"
)

func newPlanCmd(g *globalFlags) *cobra.Command {
	var (
		file, algo, url string
		rates           []string
		asJSON          bool
	)
	cmd := &cobra.Command{
		Use:   "plan [--rate MODEL=REQ/S]... | [--workload] FILE",
		Short: "Show the plan a running daemon would apply, or plan a workload file",
		Long: `Ask a running gpuletd what it would run if it re-planned now (POST
/api/v1/plan/preview), at its estimated rates or at those --rate gives
(--rate resnet50=300 --rate ssd=40; models not named keep their estimate),
and what applying that plan would start, stop, load and unload. The plan is
the one a re-plan applies: every rate with the planner's headroom, each GPU's
layout where it moves the least. Nothing is applied. The daemon is found at
--url, or where the daemon holding the configured runtime_dir says it listens,
or at the configured listen address.

With --workload FILE (or FILE alone), plan the node a workload file
describes (devices, models, rates) instead, without a daemon.

--algo picks the planner: gpulet, gpulet-int, sbp or ideal (default the
daemon's, or the workload file's, else gpulet-int). Print a table, or JSON
with --json.`,
		Args: argsForFlag("workload", 1),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file != "" {
				if len(rates) > 0 || url != "" {
					return fmt.Errorf("plan: --workload plans a file's node at the file's rates; --rate and --url ask a running daemon")
				}
				p, err := workload.PlanFile(cmd.Context(), file, algo)
				if err != nil {
					return err
				}
				if asJSON {
					return p.WriteJSON(cmd.OutOrStdout())
				}
				return p.WriteTable(cmd.OutOrStdout())
			}
			asked, err := parseRates(rates)
			if err != nil {
				return err
			}
			d, err := g.daemonOf(cmd, url)
			if err != nil {
				return err
			}
			body, err := json.Marshal(map[string]any{"rates": asked, "algorithm": algo})
			if err != nil {
				return fmt.Errorf("encode preview request: %w", err)
			}
			code, raw, msg, err := adminCall(cmd.Context(), d, http.MethodPost, "/api/v1/plan/preview", "", body)
			if err != nil {
				return err
			}
			if code != http.StatusOK {
				return &exitError{code: 1, msg: "gpuletd: " + msg}
			}
			if asJSON {
				return printRaw(cmd.OutOrStdout(), raw)
			}
			var doc planPreview
			if err := json.Unmarshal(raw, &doc); err != nil {
				return fmt.Errorf("read preview: %w", err)
			}
			return doc.write(cmd.OutOrStdout(), asked)
		},
	}
	cmd.Flags().StringVar(&file, "workload", "", "plan this workload file (YAML) instead of asking a daemon")
	cmd.Flags().StringSliceVar(&rates, "rate", nil, "plan for this model's rate, MODEL=REQ/S (repeat it, or MODEL=R,MODEL=R)")
	cmd.Flags().StringVar(&algo, "algo", "", "planner: gpulet, gpulet-int, sbp or ideal (default: the daemon's, or the file's, else gpulet-int)")
	addURLFlag(cmd.Flags(), &url)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	_ = cmd.RegisterFlagCompletionFunc("rate", g.completeModelRates)
	_ = cmd.RegisterFlagCompletionFunc("algo", completeAlgos)
	return cmd
}

// parseRates reads --rate's MODEL=REQ/S pairs.
func parseRates(pairs []string) (map[string]float64, error) {
	out := map[string]float64{}
	for _, p := range pairs {
		name, v, ok := strings.Cut(p, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, fmt.Errorf("plan: --rate %q: want MODEL=REQ/S, as resnet50=300", p)
		}
		r, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || r < 0 || math.IsInf(r, 0) || math.IsNaN(r) {
			return nil, fmt.Errorf("plan: --rate %s: %q is not a rate: want requests per second, 0 or more", name, v)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("plan: --rate gives %s twice", name)
		}
		out[name] = r
	}
	return out, nil
}

// planPreview is the part of a plan preview's answer the table shows.
type planPreview struct {
	Plan     *gpulet.Plan `json:"plan"`
	Headroom float64      `json:"headroom"`
	MinRate  float64      `json:"min_rate"`
	// HeadroomPlaced is what the plan gives; Headroom what it plans for.
	HeadroomPlaced float64            `json:"headroom_placed"`
	Rates          map[string]float64 `json:"rates"`
	Unprofiled     map[string]string  `json:"unprofiled"`
	Steps          []string           `json:"steps"`
	Notes          []string           `json:"notes"`
	Unchanged      bool               `json:"unchanged"`
	Capacity       *adminCapacity     `json:"capacity"`
	Pipelines      map[string]struct {
		Plan *struct {
			Demand   float64 `json:"demand"`
			Scaling  string  `json:"scaling"`
			Workers  int     `json:"workers"`
			Accuracy float64 `json:"accuracy"`
		} `json:"plan"`
		Error string `json:"error"`
	} `json:"pipelines"`
}

// write prints the preview for people: the plan's table, the rates it was
// planned for (asked: those --rate gave), the models it left out, and what
// applying it would change.
func (p planPreview) write(w io.Writer, asked map[string]float64) error {
	if p.Plan == nil {
		return fmt.Errorf("read preview: no plan in the daemon's answer")
	}
	if err := p.Plan.WriteTable(w); err != nil {
		return err
	}
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(p.Rates)) {
		from := "estimated"
		if _, ok := asked[name]; ok {
			from = "asked"
		}
		parts = append(parts, fmt.Sprintf("%s %s req/s %s", name, rateText(p.Rates[name]), from))
	}
	rates := cmp.Or(strings.Join(parts, ", "), "none")
	line := fmt.Sprintf("for %s; each at least %s req/s, %s", rates, rateText(p.MinRate), p.headroomWords())
	if p.Plan.Spread {
		line = fmt.Sprintf("for %s; %s", rates, spreadWords)
	}
	writeWrappedLine(w, line)
	if p.Capacity != nil {
		writeWrappedLine(w, p.Capacity.words(p.Plan.Spread))
	}
	for _, name := range slices.Sorted(maps.Keys(p.Unprofiled)) {
		writeWrappedLine(w, fmt.Sprintf("not planned %s: %s", name, p.Unprofiled[name]))
	}
	for _, name := range slices.Sorted(maps.Keys(p.Pipelines)) {
		switch pp := p.Pipelines[name]; {
		case pp.Error != "":
			writeWrappedLine(w, fmt.Sprintf("pipeline %s not planned: %s", name, pp.Error))
		case pp.Plan != nil:
			writeWrappedLine(w, fmt.Sprintf("pipeline %s: %s req/s with the headroom, %s scaling on %d workers, expected accuracy %.3f",
				name, rateText(pp.Plan.Demand), pp.Plan.Scaling, pp.Plan.Workers, pp.Plan.Accuracy))
		}
	}
	if p.Unchanged {
		_, err := fmt.Fprintln(w, "what runs is this plan: applying it changes nothing")
		return err
	}
	fmt.Fprintln(w, "applying it would, in this order:")
	for _, step := range p.Steps {
		writeWrappedLine(w, "  "+step)
	}
	for _, note := range p.Notes {
		writeWrappedLine(w, note)
	}
	return nil
}

// headroomWords says how much headroom the plan gives.
func (p planPreview) headroomWords() string {
	switch {
	case p.HeadroomPlaced >= p.Headroom:
		return fmt.Sprintf("with %.0f%% headroom", 100*p.Headroom)
	case p.HeadroomPlaced >= 0:
		return fmt.Sprintf("with %.1f%% headroom (the %.0f%% planned for does not fit)", 100*p.HeadroomPlaced, 100*p.Headroom)
	}
	return "and placed short of them (unscheduled above)"
}

// rateText writes a rate to two decimals at most, without trailing zeros:
// 2000, 0.5, 1000000.
func rateText(r float64) string {
	s := strconv.FormatFloat(r, 'f', 2, 64)
	return strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
}
