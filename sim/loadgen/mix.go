package loadgen

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Share is one model of a mix and its rate, requests/s (0: not given).
type Share struct {
	Model string
	Rate  float64
}

// ParseShares reads a mix of models, each "NAME" or "NAME=RATE". Either
// every model gives a rate or none does. With a total above 0, the rates
// are scaled to add up to it (split equally when none is given); without
// one every model must give its rate.
func ParseShares(specs []string, total float64) ([]Share, error) {
	if len(specs) == 0 {
		return nil, fmt.Errorf("%w: no model", ErrConfig)
	}
	if total < 0 || math.IsNaN(total) || math.IsInf(total, 0) {
		return nil, fmt.Errorf("%w: rate %v requests/s; give a positive rate", ErrConfig, total)
	}
	out := make([]Share, 0, len(specs))
	seen := map[string]bool{}
	withRate := 0
	sum := 0.0
	for _, spec := range specs {
		name, rate, hasRate := strings.Cut(strings.TrimSpace(spec), "=")
		if name == "" {
			return nil, fmt.Errorf("%w: model %q: give NAME or NAME=RATE", ErrConfig, spec)
		}
		if seen[name] {
			return nil, fmt.Errorf("%w: model %s is listed twice", ErrConfig, name)
		}
		seen[name] = true
		s := Share{Model: name}
		if hasRate {
			r, err := strconv.ParseFloat(rate, 64)
			if err != nil || !(r > 0) || math.IsInf(r, 0) {
				return nil, fmt.Errorf("%w: model %s: rate %q is not a positive number of requests/s", ErrConfig, name, rate)
			}
			s.Rate = r
			sum += r
			withRate++
		}
		out = append(out, s)
	}
	switch {
	case withRate != 0 && withRate != len(out):
		return nil, fmt.Errorf("%w: give every model a rate (NAME=RATE) or none", ErrConfig)
	case withRate == 0 && total == 0:
		return nil, fmt.Errorf("%w: no rate; give --rate or NAME=RATE for every model", ErrConfig)
	case withRate == 0:
		for i := range out {
			out[i].Rate = total / float64(len(out))
		}
	case total > 0:
		for i := range out {
			out[i].Rate *= total / sum
		}
	}
	return out, nil
}

// MixReport is the outcome of RunMix: each model's report and their sum.
type MixReport struct {
	Models []*Report `json:"models"`
	Total  Total     `json:"total"`
}

// Total adds up the reports of a mix.
type Total struct {
	Rate       float64          `json:"target_rate"`
	Scheduled  int64            `json:"scheduled"`
	Sent       int64            `json:"sent"`
	Dropped    int64            `json:"dropped_by_client"`
	OK         int64            `json:"ok"`
	Failed     map[string]int64 `json:"failed"`
	WithinSLO  int64            `json:"within_slo"`
	Goodput    float64          `json:"goodput"`
	Attainment float64          `json:"slo_attainment"`
	SendRate   float64          `json:"send_rate"`
}

// RunMix runs one load per config at once (Run each, so every model keeps
// its own arrivals, payload and SLO) and sums the reports. A config that
// cannot start (an unknown model, say) stops the others; the error names
// its model. When ctx ends early the reports so far come back with ctx's
// error, as from Run.
func RunMix(ctx context.Context, cfgs []Config) (*MixReport, error) {
	if len(cfgs) == 0 {
		return nil, fmt.Errorf("%w: no model", ErrConfig)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	reps := make([]*Report, len(cfgs))
	errs := make([]error, len(cfgs))
	// failed is the first load that could not start; the others then stop,
	// and may fail to start too, cancelled.
	var failed atomic.Int32
	failed.Store(-1)
	var wg sync.WaitGroup
	for i, c := range cfgs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reps[i], errs[i] = Run(ctx, c)
			if errs[i] != nil && reps[i] == nil && failed.CompareAndSwap(-1, int32(i)) {
				cancel()
			}
		}()
	}
	wg.Wait()
	if i := failed.Load(); i >= 0 {
		return nil, fmt.Errorf("load %s: %w", cfgs[i].Model, errs[i])
	}
	mr := &MixReport{Models: reps, Total: sum(reps)}
	return mr, errors.Join(errs...)
}

// sum adds up reports; rates per second add up over a common window.
func sum(reps []*Report) Total {
	t := Total{Failed: map[string]int64{}}
	for _, r := range reps {
		t.Rate += r.Rate
		t.Scheduled += r.Scheduled
		t.Sent += r.Sent
		t.Dropped += r.Dropped
		t.OK += r.OK
		t.WithinSLO += r.WithinSLO
		t.Goodput += r.Goodput
		t.SendRate += r.SendRate
		for k, n := range r.Failed {
			t.Failed[k] += n
		}
	}
	if t.Sent > 0 {
		t.Attainment = float64(t.WithinSLO) / float64(t.Sent)
	}
	return t
}
