package tensor

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFitDims(t *testing.T) {
	tests := []struct {
		name            string
		declared, shape []int64
		want            []int64
		err             string
	}{
		{name: "open dims take the shape", declared: []int64{3, -1, -1}, shape: []int64{3, 64, 48}, want: []int64{3, 64, 48}},
		{name: "no shape: open dims at 1", declared: []int64{3, -1, -1}, want: []int64{3, 1, 1}},
		{name: "no dims", declared: []int64{}, shape: []int64{}, want: []int64{}},
		{name: "fixed dims as they are", declared: []int64{4}, shape: []int64{4}, want: []int64{4}},
		{name: "the batch dimension given", declared: []int64{-1}, shape: []int64{1, 16},
			err: "2 dims given where the input has 1 (leave the batch dimension out)"},
		{name: "a fixed dim changed", declared: []int64{3, -1}, shape: []int64{4, 64}, err: "dim 0 is 4 where the input fixes it at 3"},
		{name: "a size of zero", declared: []int64{-1}, shape: []int64{0}, err: "dim 0 is 0: sizes are positive"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			declared := slices.Clone(tc.declared)
			got, err := FitDims(tc.declared, tc.shape)
			require.Equal(t, declared, tc.declared, "the declared dims stay as they were")
			if tc.err != "" {
				require.ErrorIs(t, err, ErrInvalid)
				require.EqualError(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}
