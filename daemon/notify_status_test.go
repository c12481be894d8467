package daemon

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStatusLine(t *testing.T) {
	served := func(name string, rate float64, requests int, attainment float64) statusModel {
		return statusModel{Name: name, Ready: true, Rate: rate, Window: windowStats{Requests: requests, Attainment: attainment}}
	}
	writable := storeStatus{Writable: true}
	gpulets := []statusGpulet{{ID: "gpu0-50-1", Device: "gpu0"}, {ID: "gpu0-50-2", Device: "gpu0"}, {ID: "gpu1-100-1", Device: "gpu1"}}
	cases := []struct {
		name string
		s    status
		want string
	}{
		{"starting", status{Store: writable, WaitingFor: []string{"resnet50"},
			Models: []statusModel{{Name: "resnet50", Reason: "waiting for a gpu-let: being placed"}, served("lenet5", 0, 0, 0)}},
			"waiting for resnet50 (profiling or placing); 1 of 2 models serve"},
		{"profiling", status{Store: writable, WaitingFor: []string{"lenet5", "resnet50"}, Profiling: &profilingStatus{Model: "resnet50", Device: "gpu0", Profile: 2, Of: 2},
			Models: []statusModel{{Name: "resnet50"}, {Name: "lenet5"}}},
			"profiling resnet50 on gpu0 (2 of 2); waiting for lenet5, resnet50; 0 of 2 models serve"},
		{"profiling beside, strict", status{Store: writable, WaitingFor: []string{"resnet50"}, Profiling: &profilingStatus{Model: "resnet50", Device: "gpu0", Beside: true},
			Models: []statusModel{{Name: "resnet50"}, served("lenet5", 0, 0, 0)}},
			"profiling resnet50 on gpu0 (beside the serving gpu-lets); waiting for resnet50; 1 of 2 models serve"},
		{"many waiting", status{Store: writable, WaitingFor: []string{"a", "b", "c", "d", "e"}, Models: make([]statusModel, 5)},
			"waiting for a, b, c and 2 more (profiling or placing); 0 of 5 models serve"},
		{"ready, idle", status{Ready: true, Store: writable, Gpulets: gpulets[:1], Models: []statusModel{served("a", 0, 0, 0)}},
			"ready: 1 model on 1 gpu-let of 1 device"},
		{"ready, serving", status{Ready: true, Store: writable, Gpulets: gpulets,
			Models: []statusModel{served("a", 300, 4096, 0.999), served("b", 100.4, 1000, 0.9)}},
			"ready: 2 models on 3 gpu-lets of 2 devices; 400 req/s, 98.0% of recent requests within SLO"},
		{"what to look at", status{Ready: true, Store: storeStatus{}, Restarts: 2, Gpulets: gpulets[:1],
			Models: []statusModel{served("a", 0, 10, 1), {Name: "b", State: stateUnservable, Reason: "no profile"}}},
			"ready: 1 model on 1 gpu-let of 1 device; 0 req/s, 100.0% of recent requests within SLO; 1 model cannot be served (gpuletd status says why); database read-only; 2 executor restarts"},
		{"strict readiness", status{Store: writable, NotReadyFor: []string{"broken"}, Gpulets: gpulets[:1],
			Models: []statusModel{served("a", 0, 0, 0), {Name: "broken", State: stateUnservable, Reason: "config.yaml: missing"}}},
			"not ready (strict_readiness) while broken cannot be served; 1 model cannot be served (gpuletd status says why)"},
		{"stopping", status{Store: writable}, "not ready"},
		{"a model on its way back", status{Ready: true, Store: writable, Gpulets: gpulets[:1],
			Models: []statusModel{served("a", 0, 0, 0), {Name: "b", State: stateWaiting, Reason: "waiting for a gpu-let: its executor on gpu0-50-2 died and is being started again"}}},
			"ready: 1 model on 1 gpu-let of 1 device; 1 model waiting for a gpu-let while the others serve (gpuletd status says why)"},
		{"warnings and errors of the last hour", status{Ready: true, Store: writable, Gpulets: gpulets[:1], Models: []statusModel{served("a", 0, 0, 0)},
			RecentProblems: recentProblems{Window: "1h0m0s", Warnings: 3, Errors: 1}},
			"ready: 1 model on 1 gpu-let of 1 device; 3 warnings, 1 error in the last hour (gpuletd events)"},
		{"near its planned capacity", status{Ready: true, Store: writable, Gpulets: gpulets, Capacity: &capacityStatus{Ratio: 1.1, Load: 400, Rate: 440},
			Models: []statusModel{served("a", 300, 4096, 0.999), served("b", 100.4, 1000, 0.9)}},
			"ready: 2 models on 3 gpu-lets of 2 devices; 400 req/s, 98.0% of recent requests within SLO; near its planned capacity: the GPUs place 1.10× the load planned for"},
		{"over it", status{Ready: true, Store: writable, Gpulets: gpulets[:1], Capacity: &capacityStatus{Ratio: 0.8, Load: 500, Rate: 400},
			Models: []statusModel{served("a", 500, 0, 0)}},
			"ready: 1 model on 1 gpu-let of 1 device; 500 req/s; over its planned capacity: the GPUs place 0.80× the load planned for"},
		{"room enough: not said", status{Ready: true, Store: writable, Gpulets: gpulets[:1], Capacity: &capacityStatus{Ratio: 3.4, Load: 100, Rate: 340},
			Models: []statusModel{served("a", 0, 0, 0)}},
			"ready: 1 model on 1 gpu-let of 1 device"},
		{"near its memory limit", status{Ready: true, Store: writable, Gpulets: gpulets[:1], Models: []statusModel{served("a", 0, 0, 0)},
			Memory: &memoryStatus{WorkingSetBytes: 3900 << 20, LimitBytes: 4 << 30, NearLimit: true}},
			"ready: 1 model on 1 gpu-let of 1 device; memory at 95% of its 4 GiB limit"},
		{"memory well under it: not said", status{Ready: true, Store: writable, Gpulets: gpulets[:1], Models: []statusModel{served("a", 0, 0, 0)},
			Memory: &memoryStatus{WorkingSetBytes: 1 << 30, LimitBytes: 4 << 30}},
			"ready: 1 model on 1 gpu-let of 1 device"},
		{"an error alone", status{Ready: true, Store: writable, Gpulets: gpulets[:1], Models: []statusModel{served("a", 0, 0, 0)},
			RecentProblems: recentProblems{Window: "1h0m0s", Errors: 1}},
			"ready: 1 model on 1 gpu-let of 1 device; 1 error in the last hour (gpuletd events)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, statusLine(tc.s))
		})
	}
}
