package migrules

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLookup(t *testing.T) {
	tests := []struct {
		name    string
		want    string
		wantErr error
	}{
		{"NVIDIA A100-SXM4-40GB", A100_40GB, nil},
		{"Mock NVIDIA A100-SXM4-40GB", A100_40GB, nil},
		{"NVIDIA A100-PCIE-40GB", A100_40GB, nil},
		{"NVIDIA A100-SXM4-80GB", A100_80GB, nil},
		{"NVIDIA A100 80GB PCIe", A100_80GB, nil},
		{"NVIDIA H100 80GB HBM3", H100_80GB, nil},
		{"NVIDIA H100 PCIe", H100_80GB, nil},
		{"h100-80gb", H100_80GB, nil},
		{"NVIDIA H100 NVL", "", ErrUnknownModel},
		{"Tesla V100-SXM2-16GB", "", ErrUnknownModel},
		{"", "", ErrUnknownModel},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := Lookup(tt.name)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, g.Model)
			require.Equal(t, 7, g.ComputeSlices)
			require.Equal(t, 8, g.MemorySlots)
		})
	}
}

func TestLookupReturnsCopy(t *testing.T) {
	g, err := Lookup(A100_40GB)
	require.NoError(t, err)
	g.Profiles[0].Starts[0] = 99
	g.Profiles[1].MaxCount = 50
	again, err := Lookup(A100_40GB)
	require.NoError(t, err)
	require.Equal(t, 0, again.Profiles[0].Starts[0])
	require.Equal(t, 1, again.Profiles[1].MaxCount)
}

func TestProfileNamesAndSizes(t *testing.T) {
	a40, err := Lookup(A100_40GB)
	require.NoError(t, err)
	require.Equal(t, []string{"1g.5gb", "1g.5gb+me", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"}, a40.ProfileNames())
	h, err := Lookup(H100_80GB)
	require.NoError(t, err)
	require.Equal(t, []string{"1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"}, h.ProfileNames())
	require.Equal(t, []int{14, 29, 43, 57, 100}, h.Sizes())

	tests := []struct {
		gpu     GPU
		name    string
		want    string
		wantErr bool
	}{
		{a40, "3g", "3g.20gb", false},
		{a40, "1g", "1g.5gb", false},
		{a40, "1g.10gb", "1g.10gb", false},
		{h, "7g", "7g.80gb", false},
		{h, "1g.10gb+me", "1g.10gb+me", false},
		{h, "5g", "", true},
		{h, "3g.20gb", "", true},
		{h, "g", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.gpu.Model+"/"+tt.name, func(t *testing.T) {
			p, err := tt.gpu.Profile(tt.name)
			if tt.wantErr {
				require.ErrorIs(t, err, ErrUnknownProfile)
				require.ErrorContains(t, err, tt.name)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, p.Name())
		})
	}
}

func TestProfileForSize(t *testing.T) {
	h, err := Lookup(H100_80GB)
	require.NoError(t, err)
	for size, want := range map[int]string{14: "1g.10gb", 29: "2g.20gb", 43: "3g.40gb", 57: "4g.40gb", 100: "7g.80gb"} {
		p, err := h.ProfileForSize(size)
		require.NoError(t, err)
		require.Equal(t, want, p.Name())
	}
	_, err = h.ProfileForSize(50)
	require.ErrorIs(t, err, ErrUnknownProfile)
}

func TestSizePercent(t *testing.T) {
	require.Equal(t, 14, SizePercent(1, 7))
	require.Equal(t, 43, SizePercent(3, 7))
	require.Equal(t, 50, SizePercent(2, 4))
	require.Equal(t, 0, SizePercent(1, 0))
}
