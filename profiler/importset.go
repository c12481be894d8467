package profiler

import (
	"context"
	"fmt"
	"math"

	"github.com/gpulet/gpuletd/profiler/refset"
	"github.com/gpulet/gpuletd/profiler/store"
)

// ImportReport says what ImportSet stored.
type ImportReport struct {
	Set        string `json:"set"`
	DeviceType string `json:"device_type"`
	Models     int    `json:"models"`
	Points     int    `json:"points"`
	// Derived counts the points the set filled rather than measured.
	Derived int `json:"derived"`
	Util    int `json:"utilisation_rows"`
	Pairs   int `json:"pairs"`
	// ReplacedPairs is how many co-locations of an earlier import were
	// replaced.
	ReplacedPairs int64 `json:"replaced_pairs"`
}

// RefKey is the model key a reference set's curves are stored under:
// "<set>/<model>" (a model file's sha256 keys measured profiles).
func RefKey(set, model string) string { return set + "/" + model }

// ImportSet stores a reference set as an emulated device type: its
// description, every model's L(b,p) (complete, no samples; p99 and mean
// unknown, the sets give one latency per point), the solo L2/DRAM
// utilisation with the set's name as source (SM and anything the set lacks
// unknown), and its measured co-locations, which replace those of an earlier
// import of the same set. Importing twice stores the same rows.
func ImportSet(ctx context.Context, st *store.Store, set *refset.Set) (ImportReport, error) {
	rep := ImportReport{Set: set.Name, DeviceType: set.DeviceType, Models: len(set.Models)}
	part := store.PartitionNone
	switch set.Partitioning {
	case refset.PartitionMPS:
		part = store.PartitionMPS
	case refset.PartitionMIG:
		part = store.PartitionMIG
	}
	if _, err := st.UpsertDeviceType(ctx, store.DeviceType{Name: set.DeviceType, Source: set.Source, Partitioning: part,
		Sizes: set.Sizes, MemoryMB: set.MemoryGiB * 1024}); err != nil {
		return rep, fmt.Errorf("import set %s: %w", set.Name, err)
	}
	var lat []store.LatencyPoint
	var util []store.UtilPoint
	for _, m := range set.Models {
		key := RefKey(set.Name, m.Name)
		for _, p := range m.Profile.Points() {
			lat = append(lat, store.LatencyPoint{ModelSHA: key, DeviceType: set.DeviceType, Size: p.Size, Batch: p.Batch,
				P50MS: p.P50MS, P99MS: math.NaN(), MeanMS: math.NaN(), Complete: true})
			if p.Derived {
				rep.Derived++
			}
			u := emulatedUtil(set.Name, p.Size, p.Batch, p.Util.SM, p.Util.L2, p.Util.DRAM)
			util = append(util, utilPoints(key, set.DeviceType, u)...)
		}
	}
	if err := st.PutLatency(ctx, lat); err != nil {
		return rep, fmt.Errorf("import set %s: %w", set.Name, err)
	}
	rep.Points = len(lat)
	if err := st.PutUtil(ctx, util); err != nil {
		return rep, fmt.Errorf("import set %s: %w", set.Name, err)
	}
	rep.Util = len(util)
	samples := make([]store.InterferenceSample, 0, len(set.Pairs))
	for i, c := range set.Pairs {
		solo := func(model string, b, p int) float64 {
			m, _ := set.Model(model)
			if l, ok := m.Profile.Latency(b, p); ok {
				return l
			}
			return math.NaN()
		}
		x := store.InterferenceSample{DeviceType: set.DeviceType,
			ModelA: RefKey(set.Name, c.Model1), ModelB: RefKey(set.Name, c.Model2),
			BatchA: c.Batch1, BatchB: c.Batch2, SizeA: c.Size1, SizeB: c.Size2,
			SoloAMS: solo(c.Model1, c.Batch1, c.Size1), SoloBMS: solo(c.Model2, c.Batch2, c.Size2),
			ColocAMS: c.Latency1MS, ColocBMS: c.Latency2MS, Source: set.Name}
		if x.ColocAMS <= 0 || x.ColocBMS <= 0 {
			return rep, fmt.Errorf("import set %s: pair %d: %w: non-positive latency", set.Name, i+1, ErrBadJob)
		}
		samples = append(samples, x)
	}
	n, _, err := st.ReplaceInterferenceSamples(ctx, store.SampleMatch{DeviceType: set.DeviceType, Source: set.Name}, samples)
	if err != nil {
		return rep, fmt.Errorf("import set %s: %w", set.Name, err)
	}
	rep.Pairs, rep.ReplacedPairs = len(samples), n
	return rep, nil
}
