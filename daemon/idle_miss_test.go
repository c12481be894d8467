package daemon

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestIdleMissWarning(t *testing.T) {
	missing := windowStats{Requests: 4096, Attainment: 0.9396}
	idle := []letBusy{{id: "emu0-100-6", busy: 0.191, up: time.Minute}}
	for _, tc := range []struct {
		name string
		w    windowStats
		lets []letBusy
		want string // "" for no warning, else a part of it
	}{
		{"misses on an idle gpu-let", missing, idle, "93.9% of its last 4096 requests were answered within its SLO on gpu-lets that ran batches a small part of the time (emu0-100-6 19% since their executors started)"},
		{"on two, both idle", missing, append([]letBusy{{id: "emu1-20-2", busy: 0.4, up: time.Hour}}, idle...), "(emu0-100-6 19%, emu1-20-2 40% since"},
		{"within the miss rule's share", windowStats{Requests: 4096, Attainment: 0.992}, idle, ""},
		{"too few requests to say", windowStats{Requests: 999, Attainment: 0.5}, idle, ""},
		{"a busy gpu-let: the miss rule's case", missing, []letBusy{{id: "emu0-20-1", busy: 0.93, up: time.Minute}}, ""},
		{"one of its gpu-lets busy", missing, append([]letBusy{{id: "emu1-20-2", busy: 0.7, up: time.Hour}}, idle...), ""},
		{"an executor too new to say", missing, []letBusy{{id: "emu0-100-6", busy: 0.01, up: 5 * time.Second}}, ""},
		{"on no gpu-let", missing, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := idleMissWarning("lenet5", tc.w, tc.lets)
			if tc.want == "" {
				require.Empty(t, got)
				return
			}
			require.Contains(t, got, tc.want)
			require.Contains(t, got, "gpuletd trace set --model lenet5 trace_level=TIMESTAMPS")
		})
	}
}
