package main

import (
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// deprecatedPerfAnalyzerFlags are perf_analyzer's older concurrency flags,
// which scripts written for it still give: -t N (N requests in flight), and
// -d with -c N (a search of the concurrencies up to N). They have no long
// names there; here their long names are hidden.
type deprecatedPerfAnalyzerFlags struct {
	threads, most int  // -t, -c
	dynamic       bool // -d
}

// register adds the flags to cmd.
func (d *deprecatedPerfAnalyzerFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.IntVarP(&d.threads, "perf-analyzer-t", "t", 0, "as perf_analyzer's -t: --concurrency N, a closed loop")
	f.IntVarP(&d.most, "perf-analyzer-c", "c", 0, "as perf_analyzer's -c with -d: the highest concurrency searched")
	f.BoolVarP(&d.dynamic, "perf-analyzer-d", "d", false, "as perf_analyzer's -d with -c N: --concurrency-range 1:N")
	for _, name := range []string{"perf-analyzer-t", "perf-analyzer-c", "perf-analyzer-d"} {
		_ = f.MarkHidden(name)
	}
}

// apply sets the flags the deprecated ones stand for; one given beside the
// flag it stands for is refused, as perf_analyzer refuses it beside
// --concurrency-range.
func (d *deprecatedPerfAnalyzerFlags) apply(f *pflag.FlagSet) error {
	t, c, dyn := f.Changed("perf-analyzer-t"), f.Changed("perf-analyzer-c"), d.dynamic
	switch {
	case !t && !c && !dyn:
		return nil
	case t && (c || dyn):
		return usageErrorf("load: -t is one concurrency and -d -c N a search of them: give one")
	case t && d.threads < 1:
		return usageErrorf("load: -t %d: give 1 or more requests in flight", d.threads)
	case t && (f.Changed("concurrency") || f.Changed("concurrency-range")):
		return usageErrorf("load: -t is --concurrency: give one of -t, --concurrency and --concurrency-range")
	case t:
		return f.Set("concurrency", strconv.Itoa(d.threads))
	case dyn != c:
		return usageErrorf("load: -d searches the concurrencies up to -c N: give both (or --concurrency-range 1:N)")
	case d.most < 1:
		return usageErrorf("load: -c %d: give 1 or more, the highest concurrency searched", d.most)
	case f.Changed("concurrency-range"):
		return usageErrorf("load: -d -c %d is --concurrency-range 1:%d: give one", d.most, d.most)
	}
	return f.Set("concurrency-range", "1:"+strconv.Itoa(d.most))
}
