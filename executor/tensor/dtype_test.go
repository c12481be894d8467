package tensor

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseDataType(t *testing.T) {
	tests := []struct {
		in      string
		want    DataType
		size    int
		wantErr bool
	}{
		{in: "BOOL", want: Bool, size: 1},
		{in: "UINT8", want: Uint8, size: 1},
		{in: "UINT16", want: Uint16, size: 2},
		{in: "UINT32", want: Uint32, size: 4},
		{in: "UINT64", want: Uint64, size: 8},
		{in: "INT8", want: Int8, size: 1},
		{in: "INT16", want: Int16, size: 2},
		{in: "INT32", want: Int32, size: 4},
		{in: "INT64", want: Int64, size: 8},
		{in: "FP16", want: FP16, size: 2},
		{in: "FP32", want: FP32, size: 4},
		{in: " FP64 ", want: FP64, size: 8},
		{in: "BYTES", want: Bytes, size: 0},
		{in: "fp32", wantErr: true},
		{in: "FLOAT", wantErr: true},
		{in: "BF16", want: BF16, size: 2},
		{in: "bf16", wantErr: true},
		{in: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseDataType(tt.in)
			if tt.wantErr {
				require.ErrorIs(t, err, ErrInvalidDataType)
				require.Contains(t, err.Error(), tt.in)
				require.False(t, DataType(tt.in).Valid())
				require.Zero(t, DataType(tt.in).Size())
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
			require.True(t, got.Valid())
			require.Equal(t, tt.size, got.Size())
			require.Equal(t, string(tt.want), got.String())
		})
	}
}

func TestDataTypesAreValidAndDistinct(t *testing.T) {
	all := DataTypes()
	require.Len(t, all, 14)
	seen := map[DataType]bool{}
	for _, d := range all {
		require.True(t, d.Valid(), d)
		require.False(t, seen[d], "duplicate %s", d)
		seen[d] = true
		back, err := ParseDataType(d.String())
		require.NoError(t, err)
		require.Equal(t, d, back)
	}
}

func FuzzParseDataType(f *testing.F) {
	for _, d := range DataTypes() {
		f.Add(string(d))
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDataType(s)
		if err != nil {
			require.ErrorIs(t, err, ErrInvalidDataType)
			require.Equal(t, DataType(""), d)
			return
		}
		require.True(t, d.Valid())
		require.GreaterOrEqual(t, d.Size(), 0)
		require.Contains(t, DataTypes(), d)
		again, err := ParseDataType(d.String())
		require.NoError(t, err)
		require.Equal(t, d, again)
	})
}

func TestSuggestDataType(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want DataType
		ok   bool
	}{
		{"float32", FP32, true}, {"FLOAT", FP32, true}, {"torch.int64", Int64, true}, {"np.uint8", Uint8, true},
		{"TYPE_FP16", FP16, true}, {"fp32", FP32, true}, {"Bf16", BF16, true}, {"string", Bytes, true},
		{"double", FP64, true}, {"complex64", "", false}, {"", "", false},
	} {
		got, ok := SuggestDataType(tc.in)
		require.Equal(t, tc.ok, ok, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
}
