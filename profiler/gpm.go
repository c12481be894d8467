package profiler

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/gpulet/gpuletd/internal/ctxsleep"
	"github.com/gpulet/gpuletd/mps"
	"github.com/gpulet/gpuletd/profiler/store"
)

// GPMLib is the part of NVML the GPM meter uses; nvml.Interface has it.
type GPMLib interface {
	DeviceGetHandleByUUID(uuid string) (nvml.Device, nvml.Return)
	GpmQueryDeviceSupport(device nvml.Device) (nvml.GpmSupport, nvml.Return)
	GpmSampleAlloc() (nvml.GpmSample, nvml.Return)
	GpmSampleFree(sample nvml.GpmSample) nvml.Return
	GpmSampleGet(device nvml.Device, sample nvml.GpmSample) nvml.Return
	GpmMetricsGet(metrics *nvml.GpmMetricsGetType) nvml.Return
}

// GPM measures DRAM bandwidth and SM utilisation with NVML's GPU
// performance monitoring (Hopper and newer GPUs): two device samples taken
// Window apart while the point's executor runs batches back to back. GPM
// samples the whole device, so it works under MPS too; the values are in
// percent of the whole device. L2 utilisation is not among GPM's metrics and
// stays unknown.
type GPM struct {
	Lib GPMLib
	// Window is the time between the two samples (default 1 s; NVML needs
	// at least 100 ms).
	Window time.Duration
	// Settle is how long the work runs before the first sample (default
	// 100 ms), so the window sees steady state.
	Settle time.Duration

	mu        sync.Mutex
	supported map[string]bool
}

// Source implements UtilMeter.
func (g *GPM) Source() string { return store.SourceNVMLGPM }

// Covers implements UtilMeter: NVIDIA GPUs whose NVML reports GPM support,
// any size.
func (g *GPM) Covers(d mps.Device, _ int) bool {
	if d.Kind != mps.KindNVIDIA || d.UUID == "" || g.Lib == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if ok, seen := g.supported[d.UUID]; seen {
		return ok
	}
	if g.supported == nil {
		g.supported = map[string]bool{}
	}
	ok := false
	if h, ret := g.Lib.DeviceGetHandleByUUID(d.UUID); ret == nvml.SUCCESS {
		s, ret := g.Lib.GpmQueryDeviceSupport(h)
		ok = ret == nvml.SUCCESS && s.IsSupportedDevice != 0
	}
	g.supported[d.UUID] = ok
	return ok
}

// Measure implements UtilMeter.
func (g *GPM) Measure(ctx context.Context, t UtilTarget) (UtilReading, error) {
	fail := func(what string, ret nvml.Return) (UtilReading, error) {
		return unknownReading(), fmt.Errorf("gpm on %s: %s: %w: %s", t.Device.ID, what, ErrUtilisation, nvml.ErrorString(ret))
	}
	if t.Work == nil {
		return unknownReading(), fmt.Errorf("gpm on %s: %w: nothing runs the point", t.Device.ID, ErrUtilisation)
	}
	window, settle := g.Window, g.Settle
	if window <= 0 {
		window = time.Second
	}
	window = max(window, 100*time.Millisecond)
	if settle <= 0 {
		settle = 100 * time.Millisecond
	}
	dev, ret := g.Lib.DeviceGetHandleByUUID(t.Device.UUID)
	if ret != nvml.SUCCESS {
		return fail("find the device", ret)
	}
	var samples [2]nvml.GpmSample
	for i := range samples {
		s, ret := g.Lib.GpmSampleAlloc()
		if ret != nvml.SUCCESS {
			return fail("allocate a sample", ret)
		}
		defer g.Lib.GpmSampleFree(s)
		samples[i] = s
	}

	wctx, stop := context.WithCancel(ctx)
	workErr := make(chan error, 1)
	go func() { workErr <- t.Work(wctx) }()
	sampled := func() (UtilReading, error) {
		if ctxsleep.Sleep(ctx, settle) != nil {
			return unknownReading(), ctx.Err()
		}
		if ret := g.Lib.GpmSampleGet(dev, samples[0]); ret != nvml.SUCCESS {
			return fail("take the first sample", ret)
		}
		if ctxsleep.Sleep(ctx, window) != nil {
			return unknownReading(), ctx.Err()
		}
		if ret := g.Lib.GpmSampleGet(dev, samples[1]); ret != nvml.SUCCESS {
			return fail("take the second sample", ret)
		}
		return g.metrics(t, samples)
	}
	r, err := sampled()
	stop()
	if werr := <-workErr; werr != nil && !errors.Is(werr, context.Canceled) && err == nil {
		return unknownReading(), fmt.Errorf("gpm on %s: run the point: %w", t.Device.ID, werr)
	}
	return r, err
}

// metrics computes DRAM bandwidth and SM utilisation between two samples.
func (g *GPM) metrics(t UtilTarget, s [2]nvml.GpmSample) (UtilReading, error) {
	m := &nvml.GpmMetricsGetType{NumMetrics: 2, Sample1: s[0], Sample2: s[1]}
	m.Metrics[0].MetricId = uint32(nvml.GPM_METRIC_DRAM_BW_UTIL)
	m.Metrics[1].MetricId = uint32(nvml.GPM_METRIC_SM_UTIL)
	if ret := g.Lib.GpmMetricsGet(m); ret != nvml.SUCCESS {
		return unknownReading(), fmt.Errorf("gpm on %s: compute metrics: %w: %s", t.Device.ID, ErrUtilisation, nvml.ErrorString(ret))
	}
	val := func(i int) float64 {
		mt := m.Metrics[i]
		if nvml.Return(mt.NvmlReturn) != nvml.SUCCESS || math.IsNaN(mt.Value) || math.IsInf(mt.Value, 0) || mt.Value < 0 {
			return math.NaN()
		}
		return mt.Value
	}
	r := UtilReading{SM: val(1), L2: math.NaN(), DRAM: val(0)}
	if math.IsNaN(r.SM) && math.IsNaN(r.DRAM) {
		return unknownReading(), fmt.Errorf("gpm on %s: %w: NVML returned no metric", t.Device.ID, ErrUtilisation)
	}
	return r, nil
}
