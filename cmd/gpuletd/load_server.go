package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/gpulet/gpuletd/kserve"
	"github.com/gpulet/gpuletd/sim/loadgen"
)

// gpuletd load reads each model's statistics (the statistics extension,
// gpuletd's or Triton's) before and after the run, and reports what the
// server saw of it, as perf_analyzer's server-side lines do: the requests
// it answered, the inferences and batches they ran in, and where each
// answer's time went on the server. A model that enables the response
// cache is measured by the cache when the same request goes every time;
// the report says how many answers the cache gave.

// serverStatsOf reads the statistics of each model (its first version
// listed), over gRPC from the listener at grpcAddr when given, else over
// REST; a model whose statistics cannot be read is left out.
func serverStatsOf(ctx context.Context, d *daemonAPI, grpcAddr string, models []string) map[string]kserve.ModelStatistics {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	fetch := func(m string) (*kserve.StatisticsResponse, error) {
		return loadgen.FetchStats(ctx, d.client, d.base, m)
	}
	if grpcAddr != "" {
		c, err := d.grpcClient(ctx, grpcAddr)
		if err != nil {
			return nil
		}
		fetch = func(m string) (*kserve.StatisticsResponse, error) { return loadgen.FetchStatsGRPC(ctx, c, m) }
	}
	out := map[string]kserve.ModelStatistics{}
	for _, m := range models {
		st, err := fetch(m)
		if err != nil || len(st.ModelStats) == 0 {
			continue
		}
		out[m] = st.ModelStats[0]
	}
	return out
}

// serverView is what the server said of a run: what its statistics say of
// each model (serverSides), and its GPUs' metrics when read
// (--collect-metrics; nil when not).
type serverView struct {
	sides   map[string]serverSide
	metrics *loadgen.MetricsSummary
}

// serverSide is what a server's statistics say of one model over a run.
type serverSide struct {
	// Answers, Inferences and Batches: the requests answered, the rows
	// that ran and the batches they ran in; CacheHits the answers the
	// response cache gave.
	Answers    int64 `json:"answers"`
	Inferences int64 `json:"inferences"`
	Batches    int64 `json:"batches"`
	CacheHits  int64 `json:"cache_hits,omitempty"`
	// Mean time of a request that ran, nanoseconds: in the queue,
	// readying its batch's inputs, the model's run, its outputs.
	QueueNS  int64 `json:"queue_ns"`
	InputNS  int64 `json:"compute_input_ns"`
	InferNS  int64 `json:"compute_infer_ns"`
	OutputNS int64 `json:"compute_output_ns"`
}

// serverSides is, for each model whose statistics were read before and
// after and which answered in between, what they say of the run.
func serverSides(before, after map[string]kserve.ModelStatistics) map[string]serverSide {
	out := map[string]serverSide{}
	for m, a := range after {
		b, ok := before[m]
		if !ok {
			continue
		}
		delta := func(stat string) kserve.StatDuration {
			return kserve.StatDuration{Count: a.InferenceStats[stat].Count - b.InferenceStats[stat].Count, NS: a.InferenceStats[stat].NS - b.InferenceStats[stat].NS}
		}
		mean := func(stat string) int64 {
			if d := delta(stat); d.Count > 0 {
				return d.NS / d.Count
			}
			return 0
		}
		s := serverSide{Answers: delta("success").Count, Inferences: a.InferenceCount - b.InferenceCount, Batches: a.ExecutionCount - b.ExecutionCount,
			CacheHits: delta("cache_hit").Count, QueueNS: mean("queue"), InputNS: mean("compute_input"), InferNS: mean("compute_infer"), OutputNS: mean("compute_output")}
		if s.Answers > 0 {
			out[m] = s
		}
	}
	return out
}

// cacheHitsIn is, for each model the response cache answered during the
// run, how many answers it gave.
func cacheHitsIn(sides map[string]serverSide) map[string]int64 {
	out := map[string]int64{}
	for m, s := range sides {
		if s.CacheHits > 0 {
			out[m] = s.CacheHits
		}
	}
	return out
}

// writeServerSides says, for each model of reps, what the server's
// statistics say of the run; inputs is how many distinct requests went
// (--inputs), for what the response cache answered.
func writeServerSides(w io.Writer, sides map[string]serverSide, reps []*loadgen.Report, inputs int) {
	us := func(ns int64) string { return millis(float64(ns) / 1e6) }
	for _, r := range reps {
		s, ok := sides[r.Model]
		if !ok {
			continue
		}
		fmt.Fprintf(w, "%s on the server: %d answers, %d inferences in %d batches; a request ran %s queued, then %s readying its batch's inputs, %s in the model, %s on its outputs\n",
			r.Model, s.Answers, s.Inferences, s.Batches, us(s.QueueNS), us(s.InputNS), us(s.InferNS), us(s.OutputNS))
		if s.CacheHits > 0 {
			sent := "the same request went every time; --inputs N sends N distinct ones"
			if inputs > 1 {
				sent = fmt.Sprintf("%d distinct requests went in turn", inputs)
			}
			fmt.Fprintf(w, "%s: the daemon's response cache answered %d of its requests during the run (%d answered here; %s)\n",
				r.Model, s.CacheHits, r.OK, sent)
		}
	}
}

// shareModels is the models of a run's shares, in order.
func shareModels(shares []loadgen.Share) []string {
	names := make([]string, len(shares))
	for i, sh := range shares {
		names[i] = sh.Model
	}
	return names
}

// boundaryStats reads the server's statistics at each boundary of a run's
// measurement windows (loadgen.Config.OnBoundary), so that the server-side
// lines span the windows the report counts: the one window after the
// warm-up, or the last three of those measured. Each read goes in a
// goroutine of its own, which sides waits for.
type boundaryStats struct {
	ctx      context.Context
	d        *daemonAPI
	grpcAddr string
	names    []string
	wg       sync.WaitGroup
	mu       sync.Mutex
	snaps    map[int]map[string]kserve.ModelStatistics
}

// newBoundaryStats reads the statistics of names at d (gRPC at grpcAddr
// when given) at each boundary it is told of.
func newBoundaryStats(ctx context.Context, d *daemonAPI, grpcAddr string, names []string) *boundaryStats {
	return &boundaryStats{ctx: context.WithoutCancel(ctx), d: d, grpcAddr: grpcAddr, names: names, snaps: map[int]map[string]kserve.ModelStatistics{}}
}

// at is loadgen.Config.OnBoundary: it starts the read of boundary i and
// returns at once.
func (b *boundaryStats) at(i int) {
	b.wg.Go(func() {
		s := serverStatsOf(b.ctx, b.d, b.grpcAddr, b.names)
		b.mu.Lock()
		defer b.mu.Unlock()
		b.snaps[i] = s
	})
}

// wait waits for the reads started; nil waits for none.
func (b *boundaryStats) wait() {
	if b != nil {
		b.wg.Wait()
	}
}

// sides is what the server saw over the windows r counts, once every read
// is done; nil when a read it needs is missing (the caller falls back on
// the whole run's).
func (b *boundaryStats) sides(r *loadgen.Report) map[string]serverSide {
	b.wg.Wait()
	from, to := 0, 1
	if r.Windows != nil {
		to = len(r.Trials)
		from = max(0, to-3)
	}
	before, after := b.snaps[from], b.snaps[to]
	if len(before) == 0 || len(after) == 0 {
		return nil
	}
	return serverSides(before, after)
}
