package profiler

import (
	"encoding/json"
	"math"
	"strconv"

	"github.com/gpulet/gpuletd/gpulet"
)

// Num is a float64 whose unknown value is NaN; JSON writes NaN and ±Inf as
// null.
type Num float64

// MarshalJSON implements json.Marshaler.
func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

// UnmarshalJSON implements json.Unmarshaler: null reads as NaN.
func (n *Num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = Num(math.NaN())
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*n = Num(f)
	return nil
}

// Sources of a result's numbers.
const (
	// SourceMeasured: measured through real executors on this machine.
	SourceMeasured = "measured"
	// SourceStored: an earlier run's complete profile, reused.
	SourceStored = "stored"
	// SourceEmulatedPrefix starts the source of numbers read from an
	// emulated device's physics: "emulated:<set>".
	SourceEmulatedPrefix = "emulated:"
)

// Point is one operating point's latency.
type Point struct {
	Size  int     `json:"size"`
	Batch int     `json:"batch"`
	P50MS float64 `json:"p50_ms"`
	P99MS Num     `json:"p99_ms"`
	// MeanMS is unknown (null) for reused and emulated points.
	MeanMS  Num `json:"mean_ms"`
	Samples int `json:"samples"`
	// Stable says the stop rule's confidence intervals were met; false
	// when a cap ended the sampling (and for emulated points, which are
	// not sampled).
	Stable bool `json:"stable"`
	// Complete is false for a point whose sampling was interrupted.
	Complete bool `json:"complete"`
	// Derived marks an emulated point that its reference set filled rather
	// than measured.
	Derived bool `json:"derived,omitempty"`
}

// ExecutorInfo is what an executor reported about its gpu-let.
type ExecutorInfo struct {
	Size    int    `json:"size"`
	Engine  string `json:"engine"`
	Threads int    `json:"threads"`
	Cores   []int  `json:"cores,omitempty"`
	SMCount int    `json:"sm_count,omitempty"`
	// StartMS is the time from launching the executor to its first health
	// answer; LoadMS and WarmupMS are what it reported for loading the
	// model and running one warm-up batch of every profiled size. Together
	// they are what a reorganization waits for before a new gpu-let serves.
	StartMS  float64 `json:"start_ms,omitempty"`
	LoadMS   float64 `json:"load_ms,omitempty"`
	WarmupMS float64 `json:"warmup_ms,omitempty"`
	// PeakResidentMB is the most host memory the executor held resident,
	// read once every batch was sampled on it; 0: it did not say.
	PeakResidentMB float64 `json:"peak_resident_mb,omitempty"`
}

// Util is one operating point's solo utilisation, in percent of the whole
// device; unknown values are null, never 0, and each names its source.
type Util struct {
	Size       int    `json:"size"`
	Batch      int    `json:"batch"`
	SM         Num    `json:"sm"`
	SMSource   string `json:"sm_source"`
	L2         Num    `json:"l2"`
	L2Source   string `json:"l2_source"`
	DRAM       Num    `json:"dram"`
	DRAMSource string `json:"dram_source"`
}

// Pair is one co-location of the model with itself on two gpu-lets of one
// device: side A runs batches of BatchA on SizeA percent while side B runs
// BatchB on SizeB percent.
type Pair struct {
	SizeA  int `json:"size_a"`
	SizeB  int `json:"size_b"`
	BatchA int `json:"batch_a"`
	BatchB int `json:"batch_b"`
	// SoloAMS and SoloBMS are the solo p50 latencies at each side's (b,p).
	SoloAMS Num `json:"solo_a_ms"`
	SoloBMS Num `json:"solo_b_ms"`
	// ColocAMS and ColocBMS are the p50 latencies side by side.
	ColocAMS float64 `json:"coloc_a_ms"`
	ColocBMS float64 `json:"coloc_b_ms"`
	SamplesA int     `json:"samples_a"`
	SamplesB int     `json:"samples_b"`
	// Stable says both sides met the stop rule (false when a cap ended
	// the run, and for emulated and stored pairs).
	Stable bool   `json:"stable"`
	Source string `json:"source"`
}

// Result is what a job found.
type Result struct {
	Model      Model  `json:"model"`
	DeviceID   string `json:"device"`
	DeviceType string `json:"device_type"`
	// Source is SourceMeasured, SourceStored or "emulated:<set>".
	Source string `json:"source"`
	// Reused is true when the stored profile was reused.
	Reused bool  `json:"reused"`
	RunID  int64 `json:"run_id,omitempty"`
	// Rule is the stop rule as a sentence (measured runs).
	Rule      string         `json:"rule,omitempty"`
	Sizes     []int          `json:"sizes"`
	Batches   []int          `json:"batches"`
	Points    []Point        `json:"points"`
	Executors []ExecutorInfo `json:"executors,omitempty"`
	// ResidentMB is the model's host memory on the device type as the
	// store keeps it once the run measured it: the PeakResidentMB that
	// holds the most of the model (less the executor's own) of this run's
	// executors and earlier ones, or the stored one when the profile was
	// reused; 0 when unknown (emulated devices, older stores).
	ResidentMB float64 `json:"resident_mb,omitempty"`
	// ExecutorMB is the part of ResidentMB the executor held before it
	// loaded the model (its runtime); 0 when unknown.
	ExecutorMB float64 `json:"executor_mb,omitempty"`
	Fits       []Fit   `json:"fits"`
	// Knees are the knees of the affordable-rate curves (see Knees).
	Knees ProfileKnees `json:"knees"`
	Util  []Util       `json:"utilisation,omitempty"`
	Pairs []Pair       `json:"pairs,omitempty"`
	// PairsSource says where Pairs came from when they were asked for.
	PairsSource string `json:"pairs_source,omitempty"`
	// Notes are problems that did not stop the job (a utilisation meter
	// that failed, for one).
	Notes []string `json:"notes,omitempty"`
	// Interrupted says the job was stopped before it finished (Ctrl-C, a
	// time limit): Points and Pairs hold what was measured.
	Interrupted bool `json:"interrupted,omitempty"`
}

// Point returns the point (b,p), if the result has it.
func (r *Result) Point(size, batch int) (Point, bool) {
	for _, p := range r.Points {
		if p.Size == size && p.Batch == batch {
			return p, true
		}
	}
	return Point{}, false
}

// Profile builds the gpulet.Profile of the result's complete points, with
// their utilisation.
func (r *Result) Profile() (*gpulet.Profile, error) {
	util := map[[2]int]gpulet.Util{}
	for _, u := range r.Util {
		util[[2]int{u.Size, u.Batch}] = gpulet.Util{SM: float64(u.SM), L2: float64(u.L2), DRAM: float64(u.DRAM)}
	}
	var pts []gpulet.Point
	for _, p := range r.Points {
		if !p.Complete {
			continue
		}
		u, ok := util[[2]int{p.Size, p.Batch}]
		if !ok {
			u = gpulet.UnknownUtil()
		}
		p99 := float64(p.P99MS)
		if math.IsNaN(p99) {
			p99 = 0
		}
		pts = append(pts, gpulet.Point{Batch: p.Batch, Size: p.Size, P50MS: p.P50MS, P99MS: p99, Util: u, Derived: p.Derived})
	}
	return gpulet.NewProfile(r.Model.Name, r.DeviceType, 0, pts)
}

// Progress reports how a job advances.
type Progress struct {
	// Phase is "solo", "pairs" or "util".
	Phase string
	// Done and Total count the phase's operating points.
	Done, Total int
	// Size and Batch are the point being worked on (BatchB and SizeB the
	// other side of a co-location).
	Size, Batch   int
	SizeB, BatchB int
	// Samples taken of the current point so far.
	Samples int
	// Finished is set when the point is done; P50MS is then its median.
	Finished bool
	P50MS    float64
	Stable   bool
}
