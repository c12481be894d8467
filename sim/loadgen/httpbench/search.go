package httpbench

import (
	"errors"
	"fmt"
	"io"

	"github.com/gpulet/gpuletd/sim/loadgen"
)

// ErrNoRate is returned when no rate of the search holds.
var ErrNoRate = errors.New("no sustainable rate")

// Rates of the search.
const (
	searchStart = 200.0 // requests/s, doubled while it holds
	searchLeast = 12.5  // requests/s, the lowest tried when halving
)

// SearchRate finds a sustainable rate: from 200 requests/s, doubled while
// the daemon's p99 stays under the SLO (at least 99% of the requests
// answered within it, a failure counting as a miss) and the client drops
// none, up to maxRate; when 200 does not hold, halved until a rate does
// (down to 12.5). probe measures one rate.
func SearchRate(progress io.Writer, maxRate float64, probe func(rate float64) (*loadgen.Report, error)) (float64, []Probe, error) {
	var probes []Probe
	try := func(rate float64) (bool, error) {
		rep, err := probe(rate)
		if err != nil {
			return false, err
		}
		failed := rep.Sent - rep.OK + rep.Dropped
		// p99 under the SLO, counting a failure as a miss: at least 99% of
		// the requests answered within it, none dropped by the client.
		ok := rep.Sent > 0 && rep.Dropped == 0 && rep.WithinSLO*100 >= rep.Sent*99
		probes = append(probes, Probe{Rate: rate, P99US: us(rep.Latency.P99), Failed: failed, Kept: ok})
		verdict := "too high"
		if ok {
			verdict = "holds"
		}
		fmt.Fprintf(progress, "rate %5.0f/s: daemon p99 %.0fµs, %d failed or dropped: %s\n", rate, us(rep.Latency.P99), failed, verdict)
		if rep.FirstError != "" {
			fmt.Fprintf(progress, "  first failure: %s\n", rep.FirstError)
		}
		return ok, nil
	}
	best := 0.0
	for rate := searchStart; rate <= maxRate; rate *= 2 {
		ok, err := try(rate)
		if err != nil {
			return 0, probes, err
		}
		if !ok {
			break
		}
		best = rate
	}
	for rate := searchStart / 2; best == 0 && rate >= searchLeast; rate /= 2 {
		ok, err := try(rate)
		if err != nil {
			return 0, probes, err
		}
		if ok {
			best = rate
		}
	}
	if best == 0 {
		return 0, probes, fmt.Errorf("%w: the daemon misses its SLO even at %g requests/s", ErrNoRate, searchLeast)
	}
	return best, probes, nil
}
