package profiler

import (
	"context"
	"math"

	"github.com/gpulet/gpuletd/mps"
	"github.com/gpulet/gpuletd/profiler/store"
	"go.uber.org/zap"
)

// UtilTarget is the operating point a meter measures: the model running
// batches of Batch alone on a gpu-let of Size percent of Device.
type UtilTarget struct {
	Model  Model
	Device mps.Device
	Size   int
	Batch  int
	// Work runs batches of Batch on the point's executor, one after
	// another, until ctx ends; meters that sample device counters while the
	// model runs (GPM) call it. Nil on emulated devices.
	Work func(ctx context.Context) error
}

// UtilReading is what a meter read, in percent of the whole device; a value
// it cannot give is NaN.
type UtilReading struct {
	SM, L2, DRAM float64
}

// unknownReading has every value unknown.
func unknownReading() UtilReading {
	return UtilReading{SM: math.NaN(), L2: math.NaN(), DRAM: math.NaN()}
}

// UtilMeter measures the solo utilisation of operating points.
type UtilMeter interface {
	// Source names the meter as the store records it (store.SourceNCU,
	// store.SourceNVMLGPM).
	Source() string
	// Covers reports whether the meter can measure a point of this size on
	// this device (Nsight Compute, for one, only runs outside MPS: size
	// 100).
	Covers(d mps.Device, size int) bool
	// Measure reads the point's utilisation.
	Measure(ctx context.Context, t UtilTarget) (UtilReading, error)
}

// measureUtil asks every meter that covers the point, in order; each metric
// takes the first known value and its meter's source, the rest stay unknown
// (source store.SourceUnknown). A meter's failure is logged and noted, and
// leaves its metrics to the next meter.
func measureUtil(ctx context.Context, meters []UtilMeter, t UtilTarget, log *zap.Logger) (Util, []string) {
	u := Util{Size: t.Size, Batch: t.Batch,
		SM: Num(math.NaN()), SMSource: store.SourceUnknown,
		L2: Num(math.NaN()), L2Source: store.SourceUnknown,
		DRAM: Num(math.NaN()), DRAMSource: store.SourceUnknown,
	}
	var notes []string
	for _, m := range meters {
		if !m.Covers(t.Device, t.Size) {
			continue
		}
		r, err := m.Measure(ctx, t)
		if err != nil {
			if ctx.Err() != nil {
				return u, notes
			}
			log.Warn("utilisation not measured", zap.String("meter", m.Source()), zap.Int("size", t.Size), zap.Int("batch", t.Batch), zap.Error(err))
			notes = append(notes, err.Error())
			continue
		}
		take := func(v float64, dst *Num, src *string) {
			if math.IsNaN(float64(*dst)) && !math.IsNaN(v) && !math.IsInf(v, 0) && v >= 0 {
				*dst, *src = Num(v), m.Source()
			}
		}
		take(r.SM, &u.SM, &u.SMSource)
		take(r.L2, &u.L2, &u.L2Source)
		take(r.DRAM, &u.DRAM, &u.DRAMSource)
	}
	return u, notes
}

// utilPoints turns a Util into the store's three rows.
func utilPoints(sha, deviceType string, u Util) []store.UtilPoint {
	return []store.UtilPoint{
		{ModelSHA: sha, DeviceType: deviceType, Size: u.Size, Batch: u.Batch, Metric: store.MetricSM, Value: float64(u.SM), Source: u.SMSource},
		{ModelSHA: sha, DeviceType: deviceType, Size: u.Size, Batch: u.Batch, Metric: store.MetricL2, Value: float64(u.L2), Source: u.L2Source},
		{ModelSHA: sha, DeviceType: deviceType, Size: u.Size, Batch: u.Batch, Metric: store.MetricDRAM, Value: float64(u.DRAM), Source: u.DRAMSource},
	}
}
