package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/gpulet/gpuletd/sim/loadgen"
)

// A load test of a model that enables the daemon's response cache measures
// the cache when the same request goes every time; gpuletd load says how
// many of its answers the cache gave, read from the statistics extension
// before and after the run.

// cacheHitsOf reads the response cache's hits of each model (the
// statistics' cache_hit count); a model whose statistics cannot be read is
// left out.
func cacheHitsOf(ctx context.Context, d *daemonAPI, models []string) map[string]int64 {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out := map[string]int64{}
	for _, m := range models {
		st, err := loadgen.FetchStats(ctx, d.client, d.base, m)
		if err != nil || len(st.ModelStats) == 0 {
			continue
		}
		out[m] = st.ModelStats[0].Stats["cache_hit"].Count
	}
	return out
}

// cacheHitsDuring is, for each model whose hits grew from before to
// after, by how much.
func cacheHitsDuring(before, after map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for m, n := range after {
		if b, ok := before[m]; ok && n > b {
			out[m] = n - b
		}
	}
	return out
}

// writeCacheHits says, for each model the cache answered during the run,
// how many of the run's answers it may have given; inputs is how many
// distinct requests went (--inputs).
func writeCacheHits(w io.Writer, hits map[string]int64, reps []*loadgen.Report, inputs int) {
	sent := "the same request went every time; --inputs N sends N distinct ones"
	if inputs > 1 {
		sent = fmt.Sprintf("%d distinct requests went in turn", inputs)
	}
	for _, r := range reps {
		if n := hits[r.Model]; n > 0 {
			fmt.Fprintf(w, "%s: the daemon's response cache answered %d of its requests during the run (%d answered here; %s)\n",
				r.Model, n, r.OK, sent)
		}
	}
}
