package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/gpulet/gpuletd/internal/version"
	"github.com/gpulet/gpuletd/sim/loadgen"
)

// profileExport is perf_analyzer's profile export (--profile-export-file):
// an experiment for the run, or for each step of a sweep, with every
// request it counted, when it was sent and when its answer came, in
// nanoseconds since the Unix epoch.
type profileExport struct {
	Experiments []exportExperiment `json:"experiments"`
	Version     string             `json:"version"`
}

// exportExperiment is one run's or step's requests.
type exportExperiment struct {
	Experiment struct {
		// Mode is "concurrency" (a closed loop) or "request_rate".
		Mode  string  `json:"mode"`
		Value float64 `json:"value"`
	} `json:"experiment"`
	Requests []exportRequest `json:"requests"`
	// WindowBoundaries are the measured windows' starts and the last
	// one's end.
	WindowBoundaries []int64 `json:"window_boundaries"`
	// Truncated is set when the run kept fewer requests than it counted
	// (loadgen.MaxExported).
	Truncated bool `json:"truncated,omitempty"`
}

// exportRequest is one request: perf_analyzer's fields, and gpuletd
// load's reason for one not answered 200 (which has no response time).
type exportRequest struct {
	Timestamp          int64   `json:"timestamp"`
	SequenceID         uint64  `json:"sequence_id,omitempty"`
	ResponseTimestamps []int64 `json:"response_timestamps"`
	Failed             string  `json:"failed,omitempty"`
}

// openProfileExport creates the --profile-export-file before the run, so
// that a path it cannot write fails before any request is sent; nil for
// "". The run's defer closes it, and removes it when no run ended.
func openProfileExport(path string, models int) (*os.File, error) {
	if path == "" {
		return nil, nil
	}
	if models > 1 {
		return nil, usageErrorf("load: --profile-export-file holds one model's requests, as perf_analyzer measures one model, and %d are given", models)
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("load: --profile-export-file: %w", err)
	}
	return f, nil
}

// experimentOf is r's experiment: a closed loop's at its concurrency, an
// open one's at its rate; its requests in the order they were sent.
func experimentOf(r *loadgen.Report) exportExperiment {
	var e exportExperiment
	e.Experiment.Mode, e.Experiment.Value = "request_rate", r.Rate
	if r.Closed > 0 {
		e.Experiment.Mode, e.Experiment.Value = "concurrency", float64(r.Closed)
	}
	e.Requests = make([]exportRequest, 0, len(r.Exported))
	for _, x := range r.Exported {
		q := exportRequest{Timestamp: x.Sent.UnixNano(), SequenceID: x.SequenceID, ResponseTimestamps: []int64{}, Failed: x.Failed}
		if !x.Answered.IsZero() {
			q.ResponseTimestamps = []int64{x.Answered.UnixNano()}
		}
		e.Requests = append(e.Requests, q)
	}
	slices.SortStableFunc(e.Requests, func(a, b exportRequest) int { return cmp.Compare(a.Timestamp, b.Timestamp) })
	e.WindowBoundaries = make([]int64, len(r.Boundaries))
	for i, b := range r.Boundaries {
		e.WindowBoundaries[i] = b.UnixNano()
	}
	e.Truncated = r.ExportTruncated
	return e
}

// writeProfileExport writes the experiments to f, saying on warn when one
// kept fewer requests than it counted.
func writeProfileExport(f *os.File, warn io.Writer, experiments []exportExperiment) error {
	for _, e := range experiments {
		if e.Truncated {
			fmt.Fprintf(warn, "warning: --profile-export-file holds the first %d requests of the run at %s %g, of more\n", loadgen.MaxExported, e.Experiment.Mode, e.Experiment.Value)
		}
	}
	b, err := json.MarshalIndent(profileExport{Experiments: experiments, Version: version.Version}, "", "  ")
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("load: --profile-export-file %s: %w", f.Name(), err)
	}
	return nil
}
