package daemon

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/mps"
)

// fakeMIG is a GPU's MIG instances as the device layer would keep them.
type fakeMIG struct {
	free    []mps.MIGInstance
	applied [][]string
	after   []mps.MIGInstance // what a layout change leaves free
	err     error
}

func (f *fakeMIG) FreeMIGInstances(string) ([]mps.MIGInstance, error) { return f.free, nil }

func (f *fakeMIG) ApplyMIG(_ string, want []string) ([]mps.MIGInstance, error) {
	f.applied = append(f.applied, want)
	if f.err != nil {
		return nil, f.err
	}
	f.free = f.after
	return f.after, nil
}

func TestChooseMIGInstance(t *testing.T) {
	dev := mps.Device{ID: "gpu0", Index: 0, UUID: "GPU-1", Kind: mps.KindNVIDIA, Backend: mps.BackendMIG}
	threeG := mps.MIGInstance{Profile: "3g.40gb", Size: 42, UUID: "MIG-3"}
	fourG := mps.MIGInstance{Profile: "4g.40gb", Size: 57, UUID: "MIG-4"}
	let3 := gpulet.GPULet{Size: 42, MIGProfile: "3g.40gb"}
	layout := []string{"4g.40gb", "3g.40gb"}
	tests := []struct {
		name        string
		mig         fakeMIG
		let         gpulet.GPULet
		reconfigure bool
		want        string
		changed     bool
		applied     int
		err         string
	}{
		{name: "free instance used as it is", mig: fakeMIG{free: []mps.MIGInstance{fourG, threeG}}, let: let3, want: "MIG-3"},
		{name: "by size without a profile", mig: fakeMIG{free: []mps.MIGInstance{fourG, threeG}}, let: gpulet.GPULet{Size: 57}, want: "MIG-4"},
		{name: "the GPU's own name for the plan's profile", mig: fakeMIG{free: []mps.MIGInstance{{Profile: "7g.79gb", Size: 100, UUID: "MIG-7"}}},
			let: gpulet.GPULet{Size: 100, MIGProfile: "7g.80gb"}, want: "MIG-7"},
		{name: "bare slice profile", mig: fakeMIG{free: []mps.MIGInstance{threeG}}, let: gpulet.GPULet{MIGProfile: "3g"}, want: "MIG-3"},
		{name: "none and may not change", mig: fakeMIG{free: []mps.MIGInstance{fourG}}, let: let3,
			err: "no free MIG instance 3g.40gb on gpu0 (free: 4g.40gb) and partitioning.mig_reconfigure does not let gpuletd change its instances"},
		{name: "laid out when allowed", mig: fakeMIG{after: []mps.MIGInstance{fourG, threeG}}, let: let3, reconfigure: true,
			want: "MIG-3", changed: true, applied: 1},
		{name: "layout refused", mig: fakeMIG{err: mps.ErrMIGInUse}, let: let3, reconfigure: true, applied: 1,
			err: "lay out MIG instances [4g.40gb 3g.40gb] on gpu0"},
		{name: "layout without the instance", mig: fakeMIG{after: []mps.MIGInstance{fourG}}, let: let3, reconfigure: true, applied: 1,
			err: "no free MIG instance 3g.40gb on gpu0 after laying out"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := tt.mig
			uuid, changed, err := chooseMIGInstance(&m, dev, tt.let, layout, tt.reconfigure)
			require.Len(t, m.applied, tt.applied)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				if tt.mig.err != nil {
					require.True(t, errors.Is(err, tt.mig.err))
				}
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, uuid)
			require.Equal(t, tt.changed, changed)
		})
	}
}

func TestMIGReconfigurable(t *testing.T) {
	dev := mps.Device{ID: "gpu1", Index: 1, UUID: "GPU-abc"}
	for _, tt := range []struct {
		allowed []string
		want    bool
	}{
		{nil, false}, {[]string{"0"}, false}, {[]string{"1"}, true}, {[]string{"GPU-abc"}, true},
		{[]string{"all"}, true}, {[]string{"gpu1"}, true}, {[]string{""}, false},
	} {
		require.Equal(t, tt.want, migReconfigurable(tt.allowed, dev), "%v", tt.allowed)
	}
}

func TestMIGLayout(t *testing.T) {
	gp := &gpulet.GPUPlan{GPULets: []gpulet.GPULet{{Size: 57, MIGProfile: "4g.40gb"}, {Size: 42}, {Size: 14}}}
	require.Equal(t, []string{"4g.40gb", "3g", "1g"}, migLayout(gp))
}

func TestMemoryLimit(t *testing.T) {
	gpu := mps.Device{Kind: mps.KindNVIDIA, Backend: mps.BackendMPS}
	mig := mps.Device{Kind: mps.KindNVIDIA, Backend: mps.BackendMIG}
	cpu := mps.Device{Kind: mps.KindCPU, Backend: mps.BackendCPU}
	let := gpulet.GPULet{Size: 40, Models: []gpulet.Placement{{MemoryMB: 3000}, {MemoryMB: 1000}}}
	plan := &gpulet.GPUPlan{MemoryMB: 80000, MemoryUsedMB: 30000} // 26 000 planned for the others
	for _, tt := range []struct {
		name string
		dev  mps.Device
		let  gpulet.GPULet
		gp   *gpulet.GPUPlan
		want int
	}{
		{"others' share is kept", gpu, let, plan, 80000 - 26000},
		{"no memory known", gpu, gpulet.GPULet{Size: 40, Models: []gpulet.Placement{{}}}, plan, 0},
		{"MIG bounds it", mig, let, plan, 0},
		{"CPU", cpu, let, plan, 0},
		{"no plan", gpu, let, nil, 0},
		{"plan over the GPU", gpu, let, &gpulet.GPUPlan{MemoryMB: 10000, MemoryUsedMB: 20000}, 0},
	} {
		require.Equal(t, tt.want, memoryLimitMB(tt.dev, tt.let, tt.gp), tt.name)
	}
}
