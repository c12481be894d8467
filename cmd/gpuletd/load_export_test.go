package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/sim/loadgen"
	"github.com/stretchr/testify/require"
)

// TestProfileExport: a run's requests go into perf_analyzer's profile
// export in the order sent, in nanoseconds since the epoch, one not
// answered with no response time and its reason; a closed loop is a
// concurrency experiment, an open one a request rate's.
func TestProfileExport(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	r := &loadgen.Report{Rate: 50, Exported: []loadgen.ExportedRequest{
		{Sent: t0.Add(2 * time.Millisecond), Answered: t0.Add(5 * time.Millisecond)},
		{Sent: t0.Add(time.Millisecond), Failed: "503 deadline", SequenceID: 7},
	}, Boundaries: []time.Time{t0, t0.Add(time.Second)}}
	e := experimentOf(r)
	ns := t0.UnixNano()
	require.Equal(t, "request_rate", e.Experiment.Mode)
	require.Equal(t, 50.0, e.Experiment.Value)
	require.Equal(t, []exportRequest{
		{Timestamp: ns + 1e6, SequenceID: 7, ResponseTimestamps: []int64{}, Failed: "503 deadline"},
		{Timestamp: ns + 2e6, ResponseTimestamps: []int64{ns + 5e6}},
	}, e.Requests)
	require.Equal(t, []int64{ns, ns + 1e9}, e.WindowBoundaries)
	closed := experimentOf(&loadgen.Report{Closed: 4, ExportTruncated: true})
	require.Equal(t, "concurrency", closed.Experiment.Mode)
	require.Equal(t, 4.0, closed.Experiment.Value)

	path := filepath.Join(t.TempDir(), "export.json")
	f, err := openProfileExport(path, 1)
	require.NoError(t, err)
	var warn bytes.Buffer
	require.NoError(t, writeProfileExport(f, &warn, []exportExperiment{e, closed}))
	require.NoError(t, f.Close())
	require.Contains(t, warn.String(), "warning: --profile-export-file holds the first 5000000 requests of the run at concurrency 4, of more")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var doc exportFile
	require.NoError(t, json.Unmarshal(b, &doc))
	require.Len(t, doc.Experiments, 2)
	require.Equal(t, ns+5e6, doc.Experiments[0].Requests[1].ResponseTimestamps[0])
	require.NotEmpty(t, doc.Version)

	_, err = openProfileExport(path, 2)
	require.ErrorContains(t, err, "--profile-export-file holds one model's requests")
	_, err = openProfileExport(filepath.Join(path, "below-a-file.json"), 1)
	require.ErrorContains(t, err, "load: --profile-export-file: open ")
	f, err = openProfileExport("", 1)
	require.NoError(t, err)
	require.Nil(t, f)
}

// exportFile is what the tests read of a profile export, as a script
// written for perf_analyzer's reads it.
type exportFile struct {
	Experiments []struct {
		Experiment struct {
			Mode  string  `json:"mode"`
			Value float64 `json:"value"`
		} `json:"experiment"`
		Requests []struct {
			Timestamp          int64   `json:"timestamp"`
			ResponseTimestamps []int64 `json:"response_timestamps"`
		} `json:"requests"`
		WindowBoundaries []int64 `json:"window_boundaries"`
	} `json:"experiments"`
	Version string `json:"version"`
}
