package cpushare

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCoresForSize(t *testing.T) {
	tests := []struct {
		size, n int
		want    int
		wantErr error
	}{
		{50, 2, 1, nil},
		{100, 2, 2, nil},
		{25, 2, 1, nil}, // half a core rounds up
		{24, 2, 0, ErrNoWholeCore},
		{20, 2, 0, ErrNoWholeCore},
		{60, 2, 1, nil},
		{80, 2, 2, nil},
		{20, 16, 3, nil},
		{40, 16, 6, nil},
		{1, 100, 1, nil},
		{0, 4, 0, ErrBadSize},
		{101, 4, 0, ErrBadSize},
		{50, 0, 0, ErrNoWholeCore},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d%%of%d", tt.size, tt.n), func(t *testing.T) {
			k, err := CoresForSize(tt.size, tt.n)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, k)
		})
	}
	_, err := CoresForSize(20, 2)
	require.ErrorContains(t, err, "20% of 2 cores is 0.40 cores (smallest size: 25%)")
}

func TestSizeOfAndMinSize(t *testing.T) {
	require.Equal(t, 50, SizeOf(1, 2))
	require.Equal(t, 33, SizeOf(1, 3))
	require.Equal(t, 0, SizeOf(1, 0))
	require.Equal(t, 25, MinSize(2))
	require.Equal(t, 4, MinSize(16))
	require.Equal(t, 50, MinSize(1))
}

func TestList(t *testing.T) {
	tests := []struct {
		in      string
		want    []int
		wantErr bool
	}{
		{"0,1", []int{0, 1}, false},
		{"0-3,8", []int{0, 1, 2, 3, 8}, false},
		{" 3, 1 ,1", []int{1, 3}, false},
		{"5", []int{5}, false},
		{"", nil, true},
		{"a", nil, true},
		{"3-1", nil, true},
		{"-1", nil, true},
		{"0,", nil, true},
		{"1024", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseList(tt.in)
			if tt.wantErr {
				require.ErrorIs(t, err, ErrBadCoreList)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
			again, err := ParseList(FormatList(got))
			require.NoError(t, err)
			require.Equal(t, got, again)
		})
	}
	require.Equal(t, "0,2,7", FormatList([]int{7, 0, 2}))
}

func TestAllocator(t *testing.T) {
	a := NewAllocator([]int{1, 0})
	require.Equal(t, []int{0, 1}, a.Cores())

	first, err := a.Allocate("g1", 50)
	require.NoError(t, err)
	second, err := a.Allocate("g2", 50)
	require.NoError(t, err)
	require.Equal(t, []int{0}, first)
	require.Equal(t, []int{1}, second)
	require.Empty(t, a.Free())

	_, err = a.Allocate("g3", 50)
	require.ErrorIs(t, err, ErrNoFreeCores)
	_, err = a.Allocate("g3", 20)
	require.ErrorIs(t, err, ErrNoWholeCore)

	a.Release("g2", first) // not g2's: left
	require.Empty(t, a.Free())
	a.Release("g1", first)
	require.Equal(t, []int{0}, a.Free())
	_, err = a.Allocate("g4", 100)
	require.ErrorIs(t, err, ErrNoFreeCores)
	got, err := a.Allocate("g4", 50)
	require.NoError(t, err)
	require.Equal(t, []int{0}, got)
}

// TestAllocatorTakeOver: a gpu-let started over others about to stop takes
// the free cores first, then their highest; it keeps them when they
// release theirs.
func TestAllocatorTakeOver(t *testing.T) {
	cases := []struct {
		name string
		size int
		from []string
		want []int
		err  error
	}{
		{"free cores first", 25, []string{"old"}, []int{3}, nil},
		{"then the highest of theirs", 75, []string{"old"}, []int{1, 2, 3}, nil},
		{"all of theirs", 100, []string{"old"}, []int{0, 1, 2, 3}, nil},
		{"not another's", 100, []string{"nobody"}, nil, ErrNoFreeCores},
		{"none named", 50, nil, nil, ErrNoFreeCores},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := NewAllocator([]int{0, 1, 2, 3})
			old, err := a.Allocate("old", 75)
			require.NoError(t, err)
			require.Equal(t, []int{0, 1, 2}, old)
			got, err := a.Allocate("new", tc.size, tc.from...)
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				require.Equal(t, []int{3}, a.Free(), "a refusal takes nothing")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			a.Release("old", old)
			var left []int
			for _, c := range a.Cores() {
				if !slices.Contains(got, c) {
					left = append(left, c)
				}
			}
			require.Equal(t, left, a.Free(), "the old owner's release leaves the cores taken over")
		})
	}
}

func TestAllocatorBorrow(t *testing.T) {
	a := NewAllocator([]int{0, 1, 2, 3})
	_, err := a.Allocate("g1", 50)
	require.NoError(t, err)
	cases := []struct {
		size int
		want []int
	}{
		{25, []int{2}},           // a free core
		{50, []int{2, 3}},        // the free ones
		{75, []int{1, 2, 3}},     // then the highest taken
		{100, []int{0, 1, 2, 3}}, // all
	}
	for _, tc := range cases {
		got, err := a.Borrow(tc.size)
		require.NoError(t, err)
		require.Equal(t, tc.want, got, "size %d", tc.size)
	}
	require.Equal(t, []int{2, 3}, a.Free(), "borrowing takes nothing")
	_, err = a.Borrow(10)
	require.ErrorIs(t, err, ErrNoWholeCore)
}

func TestAllocatorConcurrent(t *testing.T) {
	cpus := make([]int, 16)
	for i := range cpus {
		cpus[i] = i
	}
	a := NewAllocator(cpus)
	var wg sync.WaitGroup
	results := make([][]int, 8)
	for i := range 8 {
		wg.Go(func() {
			got, err := a.Allocate(fmt.Sprint("g", i), 13) // 2 cores each
			if err == nil {
				results[i] = got
			}
		})
	}
	wg.Wait()
	seen := map[int]bool{}
	for _, r := range results {
		require.Len(t, r, 2)
		for _, c := range r {
			require.False(t, seen[c], "core %d given twice", c)
			seen[c] = true
		}
	}
}

func TestOnline(t *testing.T) {
	cpus, err := Online()
	require.NoError(t, err)
	require.NotEmpty(t, cpus)
	require.IsIncreasing(t, cpus)
}

func TestApplyRefusesBadLists(t *testing.T) {
	require.ErrorIs(t, Apply(nil), ErrBadCoreList)
	require.ErrorIs(t, Apply([]int{-1}), ErrBadCoreList)
	require.ErrorIs(t, Apply([]int{maxCPU}), ErrBadCoreList)
}
