package migrules

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestValidLayout(t *testing.T) {
	tests := []struct {
		name    string
		model   string
		layout  []string
		wantErr error
	}{
		{"whole GPU", A100_40GB, []string{"7g"}, nil},
		{"4g+3g", A100_40GB, []string{"3g", "4g"}, nil},
		{"3g+3g", H100_80GB, []string{"3g", "3g"}, nil},
		{"4g+2g+1g", A100_40GB, []string{"1g", "2g", "4g"}, nil},
		{"3g+2g+1g+1g", A100_80GB, []string{"1g", "3g", "1g", "2g"}, nil},
		{"3g+1g x4 needs backtracking", H100_80GB, []string{"3g", "1g", "1g", "1g", "1g"}, nil},
		{"2g x3 + 1g", H100_80GB, []string{"2g", "2g", "2g", "1g"}, nil},
		{"1g x7", A100_40GB, []string{"1g", "1g", "1g", "1g", "1g", "1g", "1g"}, nil},
		{"1g.20gb x4", H100_80GB, []string{"1g.20gb", "1g.20gb", "1g.20gb", "1g.20gb"}, nil},
		{"empty", H100_80GB, nil, nil},
		{"4g+4g", A100_40GB, []string{"4g", "4g"}, ErrInfeasible},
		{"7g+1g", H100_80GB, []string{"7g", "1g"}, ErrInfeasible},
		{"3g+3g+1g: slices fit, slots do not", H100_80GB, []string{"3g", "3g", "1g"}, ErrInfeasible},
		{"4g+3g+1g", A100_40GB, []string{"4g", "3g", "1g"}, ErrInfeasible},
		{"1g x8", A100_40GB, []string{"1g", "1g", "1g", "1g", "1g", "1g", "1g", "1g"}, ErrInfeasible},
		{"2g x4", H100_80GB, []string{"2g", "2g", "2g", "2g"}, ErrInfeasible},
		{"1g.20gb x5", H100_80GB, []string{"1g.20gb", "1g.20gb", "1g.20gb", "1g.20gb", "1g.20gb"}, ErrInfeasible},
		{"two +me", A100_40GB, []string{"1g.5gb+me", "1g.5gb+me"}, ErrInfeasible},
		{"unknown profile", A100_40GB, []string{"5g"}, ErrUnknownProfile},
		{"unknown model", "V100", []string{"1g"}, ErrUnknownModel},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidLayout(tt.model, tt.layout)
			if tt.wantErr == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tt.wantErr)
		})
	}
}

func TestPlacePositions(t *testing.T) {
	g, err := Lookup(H100_80GB)
	require.NoError(t, err)

	got, err := g.Place([]string{"1g", "3g", "1g", "1g", "1g"}, nil)
	require.NoError(t, err)
	// 3g can only sit at 4 when four 1g instances need slots 0..3.
	require.Equal(t, []Placement{
		{"1g.10gb", 0, 1}, {"3g.40gb", 4, 4}, {"1g.10gb", 1, 1}, {"1g.10gb", 2, 1}, {"1g.10gb", 3, 1},
	}, got)
	requireDisjoint(t, g, got)

	// Beside a fixed 4g at 0, a 3g must go to 4.
	got, err = g.Place([]string{"3g"}, []Placement{{"4g.40gb", 0, 4}})
	require.NoError(t, err)
	require.Equal(t, []Placement{{"3g.40gb", 4, 4}}, got)

	// Beside a fixed 3g at 4 there is no room for a 4g... except at 0.
	got, err = g.Place([]string{"4g"}, []Placement{{"3g.40gb", 4, 4}})
	require.NoError(t, err)
	require.Equal(t, 0, got[0].Start)

	// A fixed 2g at 2 blocks both 4g and 3g at 0.
	_, err = g.Place([]string{"4g"}, []Placement{{"2g.20gb", 2, 2}})
	require.ErrorIs(t, err, ErrInfeasible)
	got, err = g.Place([]string{"3g"}, []Placement{{"2g.20gb", 2, 2}})
	require.NoError(t, err)
	require.Equal(t, 4, got[0].Start)

	// The +me cap counts instances that already exist.
	_, err = g.Place([]string{"1g.10gb+me"}, []Placement{{"1g.10gb+me", 6, 1}})
	require.ErrorIs(t, err, ErrInfeasible)

	// Fixed instances that overlap are refused.
	_, err = g.Place(nil, []Placement{{"2g.20gb", 0, 2}, {"1g.10gb", 1, 1}})
	require.ErrorIs(t, err, ErrInfeasible)
}

// TestPlaceExhaustive checks every multiset of base profiles against a brute
// force over all start combinations: Place finds a layout exactly when one
// exists.
func TestPlaceExhaustive(t *testing.T) {
	g, err := Lookup(A100_40GB)
	require.NoError(t, err)
	var base []Profile
	for _, p := range g.Profiles {
		if p.Base {
			base = append(base, p)
		}
	}
	var rec func(from int, cur []Profile)
	checked := 0
	rec = func(from int, cur []Profile) {
		names := make([]string, len(cur))
		for i, p := range cur {
			names[i] = p.Name()
		}
		_, err := g.Place(names, nil)
		require.Equal(t, brute(g, cur, 0, 0), err == nil, "layout %v", names)
		checked++
		if len(cur) == 8 {
			return
		}
		for i := from; i < len(base); i++ {
			rec(i, append(cur, base[i]))
		}
	}
	rec(0, nil)
	require.Greater(t, checked, 100)
}

func brute(g GPU, ps []Profile, k int, used uint64) bool {
	if k == len(ps) {
		s := 0
		for _, p := range ps {
			s += p.Slices
		}
		return s <= g.ComputeSlices
	}
	for _, st := range ps[k].Starts {
		m := Placement{Start: st, Size: ps[k].Size}.Slots()
		if st+ps[k].Size > g.MemorySlots || used&m != 0 {
			continue
		}
		if brute(g, ps, k+1, used|m) {
			return true
		}
	}
	return false
}

func requireDisjoint(t *testing.T, g GPU, ps []Placement) {
	t.Helper()
	var used uint64
	for _, p := range ps {
		m := p.Slots()
		require.Zero(t, used&m, "%v overlaps", p)
		require.LessOrEqual(t, p.Start+p.Size, g.MemorySlots)
		used |= m
	}
}

func BenchmarkPlace(b *testing.B) {
	g, err := Lookup(H100_80GB)
	require.NoError(b, err)
	want := []string{"1g", "1g", "2g", "1g", "1g", "1g"}
	for b.Loop() {
		if _, err := g.Place(want, nil); err != nil {
			b.Fatal(err)
		}
	}
}
