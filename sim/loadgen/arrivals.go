package loadgen

import (
	"fmt"
	"os"

	"github.com/gpulet/gpuletd/sim/arrival"
)

// OpenArrivals parses an arrival spec (arrival.Parse) and builds its
// process at rate, reading the trace file a trace spec names.
func OpenArrivals(spec string, rate float64, seed uint64) (arrival.Arrivals, error) {
	s, err := arrival.Parse(spec)
	if err != nil {
		return nil, err
	}
	var tr *arrival.Trace
	if s.Kind == arrival.KindTrace {
		f, err := os.Open(s.Path)
		if err != nil {
			return nil, fmt.Errorf("open trace: %w", err)
		}
		defer f.Close()
		if tr, err = s.ReadTrace(f); err != nil {
			return nil, fmt.Errorf("read trace %s: %w", s.Path, err)
		}
	}
	return s.New(rate, seed, tr)
}
