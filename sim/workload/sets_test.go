package workload

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/gpulet"
	"github.com/stretchr/testify/require"
)

func TestSetsAndSimulationFields(t *testing.T) {
	w, err := Load(filepath.Join("testdata", "sets.yaml"))
	require.NoError(t, err)
	require.Equal(t, "testdata", w.Dir)
	require.Equal(t, 30*time.Second, w.ReorganizePeriod())
	require.Equal(t, 12*time.Second, w.StartupDelay())
	n, err := w.Resolve()
	require.NoError(t, err)
	require.Len(t, n.Input.GPUs, 8)
	g := n.Input.GPUs[0]
	require.Equal(t, gpulet.BackendNone, g.Backend)
	require.InDelta(t, 11*1024, g.MemoryMB, 0)
	d := n.Input.Demands[0]
	require.InDelta(t, 25, d.SLOMS, 0, "the set's SLO")
	require.Equal(t, 24, d.Profile.MaxBatch(100))
	l, ok := d.Profile.Latency(16, 100)
	require.True(t, ok)
	require.InDelta(t, 1.053*16+5.072, l, 1e-9)
	require.Equal(t, []string{"resnet50"}, n.Profiles)
	ph := n.Physics[g.Type]
	require.NotNil(t, ph)
	require.Nil(t, ph.Model(), "no co-location data")
	require.Nil(t, n.Options.Interference)

	// Defaults: absent fields.
	w, err = Decode(strings.NewReader("devices: [{profiles: igniter-v100}]\nmodels: [{name: alexnet, rate: 1}]\n"), "w.yaml")
	require.NoError(t, err)
	require.Equal(t, DefaultReorganize, w.ReorganizePeriod())
	require.Equal(t, DefaultStartup, w.StartupDelay())
	require.Empty(t, w.Dir)
	w, err = Decode(strings.NewReader("devices: [{profiles: igniter-v100}]\nmodels: [{name: alexnet, rate: 1}]\nreorganize: 0s\nstartup: 0s\n"), "w.yaml")
	require.NoError(t, err)
	require.Zero(t, w.ReorganizePeriod(), "0s plans once")
	require.Zero(t, w.StartupDelay())
}

func TestValidateSets(t *testing.T) {
	valid := func() Workload {
		return Workload{
			Sets:    []LinearSet{{Name: "mine", Models: []LinearLine{{Name: "m", AlphaMS: 1, BetaMS: 5}}}},
			Devices: []Device{{Profiles: "mine", Count: 2}},
			Models:  []Model{{Name: "m", Rate: 100, SLOMS: 20}},
		}
	}
	neg := Duration(-time.Second)
	tests := []struct {
		name    string
		edit    func(w *Workload)
		field   string
		allowed string
	}{
		{"no name", func(w *Workload) { w.Sets[0].Name = "" }, "sets[0].name", "a set name"},
		{"reference name", func(w *Workload) { w.Sets[0].Name = "igniter-v100" }, "sets[0].name", "not a reference set"},
		{"name twice", func(w *Workload) { w.Sets = append(w.Sets, w.Sets[0]) }, "sets[1].name", "not used"},
		{"memory", func(w *Workload) { w.Sets[0].MemoryGiB = -1 }, "sets[0].memory_gib", "≥ 0"},
		{"max batch", func(w *Workload) { w.Sets[0].MaxBatch = 5000 }, "sets[0].max_batch", "1..4096"},
		{"no models", func(w *Workload) { w.Sets[0].Models = nil }, "sets[0].models", "at least one"},
		{"model name", func(w *Workload) { w.Sets[0].Models[0].Name = " " }, "sets[0].models[0].name", "a model name"},
		{"model twice", func(w *Workload) { w.Sets[0].Models = append(w.Sets[0].Models, w.Sets[0].Models[0]) }, "sets[0].models[1].name", "not used"},
		{"alpha", func(w *Workload) { w.Sets[0].Models[0].AlphaMS = 0 }, "sets[0].models[0].alpha_ms", "> 0"},
		{"beta", func(w *Workload) { w.Sets[0].Models[0].BetaMS = -1 }, "sets[0].models[0].beta_ms", "≥ 0"},
		{"slo", func(w *Workload) { w.Sets[0].Models[0].SLOMS = -1 }, "sets[0].models[0].slo_ms", "≥ 0"},
		{"reorganize", func(w *Workload) { w.Reorganize = &neg }, "reorganize", "≥ 0"},
		{"startup", func(w *Workload) { w.Startup = &neg }, "startup", "≥ 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := valid()
			require.NoError(t, w.Validate())
			tc.edit(&w)
			err := w.Validate()
			require.ErrorIs(t, err, ErrInvalid)
			var fe *FieldError
			require.True(t, errors.As(err, &fe))
			require.Equal(t, tc.field, fe.Field)
			require.Contains(t, fe.Allowed, tc.allowed)
		})
	}
	w := valid()
	w.Devices[0].Profiles = "yours"
	_, err := w.Resolve()
	var fe *FieldError
	require.True(t, errors.As(err, &fe))
	require.Equal(t, "devices[0].profiles", fe.Field)
	require.Contains(t, fe.Allowed, "the file's sets")
	w = valid()
	w.Devices[0].Partitioning = "mps"
	_, err = w.Resolve()
	require.True(t, errors.As(err, &fe))
	require.Equal(t, "devices[0].partitioning", fe.Field)
}
