package profiler

import (
	"context"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/gpulet/gpuletd/mps"
	"github.com/stretchr/testify/require"
)

// fakeGPM is an NVML whose GPM counters say DRAM dram% and SM sm% for
// whatever ran between two samples, with support switched by supported.
func fakeGPM(supported bool, dram, sm float64, metricsRet nvml.Return) (*mock.Interface, *atomic.Int32) {
	freed := &atomic.Int32{}
	dev := &mock.Device{}
	lib := &mock.Interface{
		DeviceGetHandleByUUIDFunc: func(uuid string) (nvml.Device, nvml.Return) {
			if uuid != "GPU-h100" {
				return nil, nvml.ERROR_NOT_FOUND
			}
			return dev, nvml.SUCCESS
		},
		GpmQueryDeviceSupportFunc: func(nvml.Device) (nvml.GpmSupport, nvml.Return) {
			s := nvml.GpmSupport{Version: nvml.GPM_SUPPORT_VERSION}
			if supported {
				s.IsSupportedDevice = 1
			}
			return s, nvml.SUCCESS
		},
		GpmSampleAllocFunc: func() (nvml.GpmSample, nvml.Return) { return &mock.GpmSample{}, nvml.SUCCESS },
		GpmSampleFreeFunc:  func(nvml.GpmSample) nvml.Return { freed.Add(1); return nvml.SUCCESS },
		GpmSampleGetFunc: func(d nvml.Device, _ nvml.GpmSample) nvml.Return {
			if d != dev {
				return nvml.ERROR_INVALID_ARGUMENT
			}
			return nvml.SUCCESS
		},
		GpmMetricsGetFunc: func(m *nvml.GpmMetricsGetType) nvml.Return {
			if metricsRet != nvml.SUCCESS {
				return metricsRet
			}
			for i := range int(m.NumMetrics) {
				switch nvml.GpmMetricId(m.Metrics[i].MetricId) {
				case nvml.GPM_METRIC_DRAM_BW_UTIL:
					m.Metrics[i].Value = dram
				case nvml.GPM_METRIC_SM_UTIL:
					m.Metrics[i].Value = sm
				default:
					m.Metrics[i].NvmlReturn = uint32(nvml.ERROR_NOT_SUPPORTED)
				}
			}
			return nvml.SUCCESS
		},
	}
	return lib, freed
}

func TestGPMMeter(t *testing.T) {
	h100 := mps.Device{ID: "gpu0", Kind: mps.KindNVIDIA, UUID: "GPU-h100", Backend: mps.BackendMPS, Sizes: []int{50, 100}}
	v100 := mps.Device{ID: "gpu1", Kind: mps.KindNVIDIA, UUID: "GPU-v100", Backend: mps.BackendMPS, Sizes: []int{50, 100}}
	tests := []struct {
		name       string
		supported  bool
		metricsRet nvml.Return
		device     mps.Device
		wantCover  bool
		wantDRAM   float64
		wantSM     float64
		wantErr    error
	}{
		{name: "hopper", supported: true, device: h100, wantCover: true, wantDRAM: 41.5, wantSM: 77},
		{name: "no GPM before hopper", supported: false, device: h100},
		{name: "unknown device", supported: true, device: v100},
		{name: "cpu", supported: true, device: cpuDevice()},
		{name: "metrics fail", supported: true, device: h100, wantCover: true, metricsRet: nvml.ERROR_UNKNOWN, wantErr: ErrUtilisation},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ret := tt.metricsRet
			if ret == 0 {
				ret = nvml.SUCCESS
			}
			lib, freed := fakeGPM(tt.supported, 41.5, 77, ret)
			g := &GPM{Lib: lib, Window: 100 * time.Millisecond, Settle: time.Millisecond}
			require.Equal(t, tt.wantCover, g.Covers(tt.device, 50))
			if !tt.wantCover {
				return
			}
			var batches atomic.Int32
			work := func(ctx context.Context) error {
				for ctx.Err() == nil {
					batches.Add(1)
					time.Sleep(time.Millisecond)
				}
				return nil
			}
			r, err := g.Measure(context.Background(), UtilTarget{Model: testModel("m"), Device: tt.device, Size: 50, Batch: 4, Work: work})
			require.Equal(t, int32(2), freed.Load(), "both samples are freed")
			require.Positive(t, batches.Load(), "the point ran while GPM sampled")
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.wantDRAM, r.DRAM)
			require.Equal(t, tt.wantSM, r.SM)
			require.True(t, math.IsNaN(r.L2), "GPM has no L2 metric: unknown, never 0")
		})
	}
}

func TestGPMStopsWithTheContext(t *testing.T) {
	lib, _ := fakeGPM(true, 1, 1, nvml.SUCCESS)
	g := &GPM{Lib: lib, Window: time.Hour, Settle: time.Millisecond}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := g.Measure(ctx, UtilTarget{Device: mps.Device{ID: "gpu0", Kind: mps.KindNVIDIA, UUID: "GPU-h100"},
		Work: func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }})
	require.ErrorIs(t, err, context.DeadlineExceeded)
}
