package main

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"
)

func newTable(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0) }

// perSecond writes requests per second.
func perSecond(r float64) string {
	switch {
	case r >= 100:
		return fmt.Sprintf("%.0f/s", r)
	case r >= 10:
		return fmt.Sprintf("%.1f/s", r)
	}
	return fmt.Sprintf("%.2f/s", r)
}

// millis writes a duration given in milliseconds with three significant
// digits, in µs below 1 ms.
func millis(ms float64) string {
	switch {
	case ms < 1:
		return fmt.Sprintf("%.0fµs", ms*1000)
	case ms < 10:
		return fmt.Sprintf("%.2fms", ms)
	case ms < 100:
		return fmt.Sprintf("%.1fms", ms)
	}
	return fmt.Sprintf("%.0fms", ms)
}

// percent writes a share as a percentage with one decimal, rounded down:
// an SLO attainment of 98.96%, short of the 99% a load sweep's step must
// hold, reads 98.9%, not 99.0%, and one short of all reads 99.9%, not
// 100.0%. The epsilon keeps f*1000's binary error (0.29 → 289.999…) from
// taking a tenth off.
func percent(f float64) string { return fmt.Sprintf("%.1f%%", math.Floor(1000*f+1e-6)/10) }

// failedWords says what failed of a model's requests on one gpu-let: failed
// answered with an error of the received, both since the gpu-let's
// executor started.
func failedWords(failed, received int64) string {
	return fmt.Sprintf("%s of %d failed there since its executor started (dropped or expired by its scheduler, refused, failed runs)",
		counted(failed, "request"), received)
}

// slowBatchWords says what a batch time factor of f means.
func slowBatchWords(f float64) string {
	return fmt.Sprintf("its batches ran up to %.1f× their profiled time lately, and its executor plans with that: smaller batches, requests refused sooner "+
		"(a busy host, or a device slower than when the model was profiled)", f)
}

func meanBatch(requests int64, mean float64) string {
	if requests == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", mean)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// clip shortens s to n runes with an ellipsis.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// olderPolicies lists the gpu-lets whose executors run another policy than
// the one configured (a reload changed it and could not switch them), as
// "<gpu-let> (<policy>)".
func olderPolicies(s *adminStatus) []string {
	var out []string
	for _, g := range s.Gpulets {
		if g.Policy != "" && g.Policy != s.Policy {
			out = append(out, g.ID+" ("+g.Policy+")")
		}
	}
	return out
}

// counted writes n things, "1 thing" or "2 things".
func counted(n int64, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
