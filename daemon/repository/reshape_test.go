package repository

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReshape(t *testing.T) {
	tests := []struct {
		name    string
		shape   []int64
		batched bool
		to      []int64
		want    []int64
		err     bool
	}{
		{"image to flat", []int64{2, 1, 28, 28}, true, []int64{784}, []int64{2, 784}, false},
		{"flat to image", []int64{3, 784}, true, []int64{1, 28, 28}, []int64{3, 1, 28, 28}, false},
		{"one to scalar", []int64{4, 1}, true, []int64{}, []int64{4}, false},
		{"scalar to one", []int64{4}, true, []int64{1}, []int64{4, 1}, false},
		{"unbatched scalar", []int64{1}, false, []int64{}, []int64{}, false},
		{"dynamic takes the rest", []int64{2, 6, 4}, true, []int64{-1, 8}, []int64{2, 3, 8}, false},
		{"unbatched dynamic", []int64{6, 4}, false, []int64{2, -1}, []int64{2, 12}, false},
		{"does not fit", []int64{2, 10}, true, []int64{3}, nil, true},
		{"dynamic does not divide", []int64{2, 10}, true, []int64{3, -1}, nil, true},
		{"batched without rows", []int64{}, true, []int64{1}, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Reshape(tc.shape, tc.batched, tc.to)
			if tc.err {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}
