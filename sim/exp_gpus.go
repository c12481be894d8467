package sim

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gpulet/gpuletd/control"
	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/gpulet/planbench"
	"github.com/gpulet/gpuletd/profiler/refset"
	"github.com/gpulet/gpuletd/sim/workload"
)

// The gpus-needed experiment: for each of ParvaGPU's SLO scenarios (rates
// and latency SLOs of its 11 models, shared/data/parvagpu/SLO), the fewest
// A100s gpuletd's planner needs on the measured MIG × MPS profiles
// (parvagpu-a100), the plan, and a check of that plan in simulation at the
// scenario's rates. ParvaGPU's own scheduler, built from its public source
// (MunQ-Lee/ParvaGPU_SC24, commit 5f3de1e, `make` with -fcommon, then
// `./parva_sched N`), asks for ParvaGPUGPUs on the same data and rule.

// ParvaGPUGPUs are the A100s ParvaGPU's scheduler deploys for scenarios 1..6
// ("num of gpu" it prints; see above for how it was run).
var ParvaGPUGPUs = []int{2, 3, 5, 7, 13, 17}

// ParvaScenario is one SLO scenario: the models served, with their SLOs and
// rates.
type ParvaScenario struct {
	Index  int           `json:"index"`
	Models []ParvaDemand `json:"models"`
}

// ParvaDemand is one model of a scenario.
type ParvaDemand struct {
	Name  string  `json:"name"`
	SLOMS float64 `json:"slo_ms"`
	Rate  float64 `json:"rate"`
}

// ParvaSLODir is the scenarios' folder under the shared data folder.
const ParvaSLODir = "parvagpu/SLO"

// LoadParvaScenarios reads SLO_latency.csv and SLO_req_rate.csv from dir:
// one scenario per row, columns in the order of models (the set's models,
// alphabetical as ParvaGPU orders its profile files), "N/A" where the
// scenario does not serve the model.
func LoadParvaScenarios(dir string, models []string) ([]ParvaScenario, error) {
	read := func(name string) ([][]string, error) {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("load scenarios: %w", err)
		}
		defer f.Close()
		cr := csv.NewReader(f)
		cr.FieldsPerRecord = len(models)
		var rows [][]string
		for {
			rec, err := cr.Read()
			if errors.Is(err, io.EOF) {
				return rows, nil
			}
			if err != nil {
				return nil, fmt.Errorf("load scenarios: %s: %w", name, err)
			}
			rows = append(rows, rec)
		}
	}
	slos, err := read("SLO_latency.csv")
	if err != nil {
		return nil, err
	}
	rates, err := read("SLO_req_rate.csv")
	if err != nil {
		return nil, err
	}
	if len(slos) != len(rates) || len(slos) == 0 {
		return nil, fmt.Errorf("load scenarios: %w: %d latency rows, %d rate rows", ErrBadOptions, len(slos), len(rates))
	}
	var out []ParvaScenario
	for i := range slos {
		sc := ParvaScenario{Index: i + 1}
		for j, name := range models {
			ls, rs := strings.TrimSpace(slos[i][j]), strings.TrimSpace(rates[i][j])
			if ls == "N/A" || rs == "N/A" {
				if ls != rs {
					return nil, fmt.Errorf("load scenarios: %w: row %d, %s: SLO %q with rate %q", ErrBadOptions, i+1, name, ls, rs)
				}
				continue
			}
			slo, err1 := strconv.ParseFloat(ls, 64)
			rate, err2 := strconv.ParseFloat(rs, 64)
			if err1 != nil || err2 != nil || !(slo > 0) || !(rate > 0) {
				return nil, fmt.Errorf("load scenarios: %w: row %d, %s: SLO %q, rate %q: want positive numbers", ErrBadOptions, i+1, name, ls, rs)
			}
			sc.Models = append(sc.Models, ParvaDemand{Name: name, SLOMS: slo, Rate: rate})
		}
		out = append(out, sc)
	}
	return out, nil
}

// GPUsRow is one scenario's outcome.
type GPUsRow struct {
	Index int `json:"index"`
	// GPUs is the fewest GPUs the planner places the whole scenario on (0
	// when not even MaxGPUsTried do); ParvaGPU what ParvaGPU's scheduler
	// deploys.
	GPUs     int `json:"gpus"`
	ParvaGPU int `json:"parvagpu_gpus,omitempty"`
	// ViolationFraction is the median over seeds of the share of requests
	// late or lost when the simulated node runs the plan at the scenario's
	// rates (Poisson arrivals); Violations has every seed's.
	ViolationFraction float64 `json:"violation_fraction"`
	Violations        Spread  `json:"violations"`
	// PlanMS is the planner's time for the last (schedulable) plan.
	PlanMS float64      `json:"plan_ms"`
	Plan   *gpulet.Plan `json:"plan"`
}

// GPUsResult is the experiment's outcome.
type GPUsResult struct {
	Set   string    `json:"set"`
	Rule  string    `json:"rule"`
	Algo  string    `json:"algo"`
	Seeds []uint64  `json:"seeds"`
	Rows  []GPUsRow `json:"scenarios"`
}

// MaxGPUsTried bounds the search for the fewest GPUs.
const MaxGPUsTried = 64

// gpusDuration is each check's offered time.
const gpusDuration = 20 * time.Second

// gpusWorkload is a scenario on n GPUs of the set, MIG with up to 7
// instances each.
func gpusWorkload(set string, sc ParvaScenario, n int, rule, algo string, seed uint64) *workload.Workload {
	zero := workload.Duration(0)
	w := &workload.Workload{
		Devices:    []workload.Device{{Profiles: set, Count: n, Partitioning: string(gpulet.BackendMIG), MaxGPULets: planbench.MIGMaxInstances}},
		Duration:   workload.Duration(gpusDuration),
		Seed:       seed,
		Algo:       algo,
		Rule:       rule,
		Reorganize: &zero,
	}
	for _, m := range sc.Models {
		w.Models = append(w.Models, workload.Model{Name: m.Name, Rate: m.Rate, SLOMS: m.SLOMS, Arrival: "poisson"})
	}
	return w
}

// planLikeDaemon plans w as the daemon plans its node (control.Plan): every
// demand with up to control.Headroom of room to grow, as much of it as fits
// beside the others. The room is what keeps a gpu-let below its capacity
// under random arrivals; the plan is schedulable exactly when the demands
// themselves all fit.
func planLikeDaemon(ctx context.Context, w *workload.Workload) (*gpulet.Plan, error) {
	a, err := w.PlannerAlgo("")
	if err != nil {
		return nil, err
	}
	in, opts, err := w.Input()
	if err != nil {
		return nil, err
	}
	p, err := control.Plan(ctx, a, in, opts, control.Room{Base: control.Headroom})
	if err != nil {
		return nil, fmt.Errorf("plan workload: %w", err)
	}
	return p, nil
}

// RunGPUsNeeded finds, for every scenario, the fewest GPUs of the set on
// which the planner (algo) under rule places the whole demand, and checks
// that plan in simulation over the seeds (the node runs the plan as is,
// no re-planning).
func RunGPUsNeeded(ctx context.Context, set string, scenarios []ParvaScenario, rule, algo string, seed uint64, seeds int) (*GPUsResult, error) {
	res := &GPUsResult{Set: set, Rule: rule, Algo: algo, Seeds: SeedList(seed, seeds)}
	for _, sc := range scenarios {
		row := GPUsRow{Index: sc.Index}
		if sc.Index >= 1 && sc.Index <= len(ParvaGPUGPUs) && set == refset.SetParvaGPUA100 {
			row.ParvaGPU = ParvaGPUGPUs[sc.Index-1]
		}
		for n := 1; n <= MaxGPUsTried && row.GPUs == 0; n++ {
			w := gpusWorkload(set, sc, n, rule, algo, seed)
			start := time.Now()
			p, err := planLikeDaemon(ctx, w)
			if err != nil {
				return nil, fmt.Errorf("gpus needed: scenario %d: %w", sc.Index, err)
			}
			if p.Schedulable {
				row.GPUs, row.Plan = n, p
				row.PlanMS = float64(time.Since(start).Microseconds()) / 1000
			}
		}
		if row.GPUs > 0 {
			var err error
			row.Violations, err = OverSeeds(res.Seeds, func(s uint64) (float64, error) {
				r, err := Run(ctx, gpusWorkload(set, sc, row.GPUs, rule, algo, s), Options{Plan: row.Plan})
				if err != nil {
					return 0, err
				}
				return r.BadRate, nil
			})
			if err != nil {
				return nil, fmt.Errorf("gpus needed: scenario %d: %w", sc.Index, err)
			}
			row.ViolationFraction = row.Violations.Median
		}
		res.Rows = append(res.Rows, row)
	}
	return res, nil
}
