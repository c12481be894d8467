package daemon

import (
	"fmt"
	"time"
)

// The hop between the daemon and an executor, against a model's SLO.
//
// The planner places a model by its batches' latency (on the CPU with the
// executors' CPU per request), not by the round trip a request makes from
// the daemon to its executor and back, which is wake-ups and framing: about
// 0.1–0.4 ms on a small VM. Under an SLO of a few such hops a model is
// placed and ready, and most of its requests still miss or are refused as
// `deadline cannot be met`; its attainment says so, and this warning says
// why.

const (
	// hopWarnShare is the share of the SLO the mean hop must take for the
	// warning.
	hopWarnShare = 0.25
	// hopWarnAfter is how many answers are timed before it is given.
	hopWarnAfter = 100
)

// hopWarning warns when hops, a model's timed round trips outside its
// executor, take a quarter of its SLO or more on average; "" otherwise.
func hopWarning(slo time.Duration, hops *durCount) string {
	n := hops.count.Load()
	if n < hopWarnAfter || slo <= 0 {
		return ""
	}
	mean := time.Duration(hops.ns.Load() / n)
	if float64(mean) < hopWarnShare*float64(slo) {
		return ""
	}
	return fmt.Sprintf("its requests spend %s on average going to their executor and back, %.0f%% of its SLO of %s, which the plan does not count: "+
		"many miss it however it is placed; a looser SLO leaves room for the hop (gpuletd_executor_hop_duration_seconds)",
		millisText(mean), 100*float64(mean)/float64(slo), millisText(slo))
}

// millisText writes d in milliseconds with three significant digits.
func millisText(d time.Duration) string {
	return fmt.Sprintf("%.3g ms", float64(d)/float64(time.Millisecond))
}
