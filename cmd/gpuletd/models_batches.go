package main

import (
	"context"
	"fmt"
	neturl "net/url"
	"strconv"
	"strings"

	"github.com/gpulet/gpuletd/kserve"
)

// batchesOf reads the batches model m (one version) ran, by size, from the
// daemon's statistics of that version (Triton's batch_stats, which say
// whether and how a model batches); nil when they cannot be read (the
// statistics group restricted, say): models show goes on without them.
func batchesOf(ctx context.Context, d *daemonAPI, m adminModel) []kserve.BatchStatistics {
	family, _, _ := strings.Cut(m.Name, ":")
	var s kserve.StatisticsResponse
	path := "/v2/models/" + neturl.PathEscape(family) + "/versions/" + strconv.Itoa(m.Version) + "/stats"
	if adminFetch(ctx, d, path, &s) != nil || len(s.ModelStats) != 1 {
		return nil
	}
	return s.ModelStats[0].BatchStats
}

// batchesText is a model's batches by size, with the mean time of their
// runs: "1 row ×120 (0.80 ms), 4 rows ×30 (2.10 ms)"; "" for none.
func batchesText(bs []kserve.BatchStatistics) string {
	var parts []string
	for _, b := range bs {
		if b.ComputeInfer.Count <= 0 {
			continue
		}
		rows := "rows"
		if b.BatchSize == 1 {
			rows = "row"
		}
		mean := float64(b.ComputeInfer.NS) / float64(b.ComputeInfer.Count) / 1e6
		parts = append(parts, fmt.Sprintf("%d %s ×%d (%s)", b.BatchSize, rows, b.ComputeInfer.Count, millis(mean)))
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, ", ") + " since loaded"
}
