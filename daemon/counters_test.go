package daemon

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestShareCountSumsBatches(t *testing.T) {
	tests := []struct {
		name    string
		batches []int // each batch's size; every answer of it adds 1/size
		want    int64
	}{
		{name: "none", want: 0},
		{name: "batches of one", batches: []int{1, 1, 1}, want: 3},
		{name: "mixed sizes", batches: []int{3, 7, 1, 32, 5}, want: 5},
		{name: "many thirds", batches: repeat(3, 10_000), want: 10_000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s shareCount
			var wg sync.WaitGroup
			for _, b := range tt.batches {
				for range b { // a batch's answers, concurrently
					wg.Add(1)
					go func() {
						defer wg.Done()
						s.add(1 / float64(b))
					}()
				}
			}
			wg.Wait()
			require.Equal(t, tt.want, s.whole())
		})
	}
}

func repeat(v, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = v
	}
	return out
}
