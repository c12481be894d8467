package profiler

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// WriteTable prints a result for people: where the numbers come from, the
// p × b table of p50/p99, the α/β/R² fit per size, the knees, the
// utilisation and the co-locations.
func WriteTable(w io.Writer, res Result) error {
	var b strings.Builder
	src := res.Source
	if res.Reused {
		src = "stored profile reused (--force measures again)"
	}
	fmt.Fprintf(&b, "%s on %s (device type %s): %s", res.Model.Name, res.DeviceID, res.DeviceType, src)
	if res.RunID != 0 {
		fmt.Fprintf(&b, ", run %d", res.RunID)
	}
	fmt.Fprintf(&b, "\nmodel file %s (sha256 %.12s…)\n", res.Model.Path, res.Model.SHA256)
	if res.Rule != "" {
		fmt.Fprintf(&b, "stop rule: %s\n", res.Rule)
	}
	for _, x := range res.Executors {
		fmt.Fprintf(&b, "executor %d%%: %s, %d thread(s)", x.Size, x.Engine, x.Threads)
		if len(x.Cores) > 0 {
			fmt.Fprintf(&b, ", cores %v", x.Cores)
		}
		if x.SMCount > 0 {
			fmt.Fprintf(&b, ", %d SMs", x.SMCount)
		}
		if x.PeakResidentMB > 0 {
			fmt.Fprintf(&b, ", at most %.0f MB resident", x.PeakResidentMB)
		}
		b.WriteString("\n")
	}
	switch {
	case res.ResidentMB > 0 && res.ExecutorMB > 0:
		fmt.Fprintf(&b, "host memory: %.0f MB (an executor's peak resident memory with the model alone, %.0f MB of it the executor's own before the load; the planner counts the model's %.0f MB per copy on CPU gpu-lets, the executor's once per gpu-let)\n",
			res.ResidentMB, res.ExecutorMB, res.ResidentMB-res.ExecutorMB)
	case res.ResidentMB > 0:
		fmt.Fprintf(&b, "host memory: %.0f MB (an executor's peak resident memory with the model alone; the planner counts it on CPU gpu-lets)\n", res.ResidentMB)
	}

	b.WriteString("\nlatency p50 / p99 (ms) by partition size p and batch b")
	if !strings.HasPrefix(res.Source, SourceEmulatedPrefix) && !res.Reused {
		b.WriteString("; * capped before stable, ! incomplete")
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "p \\ b\t")
	for _, bt := range res.Batches {
		fmt.Fprintf(tw, "%d\t", bt)
	}
	fmt.Fprintln(tw)
	for _, p := range res.Sizes {
		fmt.Fprintf(tw, "%d%%\t", p)
		for _, bt := range res.Batches {
			pt, ok := res.Point(p, bt)
			if !ok {
				fmt.Fprint(tw, "-\t")
				continue
			}
			mark := ""
			switch {
			case !pt.Complete:
				mark = "!"
			case pt.Samples > 0 && !pt.Stable && !res.Reused:
				mark = "*"
			}
			fmt.Fprintf(tw, "%s / %s%s\t", ms(pt.P50MS), ms(float64(pt.P99MS)), mark)
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	if len(res.Fits) > 0 {
		b.WriteString("\nfit ℓ(b) = α·b + β (least squares over the p50s)\n")
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "p\tα ms\tβ ms\tR²\tmax rel err\t")
		for _, f := range res.Fits {
			fmt.Fprintf(tw, "%d%%\t%.4g\t%.4g\t%s\t%.1f%%\t\n", f.Size, f.AlphaMS, f.BetaMS, num(float64(f.R2), "%.4f"), 100*f.MaxRelErr)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}

	writeKnees(&b, res.Knees)
	writeUtil(&b, res.Util)
	writePairs(&b, res)
	for _, n := range res.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeKnees(b *strings.Builder, k ProfileKnees) {
	b.WriteString("\nknee of the affordable-rate curve over p (maximum curvature)\n")
	if c := k.SLO; c != nil {
		fmt.Fprintf(b, "  SLO %.4g ms (largest b with 2·L ≤ SLO): knee %d%%;", k.SLOMS, c.Knee)
		for _, p := range c.Points {
			fmt.Fprintf(b, " %d%%: %.4g/s at b=%d", p.Size, p.Rate, p.Batch)
		}
		b.WriteString("\n")
	} else if k.SLOMS > 0 {
		fmt.Fprintf(b, "  SLO %.4g ms: no size meets it\n", k.SLOMS)
	}
	for _, bk := range k.Batches {
		if bk.Err != "" {
			fmt.Fprintf(b, "  batch %d: %s\n", bk.Batch, bk.Err)
			continue
		}
		fmt.Fprintf(b, "  batch %d (b / L(b,p)): knee %d%%;", bk.Batch, bk.Curve.Knee)
		for _, p := range bk.Curve.Points {
			fmt.Fprintf(b, " %d%%: %.4g/s", p.Size, p.Rate)
		}
		b.WriteString("\n")
	}
}

func writeUtil(b *strings.Builder, us []Util) {
	if len(us) == 0 {
		return
	}
	known := false
	for _, u := range us {
		if !math.IsNaN(float64(u.SM)) || !math.IsNaN(float64(u.L2)) || !math.IsNaN(float64(u.DRAM)) {
			known = true
		}
	}
	if !known {
		b.WriteString("\nutilisation: unknown at every point (no meter can read this device; stored as unknown)\n")
		return
	}
	b.WriteString("\nsolo utilisation (% of the device; - unknown)\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "p\tb\tSM\tL2\tDRAM\tsources\t")
	for _, u := range us {
		fmt.Fprintf(tw, "%d%%\t%d\t%s\t%s\t%s\t%s/%s/%s\t\n", u.Size, u.Batch, num(float64(u.SM), "%.1f"), num(float64(u.L2), "%.1f"),
			num(float64(u.DRAM), "%.1f"), u.SMSource, u.L2Source, u.DRAMSource)
	}
	_ = tw.Flush()
}

func writePairs(b *strings.Builder, res Result) {
	if len(res.Pairs) == 0 {
		return
	}
	fmt.Fprintf(b, "\nco-located with itself (%s): latency ms solo → side by side\n", res.PairsSource)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "A p,b\tB p,b\tA solo → coloc\tB solo → coloc\tslowdown A, B\t")
	for _, p := range res.Pairs {
		fmt.Fprintf(tw, "%d%%,%d\t%d%%,%d\t%s → %s\t%s → %s\t%s, %s\t\n", p.SizeA, p.BatchA, p.SizeB, p.BatchB,
			ms(float64(p.SoloAMS)), ms(p.ColocAMS), ms(float64(p.SoloBMS)), ms(p.ColocBMS),
			num(p.ColocAMS/float64(p.SoloAMS), "%.3f"), num(p.ColocBMS/float64(p.SoloBMS), "%.3f"))
	}
	_ = tw.Flush()
}

// ms formats a latency with 4 significant digits, "-" when unknown.
func ms(v float64) string { return num(v, "%.4g") }

func num(v float64, format string) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return fmt.Sprintf(format, v)
}

// WriteKnees prints a reference set's knee report.
func WriteKnees(w io.Writer, k SetKnees) error {
	var b strings.Builder
	fmt.Fprintf(&b, "knees of the affordable-rate curves b / L(b,p) on %s over p = %v (maximum curvature, as the planner's MAXEFFICIENTPARTITION)\n", k.Set, k.Sizes)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "model\tbatch\tknee\t")
	for _, p := range k.Sizes {
		fmt.Fprintf(tw, "rate %d%%\t", p)
	}
	fmt.Fprint(tw, "curvature at the knee\t\n")
	for _, m := range k.Models {
		for _, bk := range m.Batches {
			fmt.Fprintf(tw, "%s\t%d\t%d%%\t", m.Model, bk.Batch, bk.Curve.Knee)
			curv := 0.0
			rates := map[int]float64{}
			for _, p := range bk.Curve.Points {
				rates[p.Size] = p.Rate
				if p.Size == bk.Curve.Knee {
					curv = p.Curvature
				}
			}
			// One column per size; "-" where the curve has no point there
			// (the set lacks that size for the model), so columns stay aligned.
			for _, size := range k.Sizes {
				if r, ok := rates[size]; ok {
					fmt.Fprintf(tw, "%.4g/s\t", r)
				} else {
					fmt.Fprint(tw, "-\t")
				}
			}
			fmt.Fprintf(tw, "%.3f\t\n", curv)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}
