package profiler

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gpulet/gpuletd/mps"
	"github.com/gpulet/gpuletd/profiler/store"
	"go.uber.org/zap"
)

// Measure profiles one model on one device over the job's partition sizes
// × batch sizes and keeps the results in the store under the model file's
// sha256 and the device type (DeviceType).
//
// On cpu and nvidia devices it starts one executor per size (so the core
// share or the MPS share is real), loads the model with warm-up batches,
// then sends requests of b rows, each run by the executor as one batch (see
// BatchPolicy), and samples the batch's engine time (InferResponse.compute_us)
// until the job's StopRule is met. Each point is stored as soon as it is
// done. On emulated devices it reads the reference set's physics instead of
// measuring, and says so in the result's Source and the run's message.
//
// Unless job.Force is set, a complete stored profile of the same file on the
// same device type is reused without starting anything (and stored
// co-locations, when Pairs are asked for).
//
// Errors: ErrBadJob, ErrSizeNotAllowed, ErrModelLoad, ErrDeviceLost,
// ErrNoEmulation and ErrInterrupted (ctx ended: the points measured so far
// are kept, a point cut short is stored as incomplete, the run is marked
// incomplete), each with a message naming the model, device and point. The
// returned Result holds whatever was measured, also on error.
func Measure(ctx context.Context, job Job) (Result, error) {
	if err := job.plan(); err != nil {
		return Result{}, err
	}
	r := newRunner(job)
	r.res = Result{
		Model: job.Model, DeviceID: job.Device.ID, DeviceType: r.devType,
		Sizes: job.Sizes, Batches: job.Batches, Points: []Point{},
	}
	err := r.run(ctx)
	r.summarise()
	return r.res, err
}

// newRunner is the runner of a planned job.
func newRunner(job Job) *runner {
	return &runner{job: job, devType: DeviceType(job.Device), log: job.Log.With(zap.String("model", job.Model.Name), zap.String("device", job.Device.ID))}
}

// runner carries one Measure call.
type runner struct {
	job     Job
	devType string
	log     *zap.Logger
	res     Result
	runID   int64
	done    int // solo points finished in this run
	total   int // solo points this run measures
}

func (r *runner) st() *store.Store { return r.job.Store }

func (r *runner) emulated() bool { return r.job.Device.Kind == mps.KindEmulated }

func (r *runner) run(ctx context.Context) error {
	soloStored, err := r.storedSolo(ctx)
	if err != nil {
		return err
	}
	pairsStored := !r.job.Pairs
	if r.job.Pairs && !r.job.Force {
		if pairsStored, err = r.storedPairs(ctx); err != nil {
			return err
		}
	}
	if soloStored {
		if err := r.storedMemory(ctx); err != nil {
			return err
		}
	}
	if soloStored && pairsStored {
		r.res.Reused, r.res.Source = true, SourceStored
		r.log.Info("stored profile reused", zap.String("sha256", r.job.Model.SHA256))
		return nil
	}
	if err := r.recordDeviceType(ctx); err != nil {
		return err
	}
	r.res.Source = SourceMeasured
	if r.emulated() {
		r.res.Source = SourceEmulatedPrefix + r.job.Device.Emulated
	} else {
		r.res.Rule = r.job.Rule.String()
	}
	run, err := r.st().StartRun(ctx, r.job.Model.SHA256, r.devType, r.startMessage(soloStored, pairsStored))
	if err != nil {
		return fmt.Errorf("profile %s on %s: %w", r.job.Model.Name, r.job.Device.ID, err)
	}
	r.runID, r.res.RunID = run.ID, run.ID
	if !soloStored {
		r.total = len(r.job.Sizes) * len(r.job.Batches)
	}
	err = r.measure(ctx, !soloStored, !pairsStored)
	return r.finish(ctx, err)
}

// measure does the parts that were not reused.
func (r *runner) measure(ctx context.Context, solo, pairs bool) error {
	if r.emulated() {
		if solo {
			if err := r.emulatedSolo(ctx); err != nil {
				return err
			}
		}
		if pairs {
			return r.emulatedPairs(ctx)
		}
		return nil
	}
	if solo {
		for _, size := range r.job.Sizes {
			if err := r.soloSize(ctx, size); err != nil {
				return err
			}
		}
	}
	if pairs {
		return r.measurePairs(ctx)
	}
	return nil
}

// sourceNote says where the run's numbers come from; it starts the run's
// message from start to finish.
func (r *runner) sourceNote() string {
	if r.emulated() {
		return "source: emulated: read from the physics of reference set " + r.job.Device.Emulated + ", not measured"
	}
	return "source: measured with executors (policy " + BatchPolicy + ", engine time per batch)" + inputsAt(r.job.Model.Shapes)
}

// startMessage is the run's message while it runs: what it measures and
// from where.
func (r *runner) startMessage(soloStored, pairsStored bool) string {
	parts := []string{r.sourceNote()}
	if soloStored {
		parts = append(parts, "solo profile reused")
	} else {
		parts = append(parts, fmt.Sprintf("sizes %v, batches %v", r.job.Sizes, r.job.Batches))
	}
	if r.job.Pairs && !pairsStored {
		parts = append(parts, fmt.Sprintf("co-locations at batches %v", r.job.PairBatches))
	}
	if !r.emulated() {
		parts = append(parts, "rule: "+r.job.Rule.String())
	}
	return strings.Join(parts, "; ")
}

// finish ends the run in the store according to err and returns the error
// the caller sees. The store is written with a context that is not
// cancelled, so an interrupted run is still recorded.
func (r *runner) finish(ctx context.Context, err error) error {
	wctx := context.WithoutCancel(ctx)
	st := r.st()
	var status store.RunStatus
	var msg string
	out := err
	switch {
	case err == nil:
		status, msg = store.RunComplete, fmt.Sprintf("%d points, %d co-locations", len(r.res.Points), len(r.res.Pairs))
	case ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		status, r.res.Interrupted = store.RunIncomplete, true
		msg = fmt.Sprintf("interrupted: %d of %d points measured and kept, the rest not measured", r.done, r.total)
		out = fmt.Errorf("profile %s on %s: %w: %d of %d points were measured and are kept; run %d is marked incomplete",
			r.job.Model.Name, r.job.Device.ID, ErrInterrupted, r.done, r.total, r.runID)
	default:
		status, msg = store.RunFailed, err.Error()
	}
	msg = r.sourceNote() + "; " + msg
	if ferr := st.FinishRun(wctx, r.runID, status, msg); ferr != nil {
		return errors.Join(out, ferr)
	}
	r.log.Info("profile run finished", zap.Int64("run", r.runID), zap.String("status", string(status)), zap.String("message", msg))
	return out
}

// recordDeviceType describes the device type in the store.
func (r *runner) recordDeviceType(ctx context.Context) error {
	d := r.job.Device
	dt := store.DeviceType{Name: r.devType, Source: string(d.Kind), Sizes: slices.Clone(d.Sizes), MemoryMB: math.NaN()}
	switch d.Backend {
	case mps.BackendMPS:
		dt.Partitioning = store.PartitionMPS
	case mps.BackendMIG:
		dt.Partitioning = store.PartitionMIG
	case mps.BackendCPU:
		dt.Partitioning = store.PartitionCores
	default:
		dt.Partitioning = store.PartitionNone
	}
	if d.Kind == mps.KindNVIDIA {
		dt.Source = "nvml: " + d.Name
	}
	if d.Kind == mps.KindEmulated {
		dt.Source = "emulated reference set " + d.Emulated
	}
	if d.MemoryTotal > 0 {
		dt.MemoryMB = float64(d.MemoryTotal) / (1 << 20)
	}
	if _, err := r.st().UpsertDeviceType(ctx, dt); err != nil {
		return fmt.Errorf("profile %s on %s: %w", r.job.Model.Name, d.ID, err)
	}
	return nil
}

// storedSolo fills the result from a complete stored profile, unless the
// job forces a new one; it reports whether it did.
func (r *runner) storedSolo(ctx context.Context) (bool, error) {
	if r.job.Force {
		return false, nil
	}
	sha := r.job.Model.SHA256
	ok, err := r.st().HasCompleteProfile(ctx, sha, r.devType, r.job.Sizes, r.job.Batches)
	if err != nil || !ok {
		return false, err
	}
	pts, err := r.st().Latency(ctx, sha, r.devType)
	if err != nil {
		return false, err
	}
	for _, p := range pts {
		if !slices.Contains(r.job.Sizes, p.Size) || !slices.Contains(r.job.Batches, p.Batch) {
			continue
		}
		r.res.Points = append(r.res.Points, Point{
			Size: p.Size, Batch: p.Batch, P50MS: p.P50MS, P99MS: Num(p.P99MS), MeanMS: Num(p.MeanMS),
			Samples: p.Samples, Complete: p.Complete,
		})
	}
	util, err := r.st().Util(ctx, sha, r.devType)
	if err != nil {
		return false, err
	}
	r.res.Util = utilFromStore(util, r.job.Sizes, r.job.Batches)
	return true, nil
}

// utilFromStore groups stored utilisation rows by point.
func utilFromStore(rows []store.UtilPoint, sizes, batches []int) []Util {
	var out []Util
	idx := map[[2]int]int{}
	for _, u := range rows {
		if !slices.Contains(sizes, u.Size) || !slices.Contains(batches, u.Batch) {
			continue
		}
		k := [2]int{u.Size, u.Batch}
		i, ok := idx[k]
		if !ok {
			nan := Num(math.NaN())
			out = append(out, Util{Size: u.Size, Batch: u.Batch, SM: nan, L2: nan, DRAM: nan,
				SMSource: store.SourceUnknown, L2Source: store.SourceUnknown, DRAMSource: store.SourceUnknown})
			i = len(out) - 1
			idx[k] = i
		}
		switch u.Metric {
		case store.MetricSM:
			out[i].SM, out[i].SMSource = Num(u.Value), u.Source
		case store.MetricL2:
			out[i].L2, out[i].L2Source = Num(u.Value), u.Source
		case store.MetricDRAM:
			out[i].DRAM, out[i].DRAMSource = Num(u.Value), u.Source
		}
	}
	return out
}

// storedPairs fills the result's co-locations from the store; it reports
// whether there were any.
func (r *runner) storedPairs(ctx context.Context) (bool, error) {
	xs, err := r.st().InterferenceSamples(ctx, r.devType)
	if err != nil {
		return false, err
	}
	sha := r.job.Model.SHA256
	for _, x := range xs {
		if x.ModelA != sha || x.ModelB != sha {
			continue
		}
		r.res.Pairs = append(r.res.Pairs, Pair{
			SizeA: x.SizeA, SizeB: x.SizeB, BatchA: x.BatchA, BatchB: x.BatchB,
			SoloAMS: Num(x.SoloAMS), SoloBMS: Num(x.SoloBMS), ColocAMS: x.ColocAMS, ColocBMS: x.ColocBMS, Source: x.Source,
		})
	}
	if len(r.res.Pairs) > 0 {
		r.res.PairsSource = SourceStored
	}
	return len(r.res.Pairs) > 0, nil
}

// record stores a point and adds it to the result. The store is written
// even after ctx ended, so an interrupted point is kept (as incomplete).
func (r *runner) record(ctx context.Context, pts ...Point) error {
	rows := make([]store.LatencyPoint, 0, len(pts))
	for _, p := range pts {
		rows = append(rows, store.LatencyPoint{
			ModelSHA: r.job.Model.SHA256, DeviceType: r.devType, Size: p.Size, Batch: p.Batch,
			P50MS: p.P50MS, P99MS: float64(p.P99MS), MeanMS: float64(p.MeanMS), Samples: p.Samples,
			Complete: p.Complete, RunID: r.runID,
		})
	}
	if err := r.st().PutLatency(context.WithoutCancel(ctx), rows); err != nil {
		return fmt.Errorf("profile %s on %s: %w", r.job.Model.Name, r.job.Device.ID, err)
	}
	r.res.Points = append(r.res.Points, pts...)
	for _, p := range pts {
		if p.Complete {
			r.done++
		}
	}
	return nil
}

// recordUtil stores a point's utilisation (unknown values as NULL).
func (r *runner) recordUtil(ctx context.Context, u Util) error {
	if err := r.st().PutUtil(context.WithoutCancel(ctx), utilPoints(r.job.Model.SHA256, r.devType, u)); err != nil {
		return fmt.Errorf("profile %s on %s: %w", r.job.Model.Name, r.job.Device.ID, err)
	}
	r.res.Util = append(r.res.Util, u)
	return nil
}

// progress reports to the job's callback, if any.
func (r *runner) progress(p Progress) {
	if r.job.Progress != nil {
		r.job.Progress(p)
	}
}

// summarise sorts the result and computes fits and knees.
func (r *runner) summarise() {
	slices.SortFunc(r.res.Points, func(a, b Point) int {
		if a.Size != b.Size {
			return a.Size - b.Size
		}
		return a.Batch - b.Batch
	})
	r.res.Fits = fitPoints(r.res.Points, r.res.Sizes)
	if prof, err := r.res.Profile(); err == nil {
		r.res.Knees = kneesOf(prof, r.job.Model.SLOMS, r.res.Batches, r.res.Sizes)
	}
}
